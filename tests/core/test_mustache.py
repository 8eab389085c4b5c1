"""The Mustache renderer used for prompt templates (no HTML escaping, mustache.js semantics)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docs_mcp_core.errors import MustacheError
from docs_mcp_core.mustache import MAX_SECTION_DEPTH, _scan, _widen_standalone, parse, render  # pyright: ignore[reportPrivateUsage]
from tests.support.cpu_time import best_cpu_seconds


@pytest.mark.parametrize(
    ("template", "view", "expected"),
    [
        ("Hello {{name}}!", {"name": "Ada"}, "Hello Ada!"),
        ("{{ name }}", {"name": "spaced"}, "spaced"),
        # escaping is disabled for every variable form
        (
            "{{v}}|{{{v}}}|{{& v}}|{{&v}}",
            {"v": "<b>&\"'</b>"},
            "<b>&\"'</b>|<b>&\"'</b>|<b>&\"'</b>|<b>&\"'</b>",
        ),
        ("[{{missing}}]", {}, "[]"),
        ("[{{none}}]", {"none": None}, "[]"),
        ("{{a.b.c}}", {"a": {"b": {"c": "deep"}}}, "deep"),
        ("[{{a.x}}]", {"a": {"b": 1}}, "[]"),
        ("{{items.1}}", {"items": ["zero", "one"]}, "one"),
        (
            "{{n}} {{f}} {{g}} {{t}} {{u}}",
            {"n": 3, "f": 2.0, "g": 2.5, "t": True, "u": False},
            "3 2 2.5 true false",
        ),
        ("{{list}}", {"list": ["a", "b"]}, "a,b"),
        ("a{{! a comment }}b", {}, "ab"),
        ("a{{!\nmulti-line\ncomment}}b", {}, "ab"),
        ("a{{> partial}}b", {"partial": "ignored"}, "ab"),
        ("{{=<% %>=}}<% name %> {{name}}", {"name": "x"}, "x {{name}}"),
        ("{{=<% %>=}}<%={{ }}=%>{{name}}", {"name": "back"}, "back"),
        ("no tags at all", {}, "no tags at all"),
        ("", {}, ""),
        ("{{}}", {}, ""),
    ],
)
def test_variables(template: str, view: dict[str, Any], expected: str) -> None:
    assert render(template, view) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, "[yes]"),
        ("text", "[yes]"),
        (1, "[yes]"),
        ({}, "[yes]"),  # objects are truthy in JavaScript, even empty ones
        (False, "[]"),
        (None, "[]"),
        ("", "[]"),
        (0, "[]"),
        ([], "[]"),
    ],
)
def test_section_truthiness(value: Any, expected: str) -> None:
    assert render("[{{#v}}yes{{/v}}]", {"v": value}) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(False, "[no]"), (None, "[no]"), ("", "[no]"), (0, "[no]"), ([], "[no]"), ("x", "[]"), (["a"], "[]")],
)
def test_inverted_sections(value: Any, expected: str) -> None:
    assert render("[{{^v}}no{{/v}}]", {"v": value}) == expected


def test_inverted_section_for_missing_name() -> None:
    assert render("{{^absent}}fallback{{/absent}}", {}) == "fallback"


def test_list_sections_iterate_and_push_each_item() -> None:
    view = {"people": [{"name": "Ada"}, {"name": "Grace"}], "sep": ";"}
    assert render("{{#people}}{{name}}{{sep}}{{/people}}", view) == "Ada;Grace;"
    assert render("{{#xs}}<{{.}}>{{/xs}}", {"xs": ["a", "b", "c"]}) == "<a><b><c>"


def test_mapping_section_pushes_context_and_falls_back_to_parents() -> None:
    view = {"user": {"name": "Ada"}, "greeting": "Hi"}
    assert render("{{#user}}{{greeting}} {{name}}{{/user}}", view) == "Hi Ada"


def test_string_section_exposes_the_value_as_dot() -> None:
    assert (
        render("{{#framework}} built with {{.}}{{/framework}}", {"framework": "Flask"}) == " built with Flask"
    )
    assert render("{{#framework}} built with {{framework}}{{/framework}}", {"framework": ""}) == ""


def test_nested_sections_with_the_same_name_close_correctly() -> None:
    view = {"a": {"a": "inner"}}
    assert render("{{#a}}{{#a}}{{a}}{{/a}}{{/a}}", view) == "inner"


def test_standalone_tags_remove_their_whole_line() -> None:
    template = "Start\n{{#items}}\n  - {{.}}\n{{/items}}\n{{! note }}\nEnd\n"
    assert render(template, {"items": ["a", "b"]}) == "Start\n  - a\n  - b\nEnd\n"


def test_standalone_detection_handles_indentation_crlf_and_end_of_input() -> None:
    assert render("x\r\n   {{#on}}\r\ny\r\n  {{/on}}  \r\nz", {"on": True}) == "x\r\ny\r\nz"
    assert render("x\n{{#on}}\ny\n{{/on}}", {"on": True}) == "x\ny\n"


def test_tags_sharing_a_line_with_text_are_not_standalone() -> None:
    assert render("a {{#on}}b{{/on}} c\n", {"on": True}) == "a b c\n"
    assert render("{{#on}}\nin\n{{/on}} tail", {"on": True}) == "in\n tail"


def test_variable_tags_alone_on_a_line_keep_the_line() -> None:
    assert render("a\n{{v}}\nb", {"v": ""}) == "a\n\nb"


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{{#a}}never closed", "Unclosed section 'a' at line 1"),
        ("line one\n{{/a}}", "Unopened section 'a' at line 2"),
        ("{{#a}}\n{{/b}}", "Unclosed section 'a' (line 1): found '{{/b}}' at line 2"),
        ("text {{name", "Unclosed tag '{{' at line 1"),
        ("{{{name}}", "Unclosed tag '{{' at line 1"),
        ("{{=<% %> %>=}}", "Invalid delimiter change"),
    ],
)
def test_malformed_templates_raise_with_a_line(template: str, message: str) -> None:
    with pytest.raises(MustacheError) as info:
        render(template, {})
    assert message in str(info.value)


def test_parse_validates_without_rendering() -> None:
    parse("{{#ok}}fine{{/ok}}")
    with pytest.raises(MustacheError):
        parse("{{^broken}}")


def test_mustache_error_is_a_value_error() -> None:
    assert issubclass(MustacheError, ValueError)


def test_sections_nested_deeper_than_rendering_can_follow_are_refused_at_their_line() -> None:
    # 3,000 nested sections passed validate and build; every prompts/get of them then failed with
    # "maximum recursion depth exceeded"
    deepest = "{{#a}}" * MAX_SECTION_DEPTH + "x" + "{{/a}}" * MAX_SECTION_DEPTH
    assert render(deepest, {"a": True}) == "x"
    too_deep = "{{#a}}\n" * 3_000 + "x\n" + "{{/a}}\n" * 3_000
    with pytest.raises(MustacheError) as info:
        parse(too_deep)
    assert str(info.value) == "Section 'a' at line 101 is nested 101 sections deep; at most 100 are allowed"


# ── time linear in the template ──────────────────────────────────────────────────────────────────


def _old_widen_standalone(template: str, start: int, end: int) -> tuple[int, int]:
    """The rule as first written (it sliced the rest of the tag's line: quadratic on one line)."""
    line_start = template.rfind("\n", 0, start) + 1
    newline = template.find("\n", end)
    line_end = len(template) if newline < 0 else newline + 1
    if template[line_start:start].strip(" \t") or template[end:line_end].strip(" \t\r\n"):
        return start, end
    return line_start, line_end


_PIECES = ["{{#a}}", "{{/a}}", "{{^b}}", "{{/b}}", "{{! c }}", "{{> p}}", "{{x}}", " ", "\t", "\r", "\n", "y"]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(_PIECES), max_size=16).map("".join))
def test_standalone_tags_are_found_as_the_first_rule_found_them(template: str) -> None:
    for tag in _scan(template):
        if tag.kind in "#^/!>=":
            expected = _old_widen_standalone(template, tag.start, tag.end)
            _widen_standalone(template, tag)
            assert (tag.start, tag.end) == expected, template


def _parse_seconds(template: str) -> float:
    return best_cpu_seconds(lambda: parse(template))


@pytest.mark.integration  # timed: out of the fast loop
@pytest.mark.parametrize("unit", ["{{a}}", "{{#a}}x{{/a}}", "{{! c }}", "{{#a}}\n{{/a}}\n", "{{x}}\n"])
def test_parsing_takes_time_linear_in_the_template(unit: str) -> None:
    # each tag counted the lines before it and sliced the rest of its line: a template of 200,000
    # tags on one line took validate 34 s (variables) and 93 s (sections), a build 255 s
    small, large = unit * 12_500, unit * 100_000
    ratio = _parse_seconds(large) / _parse_seconds(small)
    assert ratio < 14.0, f"{unit!r}: 8x the template took {ratio:.1f}x the time"
    assert len(_scan(large)) >= 100_000
