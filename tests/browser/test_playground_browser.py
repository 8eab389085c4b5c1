"""The playground in a real browser: search, filters, paging, documents, hints, schemas, login.

Each step saves a screenshot under ``.artifacts/playground/``; the assertions are on the DOM. Every
page is also watched for requests to other hosts, script errors and CSP refusals (see conftest).
"""

from __future__ import annotations

import http.client
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from docs_mcp_core.search.analyzer import analyze
from tests.support.playground import PASSWORD, PHONE, TOKEN, OpenPage, PlaygroundServer

if TYPE_CHECKING:
    from playwright.sync_api import Page, Request

pytestmark = [pytest.mark.slow, pytest.mark.integration]
expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed").expect


def snap(page: Page, artifacts: Path, name: str, *, full_page: bool = False) -> None:
    page.screenshot(path=str(artifacts / f"{name}.png"), full_page=full_page)


def search(page: Page, query: str) -> None:
    page.fill("#q", query)
    page.press("#q", "Enter")
    expect(page.locator("#summary")).to_contain_text(f"“{query}”")


def hit_ids(page: Page) -> list[str]:
    return page.eval_on_selector_all("#results .hit", "els => els.map(e => e.dataset.chunkId)")


def post_mcp(server: PlaygroundServer, headers: dict[str, str]) -> int:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request(
            "POST",
            "/mcp",
            json.dumps(body),
            {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
        )
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_search_filter_and_more_results(
    open_page: OpenPage, open_server: PlaygroundServer, artifacts: Path
) -> None:
    page = open_page(open_server)
    expect(page.locator("#conn-status")).to_have_text("connected")
    # One control per taxonomy filter, from the search_docs schema's enums.
    assert page.eval_on_selector_all("#filters select", "els => els.map(e => e.name)") == [
        "scope",
        "topic",
        "language",
    ]
    assert page.eval_on_selector_all("#filter-language option", "els => els.map(e => e.value)") == [
        "",
        "go",
        "python",
        "typescript",
    ]
    snap(page, artifacts, "01-start")

    search(page, "refund")
    hits = page.locator("#results .hit")
    expect(hits.first).to_be_visible()
    marks = page.locator("#results .hit-snippet mark").all_inner_texts()
    # every mark is a word the index reads as the query's term ("Refunds", "refundable")
    assert marks and all(analyze(mark) == ["refund"] for mark in marks), marks
    assert page.locator("#results .hit .score").first.inner_text().startswith("score ")
    snap(page, artifacts, "02-search")

    page.select_option("#filter-language", "python")
    expect(page.locator("#summary")).to_contain_text("language=python")
    expect(hits).to_have_count(10)
    languages = page.locator("#results .chip[title='language']").all_inner_texts()
    assert languages and all(text.endswith("python") for text in languages), languages
    expect(page.locator("#more")).to_be_visible()
    assert "language=python" in page.evaluate("location.hash")
    snap(page, artifacts, "03-filter")

    first_page = hit_ids(page)
    page.click("#more")
    expect(page.locator("#more")).to_be_hidden()
    all_ids = hit_ids(page)
    assert len(all_ids) > 10 and all_ids[:10] == first_page
    assert len(set(all_ids)) == len(all_ids), "the cursor pages on, it does not repeat hits"
    snap(page, artifacts, "04-more-results")


def mcp_posts(page: Page) -> list[tuple[dict[str, str], dict[str, Any]]]:
    """Headers and JSON bodies of the page's ``POST /mcp`` requests, recorded from now on."""
    posts: list[tuple[dict[str, str], dict[str, Any]]] = []

    def record(request: Request) -> None:
        if request.method == "POST" and request.url.endswith("/mcp"):
            posts.append((request.headers, json.loads(request.post_data or "{}")))

    page.on("request", record)
    return posts


def test_speaks_streamable_http_like_an_agent(
    open_page: OpenPage, open_server: PlaygroundServer, token_server: PlaygroundServer
) -> None:
    page = open_page(open_server, ready=False)
    posts = mcp_posts(page)
    with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/mcp")) as first:
        page.goto(open_server.url)
    page.wait_for_selector("body[data-ready='true']", state="attached")
    search(page, "refund")
    session = first.value.headers.get("mcp-session-id")
    assert session, "a stateful server hands out a session on initialize"
    methods = [body.get("method") for _, body in posts]
    assert methods[:2] == ["initialize", "notifications/initialized"]
    assert {"tools/list", "prompts/list", "resources/list", "tools/call"} <= set(methods)
    for headers, body in posts:
        assert headers["accept"] == "application/json, text/event-stream"
        if body["method"] == "initialize":
            assert "mcp-session-id" not in headers and "mcp-protocol-version" not in headers
        else:
            assert headers["mcp-session-id"] == session
            assert headers["mcp-protocol-version"] == "2025-11-25"
    call = next(body for _, body in posts if body["method"] == "tools/call")
    assert call["params"] == {"name": "search_docs", "arguments": {"query": "refund"}}

    stateless = open_page(token_server, ready=False)
    stateless_posts = mcp_posts(stateless)
    stateless.goto(token_server.url)
    stateless.evaluate(f"sessionStorage.setItem('docs-mcp-playground-token', {json.dumps(TOKEN)})")
    stateless.reload()
    stateless.wait_for_selector("body[data-ready='true']", state="attached")
    sent = [headers for headers, _ in stateless_posts if headers.get("authorization") == f"Bearer {TOKEN}"]
    assert sent, "the token from the dialog goes with every request"
    assert all("mcp-session-id" not in headers for headers, _ in stateless_posts), "stateless: no session"


def test_keyboard_navigation(open_page: OpenPage, open_server: PlaygroundServer, artifacts: Path) -> None:
    page = open_page(open_server)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("/")
    expect(page.locator("#q")).to_be_focused()
    page.keyboard.type("retry backoff")
    page.keyboard.press("Enter")
    hits = page.locator("#results .hit")
    expect(hits.first).to_be_visible()
    page.keyboard.press("ArrowDown")
    expect(hits.nth(0)).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(hits.nth(1)).to_be_focused()
    page.keyboard.press("ArrowUp")
    expect(hits.nth(0)).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#doc")).to_be_visible()
    expect(page.locator("#doc-body .chunk.target")).to_have_count(1)
    snap(page, artifacts, "05-keyboard-open")
    page.keyboard.press("Escape")
    expect(page.locator("#doc")).to_be_hidden()
    expect(hits.nth(0)).to_be_focused()
    page.keyboard.press("ArrowUp")
    expect(page.locator("#q")).to_be_focused()


def test_open_a_hit_and_change_context(
    open_page: OpenPage, open_server: PlaygroundServer, artifacts: Path
) -> None:
    page = open_page(open_server)
    search(page, "retry backoff")
    first = page.locator("#results .hit").first
    chunk_id = first.get_attribute("data-chunk-id")
    assert chunk_id
    first.click()
    doc = page.locator("#doc")
    expect(doc).to_be_visible()
    target = page.locator("#doc-body .chunk.target")
    expect(target).to_have_count(1)
    assert target.get_attribute("data-chunk-id") == chunk_id
    expect(page.locator("#doc-id")).to_have_text(chunk_id)
    expect(page.locator("#doc-body .chunk.context")).to_have_count(0)
    # Rendered as markdown: headings and paragraphs, no raw markup left over.
    assert target.locator(".markdown h1, .markdown h2, .markdown h3").count() >= 1
    assert target.locator(".markdown p").count() >= 1
    assert "##" not in target.inner_text()
    assert target.locator("mark").count() >= 1, "query terms are marked in the target chunk"
    snap(page, artifacts, "06-doc")

    page.select_option("#doc-context", "2")
    context = page.locator("#doc-body .chunk.context")
    expect(context.first).to_be_visible()
    roles = context.evaluate_all("els => els.map(e => e.dataset.role)")
    assert 1 <= len(roles) <= 4
    assert all(re.fullmatch(r"Context: [+-][12]", role) for role in roles), roles
    assert target.get_attribute("data-chunk-id") == chunk_id
    expect(page.locator("#doc-body .chunk")).to_have_count(len(roles) + 1)
    snap(page, artifacts, "07-doc-context")

    page.click("#doc-close")
    expect(doc).to_be_hidden()


def test_zero_results_hint_buttons(
    open_page: OpenPage, open_server: PlaygroundServer, artifacts: Path
) -> None:
    page = open_page(open_server)
    page.fill("#q", "webhook signature")
    page.select_option("#filter-language", "go")
    page.select_option("#filter-scope", "global-guide")
    hint = page.locator("#hint")
    expect(hint).to_be_visible()
    expect(page.locator("#summary")).to_contain_text("scope=global-guide")
    expect(page.locator("#results .hit")).to_have_count(0)
    expect(page.locator("#hint-message")).to_contain_text("0 results found")
    suggestion = page.locator(".suggestion[data-key='scope'][data-value='sdk-specific']")
    expect(suggestion).to_have_text("scope = sdk-specific")
    snap(page, artifacts, "08-hint")

    suggestion.click()
    expect(page.locator("#filter-scope")).to_have_value("sdk-specific")
    expect(page.locator("#results .hit").first).to_be_visible()
    expect(hint).to_be_hidden()
    assert page.locator("#filter-language").input_value() == "go"
    snap(page, artifacts, "09-hint-followed")


def test_server_text_is_never_markup(
    open_page: OpenPage, open_server: PlaygroundServer, artifacts: Path
) -> None:
    page = open_page(open_server)
    nasty = '<img src=x onerror="window.__pwned=1"> <b>bold</b>'
    search(page, nasty)
    expect(page.locator("#summary")).to_contain_text("<img src=x")
    assert page.locator("#panel-search img, #panel-search b").count() == 0
    assert page.evaluate("window.__pwned") is None
    snap(page, artifacts, "10-escaping")

    rendered = page.evaluate(
        """async () => {
            const { renderMarkdown } = await import('/static/markdown.js');
            const box = document.createElement('div');
            box.append(renderMarkdown([
                '<script>window.__pwned = 2</script>',
                '',
                '<img src=x onerror="window.__pwned = 3">',
                '',
                '[bad](javascript:window.__pwned=4) [ok](https://example.com/x) [rel](./other.md)',
                '',
                '![pic](https://example.com/p.png)',
                '',
                '| a | b |',
                '|--:|:-:|',
                '| 1 | 2 |',
            ].join('\\n')));
            document.body.append(box);
            const result = {
                html: box.innerHTML,
                elements: box.querySelectorAll('img, script, [onerror], [style]').length,
                hrefs: [...box.querySelectorAll('a[href]')].map((a) => a.getAttribute('href')),
            };
            box.remove();
            return result;
        }"""
    )
    assert rendered["elements"] == 0
    assert rendered["hrefs"] == ["https://example.com/x", "https://example.com/p.png"]
    assert "&lt;script&gt;" in rendered["html"] and "&lt;img" in rendered["html"]
    assert 'class="align-right"' in rendered["html"]
    assert page.evaluate("window.__pwned") is None


def test_tools_prompts_resources_and_install(
    open_page: OpenPage, open_server: PlaygroundServer, artifacts: Path
) -> None:
    page = open_page(open_server)
    page.click("#tab-tools")
    search_card = page.locator("[data-tool='search_docs']")
    expect(search_card).to_be_visible()
    schema = json.loads(search_card.locator("pre.schema").first.inner_text())
    assert schema["properties"]["language"]["enum"] == ["go", "python", "typescript"]
    expect(page.locator("[data-tool='get_doc']")).to_be_visible()
    snap(page, artifacts, "11-tools")

    page.click("#tab-prompts")
    prompts = page.locator("#prompts-list [data-prompt]")
    expect(prompts).to_have_count(2)
    card = page.locator("[data-prompt='prompts/debug-webhook']")
    card.locator("summary").click()
    card.locator("input[name='event_type']").fill("payment.failed")
    card.locator("button[type='submit']").click()
    expect(card.locator(".prompt-message").first).to_contain_text("payment.failed")
    snap(page, artifacts, "12-prompts")

    page.click("#tab-resources")
    resources = page.locator("#resources-list .resource")
    expect(resources.first).to_be_visible()
    uri = resources.first.get_attribute("data-uri")
    assert uri and uri.startswith("docs:///guides/")
    resources.first.click()
    expect(page.locator("#resource-body h1").first).to_be_visible()
    assert "mcp_chunking_hint" not in page.locator("#resource-body").inner_text()
    snap(page, artifacts, "13-resources")

    page.click("#tab-connect")
    mcp_url = f"{open_server.origin}/mcp"
    expect(page.locator("#mcp-url")).to_have_text(mcp_url)

    def snippet(name: str) -> str:
        return page.locator(f"[data-snippet='{name}'] code").inner_text()

    assert snippet("claude-code-http") == f"claude mcp add --transport http docs-mcp-server {mcp_url}"
    assert (
        snippet("claude-code-stdio")
        == "claude mcp add docs-mcp-server -- docs-mcp-server --index-dir /path/to/index"
    )
    assert json.loads(snippet("cursor-http")) == {"mcpServers": {"docs-mcp-server": {"url": mcp_url}}}
    assert json.loads(snippet("vscode-http")) == {
        "servers": {"docs-mcp-server": {"type": "http", "url": mcp_url}}
    }
    desktop = json.loads(snippet("claude-desktop-http"))["mcpServers"]["docs-mcp-server"]
    assert desktop["command"] == "npx" and mcp_url in desktop["args"]
    for name in ("claude-desktop-stdio", "cursor-stdio"):
        stdio = json.loads(snippet(name))["mcpServers"]["docs-mcp-server"]
        assert stdio == {"command": "docs-mcp-server", "args": ["--index-dir", "/path/to/index"]}
    assert json.loads(snippet("vscode-stdio"))["servers"]["docs-mcp-server"]["type"] == "stdio"
    expect(page.locator("#auth-note")).to_be_hidden()

    expect(page.locator("#footer-build")).to_have_text("docs-mcp-server v0.1.0")
    expect(page.locator("#footer-index")).to_contain_text("chunks")
    expect(page.locator("#footer-index")).to_contain_text("files")
    expect(page.locator("#footer-protocol")).to_have_text("MCP 2025-11-25 · stateful session")
    snap(page, artifacts, "14-connect", full_page=True)


def test_phone_width(open_page: OpenPage, open_server: PlaygroundServer, artifacts: Path) -> None:
    page = open_page(open_server, viewport=PHONE)
    search(page, "retry backoff")
    expect(page.locator("#results .hit").first).to_be_visible()
    assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth"), "no sideways scrolling"
    snap(page, artifacts, "15-phone-search")

    page.locator("#results .hit").first.click()
    doc = page.locator("#doc")
    expect(page.locator("#doc-body .chunk.target")).to_have_count(1)
    box = doc.bounding_box()
    assert box is not None and box["x"] == 0 and box["width"] == PHONE["width"], (
        "the document opens full screen"
    )
    snap(page, artifacts, "16-phone-doc")
    page.keyboard.press("Escape")
    expect(doc).to_be_hidden()

    page.click("#tab-connect")
    expect(page.locator("[data-snippet='cursor-http']")).to_be_visible()
    assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
    snap(page, artifacts, "17-phone-connect")


def test_password_login(open_page: OpenPage, protected_server: PlaygroundServer, artifacts: Path) -> None:
    page = open_page(protected_server, ready=False)
    response = page.goto(protected_server.url)
    assert response is not None and response.status == 401
    expect(page.locator("#login-form")).to_be_visible()
    expect(page.locator("#login-error")).to_be_hidden()
    snap(page, artifacts, "18-login")

    page.fill("#password", "not the password")
    with page.expect_response(f"{protected_server.origin}/login") as wrong:
        page.click("#login-form button[type='submit']")
    assert wrong.value.status == 401
    expect(page.locator("#login-error")).to_have_text("Wrong password. Try again.")
    assert page.locator("#conn-status").count() == 0, "no playground without the password"
    snap(page, artifacts, "19-login-wrong")

    page.fill("#password", PASSWORD)
    page.click("#login-form button[type='submit']")
    page.wait_for_selector("body[data-ready='true']", state="attached")
    expect(page.locator("#conn-status")).to_have_text("connected")
    search(page, "refund")
    expect(page.locator("#results .hit").first).to_be_visible()
    cookies = page.context.cookies()
    assert [c.get("name") for c in cookies] == ["docs_mcp_playground"]
    assert cookies[0].get("httpOnly") and cookies[0].get("sameSite") == "Lax"
    assert PASSWORD not in cookies[0].get("value", PASSWORD)
    page.click("#tab-connect")
    expect(page.locator("#auth-note")).to_be_visible()
    assert "Bearer YOUR_PASSWORD" in page.locator("[data-snippet='cursor-http'] code").inner_text()
    assert PASSWORD not in page.content()
    snap(page, artifacts, "20-login-ok")

    # Bearer credentials open /mcp for agents: the password, or the --auth-token.
    assert post_mcp(protected_server, {}) == 401
    assert post_mcp(protected_server, {"Authorization": f"Bearer {PASSWORD}"}) == 200
    assert post_mcp(protected_server, {"Authorization": f"Bearer {TOKEN}"}) == 200

    page.click("#tab-search")
    page.click("#logout-form button")
    expect(page.locator("#login-form")).to_be_visible()


def test_token_prompt_on_a_stateless_server(
    open_page: OpenPage, token_server: PlaygroundServer, artifacts: Path
) -> None:
    page = open_page(token_server, ready=False)
    page.goto(token_server.url)
    dialog = page.locator("#token-dialog")
    expect(dialog).to_be_visible()
    expect(page.locator("#conn-status")).to_have_text("token required")
    snap(page, artifacts, "21-token-dialog")
    page.fill("#token-input", TOKEN)
    page.click("#token-form button[type='submit']")
    page.wait_for_selector("body[data-ready='true']", state="attached")
    expect(page.locator("#footer-protocol")).to_have_text("MCP 2025-11-25 · stateless")
    search(page, "refund")
    expect(page.locator("#results .hit").first).to_be_visible()
    page.locator("#results .hit").first.click()
    expect(page.locator("#doc-body .chunk.target")).to_have_count(1)
    snap(page, artifacts, "22-token-stateless")


def test_budget_facets_and_whole_sections(
    open_page: OpenPage, open_server: PlaygroundServer, artifacts: Path
) -> None:
    page = open_page(open_server)
    expect(page.locator("#budget-options")).to_be_visible()
    page.check("#facets")
    search(page, "error code")
    facet = page.locator("#facet-list .suggestion[data-key='language']").first
    expect(facet).to_be_visible()
    expect(page.locator("#cut")).to_be_hidden()
    page.fill("#max-tokens", "250")
    page.press("#max-tokens", "Enter")
    expect(page.locator("#cut")).to_contain_text("Fitted to max_tokens 250")
    expect(page.locator("#results .hit").first).to_be_visible()
    snap(page, artifacts, "14-budget-facets")

    value = facet.get_attribute("data-value")
    facet.click()
    expect(page.locator("#filter-language")).to_have_value(value or "")
    expect(page.locator("#facet-list .suggestion[data-key='language']")).to_have_count(0)

    page.fill("#max-tokens", "")
    page.uncheck("#facets")
    search(page, "error code reference")
    page.locator("#results .hit").first.click()
    expect(page.locator("#doc-scope")).to_be_visible()
    page.select_option("#doc-scope", "section")
    label = page.locator("#doc-body .chunk.target .chunk-label")
    expect(label).to_contain_text("Section · ")
    expect(page.locator("#doc-context")).to_be_disabled()
    expect(page.locator("#doc-more")).to_be_hidden()
    whole = page.locator("#doc-body").inner_text()
    snap(page, artifacts, "15-doc-section")

    page.fill("#max-tokens", "200")
    page.press("#max-tokens", "Tab")  # a changed budget reads the open document again
    more = page.locator("#doc-more")
    expect(more).to_be_visible()
    for _ in range(30):
        if not more.is_visible():
            break
        count = page.locator("#doc-body .chunk").count()
        more.click()
        expect(page.locator("#doc-body .chunk")).to_have_count(count + 1)
    expect(more).to_be_hidden()
    expect(page.locator("#doc-body .chunk-label").nth(1)).to_contain_text("continued")
    assert "repeat this call" not in page.locator("#doc-body").inner_text()
    assert len(page.locator("#doc-body").inner_text()) >= len(whole) * 0.9
    snap(page, artifacts, "16-doc-section-parts")
