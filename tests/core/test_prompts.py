"""Prompt templates: discovery, parsing, validation messages, rendering; and the example corpus."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from docs_mcp_core.corpus_walk import walk_corpus
from docs_mcp_core.errors import InvalidPrompt, PromptTemplateError
from docs_mcp_core.prompts import (
    PromptArgument,
    PromptDefinition,
    choose_prompt_templates,
    discover_prompt_templates,
    is_prompt_template,
    load_prompt_templates,
    parse_prompt_markdown,
    parse_prompt_yaml,
    prompt_from_mapping,
    render_prompt,
)


def write(root: Path, rel: str, text: str = "Body.") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def templates_of(docs_dir: Path) -> list[str]:
    """The prompt templates a walk of ``docs_dir`` finds (what validate and build hand over)."""
    return walk_corpus(docs_dir).templates


def error_of(fn: Callable[..., object], *args: object, **kwargs: object) -> str:
    with pytest.raises(PromptTemplateError) as info:
        fn(*args, **kwargs)
    return str(info.value)


# ------------------------------------------------------------------------------------------------
# is_prompt_template / discovery


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("guides/a.template.md", True),
        ("a.template.yaml", True),
        ("a.template.yml", False),
        ("a.md", False),
        ("template.md", False),
        ("a.template.md.bak", False),
    ],
)
def test_is_prompt_template(path: str, expected: bool) -> None:
    assert is_prompt_template(path) is expected


def test_discovery_finds_both_formats_skips_dot_paths_and_yml(tmp_path: Path) -> None:
    write(tmp_path, "zeta.template.md")
    write(tmp_path, "guides/alpha.template.yaml")
    write(tmp_path, "x/y/deep.template.md")
    write(tmp_path, "ignored.template.yml")
    write(tmp_path, ".hidden/secret.template.md")
    write(tmp_path, "guides/.dotfile.template.md")
    write(tmp_path, "guides/plain.md")
    (tmp_path / "dir.template.md").mkdir()

    files, warnings = discover_prompt_templates(tmp_path, templates_of(tmp_path))

    assert [(f.name, f.path, f.format) for f in files] == [
        ("guides/alpha", "guides/alpha.template.yaml", "yaml"),
        ("x/y/deep", "x/y/deep.template.md", "md"),
        ("zeta", "zeta.template.md", "md"),
    ]
    assert warnings == []


def test_markdown_and_yaml_with_the_same_name_prefer_yaml_with_a_warning(tmp_path: Path) -> None:
    write(tmp_path, "guides/auth.template.md")
    write(tmp_path, "guides/auth.template.yaml")

    files, warnings = discover_prompt_templates(tmp_path, templates_of(tmp_path))

    assert [(f.name, f.path) for f in files] == [("guides/auth", "guides/auth.template.yaml")]
    assert warnings == [
        "Found both markdown and yaml templates for 'guides/auth' "
        "(guides/auth.template.md and guides/auth.template.yaml); using yaml"
    ]


def test_conflict_warning_does_not_depend_on_input_order() -> None:
    forward = choose_prompt_templates(["p.template.md", "p.template.yaml"])
    backward = choose_prompt_templates(["p.template.yaml", "p.template.md"])
    assert forward == backward
    assert forward[0][0].format == "yaml"


def test_duplicate_template_with_the_same_format_is_an_error() -> None:
    message = error_of(choose_prompt_templates, ["a/b.template.md", "a/b.template.md"])
    assert (
        message
        == "Duplicate prompt template 'a/b' with the same format at 'a/b.template.md' and 'a/b.template.md'"
    )


def test_chosen_templates_are_sorted_by_name_case_insensitively() -> None:
    files, _ = choose_prompt_templates(["b.template.md", "A.template.md", "a2.template.yaml"])
    assert [f.name for f in files] == ["A", "a2", "b"]


# ------------------------------------------------------------------------------------------------
# markdown templates

FULL_MD = """---
title: Currency Conversion
description: Convert money between currencies
arguments:
  - name: currency
    title: Currency
    description: The target currency
    required: true
  - name: amount
---

Convert {{amount}} USD to {{currency}}.

"""


def test_markdown_template_front_matter_and_body() -> None:
    prompt = parse_prompt_markdown(FULL_MD, name="guides/convert", source="guides/convert.template.md")

    assert prompt.name == "guides/convert"
    assert prompt.title == "Currency Conversion"
    assert prompt.description == "Convert money between currencies"
    assert prompt.arguments == [
        PromptArgument(name="currency", title="Currency", description="The target currency", required=True),
        PromptArgument(name="amount"),
    ]
    assert [m.to_dict() for m in prompt.messages] == [
        {"role": "user", "content": {"type": "text", "text": "Convert {{amount}} USD to {{currency}}."}}
    ]
    assert prompt.to_dict() == {
        "name": "guides/convert",
        "title": "Currency Conversion",
        "description": "Convert money between currencies",
        "arguments": [
            {"name": "currency", "title": "Currency", "description": "The target currency", "required": True},
            {"name": "amount"},
        ],
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Convert {{amount}} USD to {{currency}}."}}
        ],
    }


def test_markdown_template_without_front_matter() -> None:
    prompt = parse_prompt_markdown("  Convert 100 USD to {{currency}}.\n", name="p", source="p.template.md")
    assert prompt.arguments == []
    assert prompt.title is None
    assert prompt.messages[0].content.text == "Convert 100 USD to {{currency}}."
    assert prompt.to_dict() == {
        "name": "p",
        "arguments": [],
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Convert 100 USD to {{currency}}."}}
        ],
    }


def test_markdown_template_with_crlf_bom_and_empty_front_matter() -> None:
    text = "\ufeff---\r\n---\r\nHello {{who}}\r\n"
    prompt = parse_prompt_markdown(text, name="p", source="p.template.md")
    assert prompt.messages[0].content.text == "Hello {{who}}"


def test_unterminated_front_matter_is_part_of_the_body() -> None:
    text = "---\ntitle: never closed\nBody"
    prompt = parse_prompt_markdown(text, name="p", source="p.template.md")
    assert prompt.title is None
    assert prompt.messages[0].content.text == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "---\narguments:\n  - name: currency\n---\n\n",
            "p.template.md: prompt template body must be a non-empty string",
        ),
        ("---\n- a\n- b\n---\nBody", "p.template.md: prompt frontmatter must be an object"),
        (
            "---\ntitle: T\narguments:\n  - required: true\n---\nUse {{currency}}.",
            "p.template.md:4: arguments[0].name must be a non-empty string",
        ),
        (
            "---\narguments:\n  - name: a\n  - name: b\n    required: yes please\n---\nBody",
            "p.template.md:5: arguments[1].required must be a boolean (true or false)",
        ),
        ("---\ntitle: '   '\n---\nBody", "p.template.md:2: title must be a non-empty string"),
        ("---\ndescription: 42\n---\nBody", "p.template.md:2: description must be a non-empty string"),
        (
            "---\narguments: currency\n---\nBody",
            "p.template.md:2: arguments must be a list of {name, title?, description?, required?}",
        ),
        ("---\narguments:\n  - just-a-string\n---\nBody", "p.template.md:3: arguments[0] must be an object"),
        (
            "---\narguments:\n  - name: x\n  - name: x\n---\nBody",
            "p.template.md:4: arguments[1].name duplicates argument 'x'",
        ),
        (  # a lone surrogate passed validate and failed the build as "unexpectedly"
            '---\ntitle: ok\narguments:\n  - name: a\n    description: "x \\udc01"\n---\nBody',
            "p.template.md:5: arguments[0].description holds '\\udc01', half of a UTF-16 surrogate pair, "
            "which is not a character; write the character itself or remove it",
        ),
        (
            "Hello {{#who}} never closed",
            "p.template.md: invalid Mustache template: Unclosed section 'who' at line 1",
        ),
    ],
)
def test_markdown_template_errors_name_the_file_line_and_field(text: str, expected: str) -> None:
    assert error_of(parse_prompt_markdown, text, name="p", source="p.template.md") == expected


def test_yaml_syntax_error_in_front_matter_reports_the_file_line() -> None:
    text = "---\ntitle: ok\narguments: [unclosed\n---\nBody"
    message = error_of(parse_prompt_markdown, text, name="p", source="dir/p.template.md")
    assert re.match(r"^dir/p\.template\.md:\d+: invalid YAML: ", message), message
    line = int(message.split(":")[1])
    assert 3 <= line <= 5


def test_unknown_front_matter_keys_are_ignored() -> None:
    prompt = parse_prompt_markdown("---\nauthor: me\n---\nBody", name="p", source="p.template.md")
    assert prompt.to_dict() == {
        "name": "p",
        "arguments": [],
        "messages": [{"role": "user", "content": {"type": "text", "text": "Body"}}],
    }


# ------------------------------------------------------------------------------------------------
# yaml templates

MULTI_YAML = """title: Multi Message Prompt
arguments:
  - name: app_type
    required: true
messages:
  - role: user
    content:
      type: text
      text: |
        Build a plan for {{app_type}}.
  - role: assistant
    content:
      type: text
      text: I will produce phased guidance.
"""


def test_yaml_template_with_several_messages() -> None:
    prompt = parse_prompt_yaml(MULTI_YAML, name="plans/multi", source="plans/multi.template.yaml")
    assert prompt.name == "plans/multi"
    assert prompt.title == "Multi Message Prompt"
    assert prompt.arguments == [PromptArgument(name="app_type", required=True)]
    assert [(m.role, m.content.text) for m in prompt.messages] == [
        ("user", "Build a plan for {{app_type}}."),
        ("assistant", "I will produce phased guidance."),
    ]


def test_yaml_template_accepts_the_template_shorthand() -> None:
    prompt = parse_prompt_yaml("template: Say {{x}}\n", name="p", source="p.template.yaml")
    assert [m.to_dict() for m in prompt.messages] == [
        {"role": "user", "content": {"type": "text", "text": "Say {{x}}"}}
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- a\n- b\n", "p.template.yaml: prompt template yaml must be an object"),
        ("just a string\n", "p.template.yaml: prompt template yaml must be an object"),
        ("", "p.template.yaml: prompt template yaml must be an object"),
        ("title: T\n", "p.template.yaml: messages must include at least one message"),
        ("title: T\nmessages: []\n", "p.template.yaml:2: messages must include at least one message"),
        (
            "messages:\n  - role: system\n    content:\n      type: text\n      text: hi\n",
            "p.template.yaml:2: messages[0].role must be 'user' or 'assistant', got 'system'",
        ),
        (
            "messages:\n  - role: user\n    content:\n      type: image\n      text: hi\n",
            "p.template.yaml:4: messages[0].content.type must be 'text', got 'image'",
        ),
        (
            "messages:\n  - role: user\n    content:\n      type: text\n      text: '  '\n",
            "p.template.yaml:5: messages[0].content.text must be a non-empty string",
        ),
        (
            "messages:\n  - role: user\n    content: hello\n",
            "p.template.yaml:3: messages[0].content must be an object {type: text, text}",
        ),
        (
            "messages:\n  - role: user\n    content:\n      type: text\n      text: '{{/x}}'\n",
            "p.template.yaml:5: messages[0].content.text invalid Mustache template: Unopened section 'x' at line 1",
        ),
        (
            'title: T\ntemplate: "Hi \\ud800"\n',
            "p.template.yaml:2: template holds '\\ud800', half of a UTF-16 surrogate pair, "
            "which is not a character; write the character itself or remove it",
        ),
        (
            'title: T\n"k\\ud800": 1\ntemplate: Hi\n',
            "p.template.yaml: a key holds '\\ud800', half of a UTF-16 surrogate pair, "
            "which is not a character; write the character itself or remove it",
        ),
        (
            "template: a\nmessages:\n  - role: user\n    content: {type: text, text: b}\n",
            "p.template.yaml:1: template use either 'template' or 'messages', not both",
        ),
    ],
)
def test_yaml_template_errors(text: str, expected: str) -> None:
    assert error_of(parse_prompt_yaml, text, name="p", source="p.template.yaml") == expected


def test_yaml_syntax_error_reports_the_line() -> None:
    text = "title: T\nmessages:\n  - role: user\n   content: [\n"
    message = error_of(parse_prompt_yaml, text, name="p", source="p.template.yaml")
    assert re.match(r"^p\.template\.yaml:[3-5]: invalid YAML: ", message), message


def test_yaml_message_text_is_trimmed() -> None:
    text = "messages:\n  - role: user\n    content:\n      type: text\n      text: |\n        hi\n\n"
    assert parse_prompt_yaml(text, name="p", source="s").messages[0].content.text == "hi"


def test_prompt_from_mapping_requires_a_name_without_an_override() -> None:
    with pytest.raises(InvalidPrompt) as info:
        prompt_from_mapping({"messages": [{"role": "user", "content": {"type": "text", "text": "x"}}]})
    assert info.value.where == "name"
    assert info.value.problem == "must be a non-empty string"


# ------------------------------------------------------------------------------------------------
# load_prompt_templates


def test_load_prompt_templates_parses_every_chosen_file(tmp_path: Path) -> None:
    write(tmp_path, "guides/auth.template.md", "Markdown version")
    write(tmp_path, "guides/auth.template.yaml", MULTI_YAML)
    write(tmp_path, "one.template.md", FULL_MD)

    prompts, warnings = load_prompt_templates(tmp_path, templates_of(tmp_path))

    assert [p.name for p in prompts] == ["guides/auth", "one"]
    assert prompts[0].title == "Multi Message Prompt"
    assert len(warnings) == 1


def test_load_prompt_templates_reports_the_relative_path_of_a_bad_file(tmp_path: Path) -> None:
    write(tmp_path, "sub/bad.template.yaml", "title: no messages\n")
    message = error_of(load_prompt_templates, tmp_path, templates_of(tmp_path))
    assert message == "sub/bad.template.yaml: messages must include at least one message"


def test_load_prompt_templates_on_an_empty_folder(tmp_path: Path) -> None:
    assert load_prompt_templates(tmp_path, templates_of(tmp_path)) == ([], [])


# ------------------------------------------------------------------------------------------------
# rendering


def make_prompt() -> PromptDefinition:
    return parse_prompt_yaml(
        "arguments:\n"
        "  - name: currency\n    required: true\n"
        "  - name: note\n"
        "messages:\n"
        "  - role: user\n    content: {type: text, text: 'Convert to {{currency}}.{{#note}} Note: {{note}}{{/note}}'}\n"
        "  - role: assistant\n    content: {type: text, text: 'Converting to {{currency}} & {{missing}}done'}\n",
        name="convert",
        source="convert.template.yaml",
    )


def test_render_prompt_fills_arguments_without_escaping() -> None:
    prompt = make_prompt()
    messages = render_prompt(prompt, {"currency": "<EUR>", "note": "a & b"})
    assert [(m.role, m.content.text) for m in messages] == [
        ("user", "Convert to <EUR>. Note: a & b"),
        ("assistant", "Converting to <EUR> & done"),
    ]
    # the stored prompt keeps its template text
    assert prompt.messages[0].content.text.startswith("Convert to {{currency}}")


def test_render_prompt_optional_arguments_may_be_missing() -> None:
    messages = render_prompt(make_prompt(), {"currency": "EUR"})
    assert messages[0].content.text == "Convert to EUR."


@pytest.mark.parametrize("arguments", [{}, {"currency": ""}, {"currency": "   "}, {"note": "x"}])
def test_render_prompt_rejects_missing_or_blank_required_arguments(arguments: dict[str, str]) -> None:
    assert error_of(render_prompt, make_prompt(), arguments) == "Missing required prompt argument 'currency'"


def test_render_prompt_reports_a_malformed_template_from_metadata() -> None:
    prompt = prompt_from_mapping({"name": "broken", "template": "Hi {{#x}}"})  # metadata.json: not checked
    assert error_of(render_prompt, prompt, {}) == (
        "Prompt 'broken' has an invalid template: Unclosed section 'x' at line 1"
    )


def test_render_prompt_refuses_a_text_its_arguments_would_make_huge() -> None:
    # 20,000 {{a}} and a 100 KB argument rendered 2 GB in 15 s; one argument as large as a request
    # can carry (4 MiB over stdio) may still appear once
    repeating = parse_prompt_markdown("{{a}}" * 20_000, name="echo", source="echo.template.md")
    assert error_of(render_prompt, repeating, {"a": "z" * 100_000}) == (
        "Prompt 'echo' would be longer than 4,294,304 characters with these arguments (its template "
        "repeats them); pass shorter arguments"
    )
    once = parse_prompt_markdown("Explain: {{log}}", name="log", source="log.template.md")
    assert len(render_prompt(once, {"log": "y" * (4 << 20)})[0].content.text) == len("Explain: ") + (4 << 20)


def test_render_prompt_passes_undeclared_arguments_through() -> None:
    prompt = parse_prompt_markdown("{{extra}}", name="p", source="p.template.md")
    assert render_prompt(prompt, {"extra": "kept"})[0].content.text == "kept"


# ------------------------------------------------------------------------------------------------
# the example corpus (examples/docs): the features other tests and the README rely on


def _h2_sections(text: str) -> dict[str, str]:
    """Map each ``## `` heading to its section text (ignoring fenced code)."""
    sections: dict[str, str] = {}
    current: str | None = None
    in_fence = False
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            in_fence = not in_fence
        if not in_fence and line.startswith("## "):
            current = line[3:].strip()
            sections[current] = ""
        if current is not None:
            sections[current] += line
    return sections


def _front_matter(path: Path) -> dict[str, object]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), path
    return yaml.safe_load(text.split("---\n")[1])


def test_example_corpus_manifests(examples_docs: Path) -> None:
    root = json.loads((examples_docs / ".docs-mcp.json").read_text(encoding="utf-8"))
    assert root["version"] == "1"
    assert root["strategy"] == {"chunk_by": "h2"}
    assert root["metadata"] == {"scope": "global-guide"}
    assert root["taxonomy"] == {
        "language": {"vector_collapse": True},
        "scope": {"properties": {"global-guide": {"mcp_resource": True}}},
    }
    assert root["mcpServerInstructions"].strip()
    assert {"pattern": "guides/errors.md", "strategy": {"chunk_by": "h2", "max_chunk_size": 4000}} in root[
        "overrides"
    ]
    for language in ("typescript", "python", "go"):
        manifest = json.loads(
            (examples_docs / "sdks" / language / ".docs-mcp.json").read_text(encoding="utf-8")
        )
        assert manifest["version"] == "1"
        assert manifest["metadata"] == {"language": language, "scope": "sdk-specific"}
    ts = json.loads((examples_docs / "sdks/typescript/.docs-mcp.json").read_text(encoding="utf-8"))
    assert ts["overrides"] == [{"pattern": "docs/models/**", "strategy": {"chunk_by": "h3"}}]
    assert (examples_docs / "sdks/typescript/docs/models/components.md").is_file()


def test_example_corpus_size_and_file_count(examples_docs: Path) -> None:
    files = [p for p in examples_docs.rglob("*") if p.is_file()]
    markdown = [p for p in files if p.suffix == ".md" and not is_prompt_template(p.name)]
    assert 15 <= len(markdown) <= 25
    assert sum(p.stat().st_size for p in files) < 150_000


def test_example_corpus_front_matter_and_hint(examples_docs: Path) -> None:
    started = _front_matter(examples_docs / "guides/getting-started.md")
    assert started["title"] and started["mcp_metadata"] == {"topic": "onboarding"}
    environments = _front_matter(examples_docs / "guides/environments.md")
    assert environments["title"] and environments["mcp_chunking_hint"] == "file"
    auth = (examples_docs / "guides/authentication.md").read_text(encoding="utf-8")
    assert '<!-- mcp_chunking_hint: {"chunk_by": "h3"} -->' in auth


def test_example_corpus_oversized_sections(examples_docs: Path) -> None:
    sections = _h2_sections((examples_docs / "guides/errors.md").read_text(encoding="utf-8"))
    refined = sections["Handling errors by category"]
    assert 6000 <= len(refined.encode("utf-16-le")) // 2 <= 9000
    sub = re.split(r"(?m)^(?=### )", refined)
    assert len(sub) >= 4 and all(len(part) < 4000 for part in sub)
    flat = sections["Error code reference"]
    assert 4000 < len(flat) < 6000
    assert "\n### " not in flat and flat.count("| Code ") >= 2  # several blocks, no sub-headings


def test_example_corpus_duplicate_headings(examples_docs: Path) -> None:
    text = (examples_docs / "guides/pagination.md").read_text(encoding="utf-8")
    assert len(re.findall(r"(?m)^## Example$", text)) == 2
    assert len(re.findall(r"(?m)^# ", text)) == 1


def test_example_corpus_documents_every_method_in_every_language(examples_docs: Path) -> None:
    resources = {"payments": 5, "customers": 5, "refunds": 3}
    for resource, count in resources.items():
        heads: dict[str, list[str]] = {}
        for language in ("typescript", "python", "go"):
            text = (examples_docs / f"sdks/{language}/docs/sdks/{resource}/README.md").read_text(
                encoding="utf-8"
            )
            assert text.startswith(f"# {resource.capitalize()}\n")
            sections = _h2_sections(text)
            heads[language] = [h for h in sections if h != "Overview"]
            assert len(heads[language]) == count
            assert f"```{language}" in sections["create"]
        assert heads["typescript"] == heads["python"] == heads["go"]


def test_example_corpus_retry_configuration_for_python(examples_docs: Path) -> None:
    sections = _h2_sections((examples_docs / "sdks/python/README.md").read_text(encoding="utf-8"))
    assert "retry configuration" in sections["Retries"].lower()
    assert "RetryConfig" in sections["Retries"]


def test_example_corpus_prompt_templates_load(examples_docs: Path) -> None:
    prompts, warnings = load_prompt_templates(examples_docs, templates_of(examples_docs))
    assert warnings == []
    by_name = {p.name: p for p in prompts}
    assert set(by_name) == {"prompts/debug-webhook", "prompts/integrate-payments"}

    md = by_name["prompts/integrate-payments"]
    assert md.title and md.description
    assert [a.required for a in md.arguments].count(True) == 1
    text = render_prompt(md, {"language": "python", "framework": "Flask"})[0].content.text
    assert "my python application built with Flask" in text
    assert "that is captured immediately" in text
    with pytest.raises(PromptTemplateError):
        render_prompt(md, {"framework": "Flask"})

    yml = by_name["prompts/debug-webhook"]
    assert {m.role for m in yml.messages} == {"user", "assistant"}
    rendered = render_prompt(yml, {"event_type": "payment.failed", "status_code": "500"})
    assert "`payment.failed` webhooks to my endpoint are failing with HTTP 500." in rendered[0].content.text


_LAUGHS = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 7)
)


@pytest.mark.parametrize(
    ("parse", "text", "reason"),
    [
        # the error message's repr of a 9**7-value role (9**10 took minutes and gigabytes)
        (
            parse_prompt_yaml,
            _LAUGHS + "title: x\nmessages:\n  - role: *a6\n    content: {type: text, text: hi}\n",
            "YAML aliases (*name) expand it to more than",
        ),
        (
            parse_prompt_markdown,
            "---\ntitle: x\narguments: " + "[" * 5000 + "]" * 5000 + "\n---\nhi\n",
            "nested too deeply",
        ),
        (parse_prompt_yaml, "title: x\nmessages: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    ],
)
def test_templates_that_aliases_or_nesting_blow_up_are_refused(
    parse: Callable[..., object], text: str, reason: str
) -> None:
    with pytest.raises(PromptTemplateError, match="the template cannot be read: ") as info:
        parse(text, name="p", source="prompts/p.template")
    assert reason in str(info.value) and len(str(info.value)) < 300


def test_a_key_given_twice_is_an_error_at_its_line() -> None:
    text = "title: T\nmessages:\n  - role: user\n    content: {type: text, text: Hi}\ntitle: U\n"
    message = error_of(parse_prompt_yaml, text, name="p", source="p.template.yaml")
    assert message == (
        "p.template.yaml:5: invalid YAML: the key 'title' is given twice in one mapping (first at line 1); "
        "remove one of them"
    )
    text = "---\ndescription: a\ndescription: b\n---\nBody"
    message = error_of(parse_prompt_markdown, text, name="p", source="p.template.md")
    assert message.startswith("p.template.md:3: invalid YAML: the key 'description' is given twice")
