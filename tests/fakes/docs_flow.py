"""Scripted agents for the agent-eval tests, built on :mod:`tests.fakes.agent_script`.

:func:`docs_flow` plays what a good agent does with the docs server: search, read the best hit with
``get_doc``, write a file with what it read, report feedback, answer. Every later step uses what the
real server returned, so the run only passes if the tool results really reached the model.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tests.fakes.agent_script import Reply, Script, Step, ToolCallSpec, View, answer, first_hit

HEADER_PATTERN = re.compile(r"[`\"']([A-Z][A-Za-z]+-Signature)[`\"']")
FEEDBACK = {
    "confidence_score": 90,
    "docs_relevance": 80,
    "docs_utilization": 70,
    "reasoning": "The guide had it.",
}


def _get_doc(view: View) -> Reply:
    hit = first_hit(view)
    tool = view.tool("get_doc")
    if hit is None or tool is None:
        return Reply(text="The search found nothing.")
    return Reply(calls=[ToolCallSpec(tool, {"chunk_id": hit["chunk_id"]})])


def _found_header(view: View) -> str:
    doc = view.last("get_doc")
    match = HEADER_PATTERN.search(doc.text) if doc is not None else None
    return match.group(1) if match else "UNKNOWN"


def _write(view: View) -> Reply:
    header = _found_header(view)
    content = f'HEADER = "{header}"\n'
    return Reply(calls=[ToolCallSpec("write_file", {"path": "solution.py", "content": content})])


def _feedback(view: View) -> Reply:
    tool = view.tool("docs_feedback")
    if tool is None:
        return Reply(calls=[ToolCallSpec("list_files", {})])  # keeps the turn count the same
    return Reply(calls=[ToolCallSpec(tool, dict(FEEDBACK))])


def _answer(view: View) -> Reply:
    return Reply(text=f"Webhook signatures travel in the {_found_header(view)} header.")


def docs_flow(marker: str, on_first: Callable[[View], None] | None = None) -> Script:
    """search_docs -> get_doc(first hit) -> write_file(solution.py) -> docs_feedback -> answer (5 turns)."""

    def search(view: View) -> Reply:
        if on_first is not None:
            on_first(view)
        tool = view.tool("search_docs")
        if tool is None:
            return Reply(text="I have no documentation tools.")
        return Reply(calls=[ToolCallSpec(tool, {"query": "webhook signature header"})])

    return Script(marker, [search, _get_doc, _write, _feedback, _answer])


def docs_or_guess(marker: str, *, with_docs: str, without_docs: str) -> Script:
    """Answers ``with_docs`` after one search when the docs tools are there, else ``without_docs``."""

    def first(view: View) -> Reply:
        tool = view.tool("search_docs")
        if tool is None:
            return Reply(text=without_docs)
        return Reply(calls=[ToolCallSpec(tool, {"query": marker})])

    return Script(marker, [first, answer(with_docs)])


def busy_loop(marker: str) -> Script:
    """Lists files forever: only a turn or budget limit ends it."""
    step: Step = lambda view: Reply(calls=[ToolCallSpec("list_files", {})])  # noqa: E731
    return Script(marker, [step], repeat_last=True)
