"""The playground in a real browser: it marks what the search matched, and folds identical cards.

The marks come from the server's spans (``POST /api/highlight``); these tests read them back from
the DOM, with the text on either side of each ``<mark>``, and check them against what the search
looked up: whole tokens by their stems, identifier parts, no stop words, no fragments of other words.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.playground import PASSWORD, TOKEN, OpenPage, PlaygroundServer

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.slow, pytest.mark.integration]
expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed").expect

QUESTION = "how do I retry failed requests in the python sdk"
STOP_WORDS = {"how", "do", "i", "in", "the"}
PYTHON_RETRIES = "sdks/python/README.md#tidewater/retries"

# Each <mark> below `selector` with the character before it and the one after it (in its text).
MARKS_IN_CONTEXT = """(selector) => [...document.querySelectorAll(selector + ' mark')].map((mark) => {
    const before = mark.previousSibling ? mark.previousSibling.textContent : '';
    const after = mark.nextSibling ? mark.nextSibling.textContent : '';
    return [before.slice(-1), mark.textContent, after.slice(0, 1)];
})"""


def search(page: Page, query: str) -> None:
    page.fill("#q", query)
    page.press("#q", "Enter")
    expect(page.locator("#summary")).to_contain_text(f"“{query}”")


def marks(page: Page, selector: str) -> list[tuple[str, str, str]]:
    return [tuple(m) for m in page.evaluate(MARKS_IN_CONTEXT, selector)]  # type: ignore[misc]


def whole_token_or_identifier_part(before: str, text: str, after: str) -> bool:
    """A mark starts at a word boundary or a camel-case hump, and ends at one."""
    starts = not before.isalnum() or (before.islower() and text[0].isupper())
    ends = not after.isalnum() or after.isupper()
    return starts and ends


def test_only_what_the_search_matched_is_marked(
    open_page: OpenPage, open_server: PlaygroundServer, artifacts: Path
) -> None:
    page = open_page(open_server)
    with page.expect_response(lambda r: r.url.endswith("/api/highlight")) as spans:
        search(page, QUESTION)
    assert spans.value.ok
    expect(page.locator("#results .hit").first).to_be_visible()
    in_cards = marks(page, "#results")
    assert in_cards, "the cards mark what matched"
    words = {text.lower() for _, text, _ in in_cards}
    assert not words & STOP_WORDS, words
    assert {"retries", "retried", "requests"} <= words, "a stem marks its inflections"
    bad = [m for m in in_cards if not whole_token_or_identifier_part(*m)]
    assert not bad, bad
    page.screenshot(path=str(artifacts / "23-highlight-cards.png"))

    page.locator(f"#results .hit[data-chunk-id='{PYTHON_RETRIES}']").click()
    target = page.locator("#doc-body .chunk.target")
    expect(target).to_have_attribute("data-chunk-id", PYTHON_RETRIES)
    in_doc = marks(page, "#doc-body .chunk.target")
    doc_words = [text for _, text, _ in in_doc]
    assert "Retries" in doc_words and "retried" in doc_words
    # RetryConfig: its part "Retry" is marked (the ranking searches identifiers by their parts)
    assert any(text == "Retry" and after == "C" for _, text, after in in_doc), in_doc
    assert not {w.lower() for w in doc_words} & STOP_WORDS
    bad = [m for m in in_doc if not whole_token_or_identifier_part(*m)]
    assert not bad, bad
    # the words the old page marked inside others are there, unmarked
    text = target.inner_text()
    assert "single" in text and "in total" in text
    assert not any("single" in word.lower() for word in doc_words)
    page.screenshot(path=str(artifacts / "24-highlight-doc.png"))


def tool_hits(page: Page, query: str) -> list[dict[str, Any]]:
    """The hits search_docs answers ``query`` with, asked over MCP by a second client in the page."""
    return page.evaluate(
        """async (query) => {
            const { McpClient } = await import('/static/mcp-client.js');
            const client = new McpClient(new URL('/mcp', location.href).href);
            const result = await client.callTool('search_docs', { query });
            client.close();
            return JSON.parse(result.content[0].text).hits;
        }""",
        query,
    )


def test_identical_cards_are_folded_under_the_first_and_stay_openable(
    open_page: OpenPage, open_server: PlaygroundServer, artifacts: Path
) -> None:
    page = open_page(open_server)
    hits = tool_hits(page, "operations")
    search(page, "operations")
    expect(page.locator("#results .hit").first).to_be_visible()
    groups: dict[tuple[str, str], list[str]] = {}
    for hit in hits:
        groups.setdefault((hit["heading"], hit["snippet"]), []).append(hit["chunk_id"])
    folded = {ids[0]: ids[1:] for ids in groups.values() if len(ids) > 1}
    assert folded, "this query answers with cards of identical text (the three Go list sections)"

    # one card per distinct text, in ranked order; the others named under it, in ranked order too
    cards = page.locator("#results .hit")
    assert cards.evaluate_all("els => els.map(e => e.dataset.chunkId)") == [ids[0] for ids in groups.values()]
    positions = page.eval_on_selector_all(
        "#results .hit, #results .fold-hit", "els => els.map(e => Number(e.dataset.position))"
    )
    assert sorted(positions) == list(range(1, len(hits) + 1))
    for leader, followers in folded.items():
        card = page.locator("#results > li").filter(has=page.locator(f".hit[data-chunk-id='{leader}']"))
        buttons = card.locator(".fold-hit")
        assert buttons.evaluate_all("els => els.map(e => e.dataset.chunkId)") == followers
    leader, followers = next(iter(folded.items()))
    fold = page.locator("#results > li").filter(has=page.locator(f".hit[data-chunk-id='{leader}']"))
    expect(fold.locator(".fold")).to_have_text("Same text in: refunds, payments")
    page.screenshot(path=str(artifacts / "25-fold.png"))

    # each folded result opens, by mouse and by keyboard, and the document says which it is
    first_folded = fold.locator(".fold-hit").first
    first_folded.click()
    expect(page.locator("#doc-id")).to_have_text(followers[0])
    expect(page.locator("#doc-body .chunk.target")).to_have_attribute("data-chunk-id", followers[0])
    expect(first_folded).to_have_attribute("aria-current", "true")
    page.keyboard.press("Escape")
    expect(page.locator("#doc")).to_be_hidden()
    expect(first_folded).to_be_focused()
    fold.locator(".hit").focus()
    page.keyboard.press("ArrowDown")
    expect(first_folded).to_be_focused()
    page.keyboard.press("ArrowDown")
    second = fold.locator(".fold-hit").nth(1)
    expect(second).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#doc-id")).to_have_text(followers[1])
    expect(page.locator("#doc-body .chunk.target")).to_have_attribute("data-chunk-id", followers[1])
    page.screenshot(path=str(artifacts / "26-fold-open.png"))


def test_marks_come_with_the_credentials_the_page_searches_with(
    open_page: OpenPage, protected_server: PlaygroundServer, token_server: PlaygroundServer
) -> None:
    # behind a password: the login cookie
    page = open_page(protected_server, ready=False)
    page.goto(protected_server.url)
    page.fill("#password", PASSWORD)
    page.click("#login-form button[type='submit']")
    page.wait_for_selector("body[data-ready='true']", state="attached")
    with page.expect_response(lambda r: r.url.endswith("/api/highlight")) as spans:
        search(page, "refund")
    assert spans.value.status == 200
    expect(page.locator("#results .hit-snippet mark").first).to_be_visible()

    # a stateless server behind a token: the token the page asked for
    page = open_page(token_server, ready=False)
    page.goto(token_server.url)
    page.fill("#token-input", TOKEN)
    page.click("#token-form button[type='submit']")
    page.wait_for_selector("body[data-ready='true']", state="attached")
    with page.expect_response(lambda r: r.url.endswith("/api/highlight")) as spans:
        search(page, "refund")
    assert spans.value.status == 200
    expect(page.locator("#results .hit-snippet mark").first).to_be_visible()
