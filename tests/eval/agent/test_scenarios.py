"""Scenario files in the original's format: anchors, ``_`` keys, ``_config``, the list format, and
errors that name the file, the scenario and the field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from docs_mcp_eval.agent.feedback import DEFAULT_FEEDBACK_TOOL
from docs_mcp_eval.agent.preparation import SUITES_DIR, load_named_suite, suite_file
from docs_mcp_eval.agent.scenarios import load_suite, parse_suite
from docs_mcp_eval.errors import ScenarioFileError


def write(tmp_path: Path, text: str, name: str = "suite.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_original_format_with_anchors_config_and_private_keys(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        _config:
          system_prompt: Prefer the Python SDK.
          feedback_tool:
            name: give_feedback
            description: Tell us about the docs.
            instruction: Call give_feedback when done.
            input_schema:
              type: object
              properties:
                rating: {type: integer, minimum: 1, maximum: 5}
                feedback: {type: string}
              required: [feedback]
            metrics:
              - {field: rating, label: Rating, direction: higher}
            reasoning_field: feedback
            headline_field: rating
        _defaults: &defaults
          description: &description Tidewater docs
          docsDir: docs
          category: sdk-usage
        ts-init:
          <<: *defaults
          name: Initialise the client
          prompt: >-
            Write solution.ts
            please.
          mcpServerName: tidewater-docs
          maxTurns: 7
          maxBudgetUsd: 0.5
          setup: npm init -y
          toolDescriptions: {search_docs: Search Tidewater}
          models: {anthropic: claude-haiku-4-5}
          links: {../shared.json: config/shared.json}
          assertions:
            - {type: file_contains, path: solution.ts, value: Tidewater}
            - {type: matches, pattern: "retry.?after", flags: i, soft: true}
            - {type: contains, value: 429}
            - type: script
              name: typecheck
              command: npx tsc --noEmit solution.ts
              when_env: RUN_TSC
        guide:
          name: A guide question
          prompt: How do retries work?
          description: *description
          assertions: [{type: not_contains, value: "I don't know"}]
        """,
    )
    suite = load_suite(path)
    assert suite.name == "suite"
    assert suite.system_prompt == "Prefer the Python SDK."
    assert suite.feedback_tool is not None and suite.feedback_tool.name == "give_feedback"
    assert [m.field for m in suite.feedback_tool.metrics] == ["rating"]
    assert suite.feedback_tool.headline_field == "rating"
    assert [s.id for s in suite.scenarios] == ["ts-init", "guide"]
    first, second = suite.scenarios
    assert first.prompt == "Write solution.ts please."
    assert first.docs_dir == (tmp_path / "docs").resolve()
    assert first.category == "sdk-usage"
    assert first.index_config.description == "Tidewater docs"
    assert dict(first.index_config.tool_descriptions) == {"search_docs": "Search Tidewater"}
    assert first.server_name == "tidewater-docs"
    assert (first.max_turns, first.max_budget_usd, first.setup) == (7, 0.5, "npm init -y")
    assert first.models == {"anthropic": "claude-haiku-4-5"}
    assert first.links == {"config/shared.json": (tmp_path.parent / "shared.json").resolve()}
    kinds = [(a.type, a.soft) for a in first.assertions]
    assert kinds == [("file_contains", False), ("matches", True), ("contains", False), ("script", False)]
    assert first.assertions[2].value == "429"  # a YAML number is compared as its text
    assert first.assertions[3].when_env == "RUN_TSC"
    assert second.docs_dir is None and second.server_name == "docs-mcp"
    assert second.index_config.description == "Tidewater docs"
    assert second.name == "A guide question"


def test_legacy_list_format_makes_ids_from_names(tmp_path: Path) -> None:
    suite = parse_suite(
        "- name: Create a Link!\n  prompt: go\n- id: custom\n  prompt: again\n",
        path=tmp_path / "x.yaml",
        name="x",
    )
    assert [s.id for s in suite.scenarios] == ["create-a-link", "custom"]
    assert suite.feedback_tool is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ok: 1\na: b: c\n", r"suite\.yaml:2: not valid YAML: mapping values are not allowed"),
        ("", "is empty"),
        ("- 1\n", r"scenario \[0\] must be a mapping"),
        ("_only: {prompt: x}\n", "defines no scenarios"),
        ("s:\n  name: x\n", r"suite\.yaml:1: scenario 's': 'prompt' is required"),
        ("s: {prompt: '  '}\n", "'prompt' must not be empty"),
        ("\n\ns:\n  prompt: p\n  maxTurns: 0\n", r":3: scenario 's': 'maxTurns' must be a positive integer"),
        ("s: {prompt: p, maxBudgetUsd: free}\n", "'maxBudgetUsd' must be a positive number"),
        ("s: {prompt: p, assertions: {type: contains}}\n", "'assertions' must be a list"),
        (
            "s: {prompt: p, assertions: [{type: equals, value: x}]}\n",
            r"assertions\[0\]: 'type' must be one of",
        ),
        ("s: {prompt: p, assertions: [{type: file_contains, value: x}]}\n", "needs a 'path' string"),
        ("s: {prompt: p, assertions: [{type: script, command: ls}]}\n", "needs a 'name' string"),
        ("s: {prompt: p, assertions: [{type: matches, pattern: '(a'}]}\n", "invalid regular expression"),
        (
            "s: {prompt: p, assertions: [{type: matches, pattern: a, flags: q}]}\n",
            "unknown regular-expression flag",
        ),
        (
            "s: {prompt: p, assertions: [{type: contains, value: a, soft: maybe}]}\n",
            "'soft' must be true or false",
        ),
        ("s: {prompt: p, mcpServerName: 'has space'}\n", "'mcpServerName' must be"),
        ("s: {prompt: p, docsSpec: {ref: main}}\n", "'docsSpec' must be a mapping with a 'url'"),
        ("s: {prompt: p, docsSpec: {url: u, docsPath: ../up}}\n", "docsPath' must be a folder inside"),
        ("_config: {feedback_tool: {name: f}}\ns: {prompt: p}\n", r"_config\.feedback_tool\.description"),
        ("_config: {system_prompt: [1]}\ns: {prompt: p}\n", r"_config\.system_prompt must be a string"),
    ],
)
def test_malformed_files_are_reported_with_file_scenario_and_field(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioFileError, match=expected) as caught:
        load_suite(path)
    assert str(path) in caught.value.message


def test_missing_file_and_unknown_suite(tmp_path: Path) -> None:
    with pytest.raises(ScenarioFileError, match="scenario file not found"):
        load_suite(tmp_path / "nope.yaml")
    (tmp_path / "one.yaml").write_text("a: {prompt: p}\n", encoding="utf-8")
    with pytest.raises(ScenarioFileError, match=r"no suite named 'two' .*\(available: one\).*--scenarios"):
        suite_file("two", tmp_path)
    assert suite_file("one", tmp_path) == tmp_path / "one.yaml"


def test_the_shipped_suite_reads_and_points_at_the_example_docs(examples_docs: Path) -> None:
    assert (SUITES_DIR / "examples-docs.yaml").is_file()
    suite = load_named_suite("examples-docs")
    assert suite.name == "examples-docs"
    assert len(suite.scenarios) >= 5
    assert {s.docs_dir for s in suite.scenarios} == {examples_docs.resolve()}
    for scenario in suite.scenarios:
        assert any(not a.soft for a in scenario.assertions), scenario.id
        assert scenario.category
    assert suite.feedback_tool is None  # the default docs_feedback tool
    assert DEFAULT_FEEDBACK_TOOL.name == "docs_feedback"


def test_a_scenario_file_too_large_or_not_utf8_is_one_error_naming_it(tmp_path: Path) -> None:
    # --scenarios /dev/zero was read until memory ran out
    huge = tmp_path / "dump.yaml"
    with huge.open("wb") as handle:
        handle.truncate((64 << 20) + 1)
    with pytest.raises(ScenarioFileError, match=r"^scenario file .*dump\.yaml is larger than 64 MiB"):
        load_suite(huge)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"- name: s\n  prompt: caf\xe9\n")
    with pytest.raises(
        ScenarioFileError, match=r"is not UTF-8 \(byte 0xe9 on line 2\); re-save it as UTF-8$"
    ):
        load_suite(latin)


def test_numbers_are_read_in_linear_time_or_refused_at_their_line(tmp_path: Path) -> None:
    # YAML 1.1's base-60 numbers took time growing with the square of their parts (100,000: 2 s),
    # and an integer of over 4,300 digits ended agent-eval with a traceback (ValueError)
    sixty = load_suite(write(tmp_path, "s:\n  prompt: 12:30\n  maxTurns: 3\n  maxBudgetUsd: 0.5\n"))
    assert (sixty.scenarios[0].prompt, sixty.scenarios[0].max_turns) == ("12:30", 3)
    assert sixty.scenarios[0].max_budget_usd == 0.5
    parts = ":".join(["1"] * 400_000)
    with pytest.raises(
        ScenarioFileError, match=r"suite\.yaml:1: scenario 's': 'maxTurns' must be a positive"
    ) as caught:
        load_suite(write(tmp_path, f"s: {{prompt: p, maxTurns: {parts}}}\n"))
    assert len(caught.value.message) < 400  # the value cut in its middle, not repeated whole
    path = write(tmp_path, "s:\n  prompt: p\n  maxTurns: " + "7" * 5_000 + "\n")
    with pytest.raises(ScenarioFileError, match=r"suite\.yaml:3: not valid YAML: a number of 5,000 digits"):
        load_suite(path)


_BOMB = "_a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"_{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)
)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            _BOMB + "s: {prompt: p, docsSpec: {url: u, docsConfig: {version: '1', x: *i}}}\n",
            "'docsSpec.docsConfig'",
        ),
        (
            _BOMB + "_config: {feedback_tool: {name: f, description: d, instruction: i, "
            "input_schema: {type: object, properties: {p: *i}}}}\ns: {prompt: p}\n",
            "_config.feedback_tool.input_schema",
        ),
        (
            "s: {prompt: p, docsSpec: {url: u, docsConfig: &c {version: '1', self: [*c]}}}\n",
            "'docsSpec.docsConfig'",
        ),
    ],
)
def test_a_value_sent_on_as_json_that_aliases_make_endless_is_refused(
    tmp_path: Path, text: str, where: str
) -> None:
    # nine lines of aliases made a manifest (or a feedback tool's schema) of 387 million values for
    # json.dumps to write when the scenario ran; an alias inside its own value an endless one
    with pytest.raises(ScenarioFileError, match="values once its YAML aliases") as caught:
        load_suite(write(tmp_path, text))
    assert where in caught.value.message
