// The docs playground: search an index, read its chunks, and see the tools, prompts and resources
// this server advertises, all through the MCP endpoint (so what you see is what agents get).
// Server text only ever reaches the page as text nodes, or as sanitised markdown (markdown.js).

import { McpClient, McpError } from "./mcp-client.js";
import { renderMarkdown } from "./markdown.js";

const RESERVED_SEARCH_ARGS = new Set(["query", "limit", "cursor", "max_tokens", "facets"]);
const CHUNK_DELIMITER = /^--- Chunk: (.+?) \(Chunk (\d+) of (\d+)\) \((Target|Context: [+-]?\d+)\)( \(continued\))? ---$/;
const SECTION_DELIMITER = /^--- Section: (.+?) \((Chunks? [\d-]+ of \d+)\) \(Target: (.+?)\)( \(continued\))? ---$/;
// the line that ends a get_doc answer cut to max_tokens, with the cursor of the rest
const CONTINUATION = /^--- .*cursor "([^"]+)" ---$/;
const TOKEN_KEY = "docs-mcp-playground-token";
const HIGHLIGHT_TIMEOUT_MS = 10000;
const AUTH_MODE = document.documentElement.dataset.auth || "none";

const $ = (id) => document.getElementById(id);

const state = {
  tools: [],
  searchTool: null,
  getDocTool: null,
  filterKeys: [],
  query: "",
  filters: {},
  cursor: null,
  hits: [],
  cards: new Map(), // a card's text (heading and snippet) → the card showing it, for folding
  openHit: null,
  docCursor: null,
  searchSeq: 0,
  docSeq: 0,
};

const client = new McpClient(new URL("/mcp", location.href).href, {
  clientInfo: { name: "docs-mcp-playground", version: "1" },
  getToken: () => sessionStorage.getItem(TOKEN_KEY),
});

// ---------------------------------------------------------------------------------------------
// DOM helpers

/** An element with attributes/properties and children (strings become text nodes). */
function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function show(el, visible) {
  el.hidden = !visible;
}

function setStatus(text, stateName) {
  const el = $("conn-status");
  el.textContent = text;
  el.dataset.state = stateName;
}

function errorText(err) {
  if (err instanceof McpError) return err.message;
  if (err && err.name === "TimeoutError") return "the server did not answer in time";
  return err && err.message ? err.message : String(err);
}

// ---------------------------------------------------------------------------------------------
// Highlighting: the server says which characters the search matched (POST /api/highlight, whole
// tokens by their index terms and identifier parts, never stop words, in UTF-16 code units); the page
// wraps exactly those in <mark>, built from text nodes (never from HTML strings), and guesses nothing.

/** For each of `texts`, the [start, end] spans the search for `query` matched (none if that fails). */
async function matchSpans(query, texts) {
  const none = texts.map(() => []);
  if (!texts.length) return none;
  const headers = { "Content-Type": "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  try {
    const response = await fetch(new URL("/api/highlight", location.href), {
      method: "POST",
      headers,
      credentials: "same-origin",
      body: JSON.stringify({ query, texts }),
      signal: AbortSignal.timeout(HIGHLIGHT_TIMEOUT_MS),
    });
    if (!response.ok) return none;
    const { spans } = await response.json();
    return Array.isArray(spans) && spans.length === texts.length ? spans : none;
  } catch {
    return none; // highlighting is an aid: the text is shown unmarked
  }
}

/** `text` as a fragment with the characters of `spans` marked. */
function marked(text, spans) {
  const fragment = document.createDocumentFragment();
  let at = 0;
  for (const [start, end] of spans || []) {
    if (!(start >= at && end > start && end <= text.length)) continue;
    if (start > at) fragment.append(text.slice(at, start));
    fragment.append(h("mark", { text: text.slice(start, end) }));
    at = end;
  }
  if (at < text.length) fragment.append(text.slice(at));
  return fragment;
}

/** Mark what the search matched in the text of an already-built (sanitised) subtree. */
async function highlightTree(root, query) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) {
    if (/[\p{L}\p{N}]/u.test(walker.currentNode.data)) nodes.push(walker.currentNode);
  }
  const spans = await matchSpans(query, nodes.map((node) => node.data));
  nodes.forEach((node, i) => {
    if (spans[i].length) node.replaceWith(marked(node.data, spans[i]));
  });
}

// ---------------------------------------------------------------------------------------------
// Tools and the search form

function toolPayload(result) {
  if (result.isError) {
    const text = (result.content || []).map((c) => c.text || "").join("\n").trim();
    throw new McpError(text || "the tool reported an error");
  }
  if (result.structuredContent) return result.structuredContent;
  const text = (result.content || []).find((c) => c.type === "text");
  return text ? JSON.parse(text.text) : {};
}

function toolText(result) {
  const text = (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  if (result.isError) throw new McpError(text || "the tool reported an error");
  return text;
}

function pickTools(tools) {
  state.tools = tools;
  state.searchTool = tools.find((t) => t.name === "search_docs") || tools.find((t) => t.name.endsWith("_search_docs"));
  state.getDocTool = tools.find((t) => t.name === "get_doc") || tools.find((t) => t.name.endsWith("_get_doc"));
  // the optional arguments, offered only when the tools declare them
  const searchProps = state.searchTool?.inputSchema?.properties || {};
  const docProps = state.getDocTool?.inputSchema?.properties || {};
  state.budgeted = searchProps.max_tokens?.type === "integer";
  state.docBudgeted = docProps.max_tokens?.type === "integer";
  state.faceted = searchProps.facets?.type === "boolean";
  state.scoped = Array.isArray(docProps.scope?.enum);
  show($("budget-options"), state.budgeted || state.faceted || state.docBudgeted);
  show($("max-tokens").parentElement, state.budgeted || state.docBudgeted);
  show($("facets").parentElement, state.faceted);
  show($("doc-scope"), state.scoped);
  show(document.querySelector('label[for="doc-scope"]'), state.scoped);
}

/** The max_tokens the page asks for, or null (none, or out of the tools' range). */
function maxTokens() {
  const value = Number($("max-tokens").value);
  return Number.isInteger(value) && value >= 200 && value <= 1000000 ? value : null;
}

function buildFilters() {
  const container = $("filters");
  container.replaceChildren();
  const props = state.searchTool?.inputSchema?.properties || {};
  state.filterKeys = [];
  for (const [key, schema] of Object.entries(props)) {
    if (RESERVED_SEARCH_ARGS.has(key) || !Array.isArray(schema.enum)) continue;
    state.filterKeys.push(key);
    const id = `filter-${key}`;
    const select = h(
      "select",
      { id, name: key, dataset: { filter: key }, title: schema.description || "" },
      h("option", { value: "", text: "any" }),
      schema.enum.map((value) => h("option", { value: String(value), text: String(value) })),
    );
    select.addEventListener("change", () => {
      state.filters = readFilters();
      if ($("q").value.trim()) runSearch();
    });
    container.append(h("div", { class: "filter" }, h("label", { for: id, text: key }), select));
  }
}

function readFilters() {
  const filters = {};
  for (const key of state.filterKeys) {
    const value = $(`filter-${key}`).value;
    if (value) filters[key] = value;
  }
  return filters;
}

function writeFilters(filters) {
  for (const key of state.filterKeys) $(`filter-${key}`).value = filters[key] || "";
}

function syncLocation() {
  const params = new URLSearchParams();
  if (state.query) params.set("q", state.query);
  for (const [key, value] of Object.entries(state.filters)) params.set(key, value);
  const hash = params.toString();
  history.replaceState(null, "", hash ? `#${hash}` : location.pathname);
}

// ---------------------------------------------------------------------------------------------
// Search

async function runSearch({ append = false } = {}) {
  if (!state.searchTool) return;
  if (!append) {
    state.query = $("q").value.trim();
    state.filters = readFilters();
    state.cursor = null;
  }
  if (!state.query) {
    $("q").focus();
    return;
  }
  syncLocation();
  const seq = ++state.searchSeq;
  const args = { query: state.query, ...state.filters };
  if (append && state.cursor) args.cursor = state.cursor;
  if (state.budgeted && maxTokens()) args.max_tokens = maxTokens();
  if (state.faceted && $("facets").checked) args.facets = true;
  const started = performance.now();
  document.body.classList.add("busy");
  $("more").disabled = true;
  show($("search-error"), false);
  try {
    const payload = toolPayload(await client.callTool(state.searchTool.name, args));
    if (seq !== state.searchSeq) return;
    const elapsedMs = performance.now() - started;
    const shown = (payload.hits || []).flatMap((hit) => [hit.heading || hit.chunk_id, hit.snippet || ""]);
    const spans = await matchSpans(state.query, shown);
    if (seq !== state.searchSeq) return;
    renderResults(payload, spans, append, elapsedMs);
    loadHealth(); // the footer shows the index as ready once the first search opened it
  } catch (err) {
    if (seq !== state.searchSeq) return;
    if (handleAuthError(err)) return;
    $("search-error").textContent = `Search failed: ${errorText(err)}`;
    show($("search-error"), true);
    if (!append) {
      $("results").replaceChildren();
      show($("more"), false);
      show($("hint"), false);
      $("summary").textContent = "";
    }
  } finally {
    if (seq === state.searchSeq) {
      document.body.classList.remove("busy");
      $("more").disabled = false;
    }
  }
}

function renderResults(payload, spans, append, elapsedMs) {
  const hits = payload.hits || [];
  const list = $("results");
  if (!append) {
    list.replaceChildren();
    state.hits = [];
    state.cards = new Map();
    closeDoc({ restoreFocus: false });
  }
  let firstNew = null;
  hits.forEach((hit, i) => {
    state.hits.push(hit);
    const position = state.hits.length;
    const key = `${hit.heading || ""}\u0000${hit.snippet || ""}`;
    const card = state.cards.get(key);
    if (card) {
      // The same text as a card above: shown folded under it, still in ranked order there.
      card.folded.push({ hit, position });
      renderFold(card);
      firstNew ??= card.li.querySelector(`.fold-hit[data-position="${position}"]`);
    } else {
      const li = hitItem(hit, position, spans[2 * i], spans[2 * i + 1]);
      state.cards.set(key, { li, hit, position, folded: [] });
      list.append(li);
      firstNew ??= li.querySelector(".hit");
    }
  });
  state.cursor = payload.next_cursor || null;
  show($("more"), Boolean(state.cursor));
  show($("empty"), false);
  const total = state.hits.length;
  const filtersText = Object.entries(state.filters).map(([k, v]) => `${k}=${v}`).join(", ");
  $("summary").textContent =
    `${total} result${total === 1 ? "" : "s"}${state.cursor ? " (more available)" : ""} for “${state.query}”` +
    (filtersText ? ` (${filtersText})` : "") +
    ` · ${Math.round(elapsedMs)} ms`;
  renderHint(payload.hint);
  $("cut").textContent = payload.cut || "";
  show($("cut"), Boolean(payload.cut));
  renderFacets(payload.facets);
  if (append && firstNew) firstNew.focus();
}

/** Per unfiltered key, its values among the top candidates with their counts, each a button that
 * searches again with that filter. */
function renderFacets(facets) {
  const box = $("facet-list");
  box.replaceChildren();
  for (const [key, counts] of Object.entries(facets || {})) {
    const values = Object.entries(counts);
    if (!values.length) continue;
    box.append(
      h(
        "p",
        { class: "facet" },
        h("span", { class: "facet-key", text: key }),
        values.map(([value, n]) =>
          h("button", {
            type: "button",
            class: "suggestion",
            dataset: { key, value },
            text: `${value} ${n}`,
            title: `Search again with ${key} = ${value}`,
            onclick: () => applySuggestion(key, value),
          }),
        ),
      ),
    );
  }
  show(box, box.childElementCount > 0);
}

function hitItem(hit, position, headingSpans, snippetSpans) {
  const meta = Object.entries(hit.metadata || {}).map(([key, value]) =>
    h("span", { class: "chip", title: key }, h("span", { class: "chip-key", text: key }), String(value)),
  );
  const button = h(
    "button",
    {
      type: "button",
      class: "hit",
      dataset: { chunkId: hit.chunk_id, position: String(position) },
      onclick: () => openDoc(hit, button),
    },
    h("span", { class: "hit-heading" }, marked(hit.heading || hit.chunk_id, headingSpans)),
    h("span", { class: "hit-breadcrumb", text: hit.breadcrumb || hit.filepath || "" }),
    h("span", { class: "hit-snippet" }, marked(hit.snippet || "", snippetSpans)),
    h(
      "span",
      { class: "hit-meta" },
      meta,
      // a hit fitted to max_tokens has no score (its place is its rank)
      hit.score === undefined ? [] : h("span", { class: "score", title: "score", text: `score ${Number(hit.score).toFixed(3)}` }),
    ),
  );
  return h("li", {}, button);
}

/** The line under a card naming the results with the same text, each a button that opens it. */
function renderFold(card) {
  const names = foldNames(card.hit, card.folded.map((entry) => entry.hit));
  const buttons = card.folded.map(({ hit, position }, i) => {
    const button = h("button", {
      type: "button",
      class: "fold-hit",
      dataset: { chunkId: hit.chunk_id, position: String(position) },
      title: `${hit.chunk_id} · score ${Number(hit.score).toFixed(3)}`,
      "aria-label": `Open result ${position}, ${names[i]}: ${hit.chunk_id}`,
      text: names[i],
      onclick: () => openDoc(hit, button),
    });
    return button;
  });
  const current = card.li.querySelector(".fold-hit[aria-current]")?.dataset.position;
  const fold = h(
    "p",
    { class: "fold" },
    h("span", { class: "fold-label", text: "Same text in:" }),
    buttons.flatMap((button, i) => (i ? [", ", button] : [" ", button])),
  );
  card.li.querySelector(".fold")?.remove();
  card.li.append(fold);
  if (current) fold.querySelector(`[data-position="${current}"]`)?.setAttribute("aria-current", "true");
}

/** Short names for results folded under `leader`: the taxonomy values that differ from its own, and
 * the last folder or file name of their path that its path lacks (the chunk id when that is all). */
function foldNames(leader, hits) {
  const segments = (hit) => (hit.filepath || "").replace(/\.md$/i, "").split("/").filter(Boolean);
  const leaderSegments = new Set(segments(leader));
  const names = hits.map((hit) => {
    const parts = Object.entries(hit.metadata || {})
      .filter(([key, value]) => (leader.metadata || {})[key] !== value)
      .map(([, value]) => String(value));
    const own = segments(hit).filter((segment) => !leaderSegments.has(segment));
    const last = own[own.length - 1];
    if (last && !parts.includes(last)) parts.push(last);
    return parts.join(" ") || hit.chunk_id;
  });
  // a name two of them share tells them apart from the leader only: their chunk ids do better
  return names.map((name, i) => (names.indexOf(name) === names.lastIndexOf(name) ? name : hits[i].chunk_id));
}

function renderHint(hint) {
  const box = $("hint");
  const buttons = $("hint-buttons");
  buttons.replaceChildren();
  if (!hint) {
    show(box, false);
    return;
  }
  $("hint-message").textContent = hint.message || "No results.";
  for (const [key, values] of Object.entries(hint.suggested_filters || {})) {
    for (const value of values) {
      buttons.append(
        h("button", {
          type: "button",
          class: "suggestion",
          dataset: { key, value },
          text: `${key} = ${value}`,
          title: `Search again with ${key} = ${value}`,
          onclick: () => applySuggestion(key, value),
        }),
      );
    }
  }
  show(box, true);
}

function applySuggestion(key, value) {
  const select = $(`filter-${key}`);
  if (select) select.value = value;
  runSearch();
}

// ---------------------------------------------------------------------------------------------
// The document view (get_doc)

async function openDoc(hit, button) {
  if (!state.getDocTool) return;
  state.openHit = { hit, button };
  for (const el of document.querySelectorAll("#results [aria-current]")) el.removeAttribute("aria-current");
  button?.setAttribute("aria-current", "true");
  $("doc-heading").textContent = hit.heading || hit.chunk_id;
  $("doc-breadcrumb").textContent = hit.breadcrumb || "";
  $("doc-id").textContent = hit.chunk_id;
  show($("doc"), true);
  $("results-layout").classList.add("with-doc");
  document.body.classList.add("doc-open");
  await loadDoc();
  $("doc-body").focus({ preventScroll: true });
}

async function loadDoc({ more = false } = {}) {
  const open = state.openHit;
  if (!open) return;
  const scope = state.scoped ? $("doc-scope").value : "chunk";
  const context = scope === "chunk" ? Number($("doc-context").value) || 0 : 0;
  $("doc-context").disabled = scope !== "chunk";
  const args = scope === "chunk" ? { chunk_id: open.hit.chunk_id, context } : { chunk_id: open.hit.chunk_id, scope };
  if (state.docBudgeted && maxTokens()) args.max_tokens = maxTokens();
  if (more && state.docCursor) args.cursor = state.docCursor;
  const seq = ++state.docSeq;
  const body = $("doc-body");
  show($("doc-error"), false);
  body.setAttribute("aria-busy", "true");
  try {
    let text = toolText(await client.callTool(state.getDocTool.name, args));
    if (seq !== state.docSeq) return;
    // a cut answer ends with the cursor of the rest: offered as "Read on"
    const lines = text.replace(/\s+$/, "").split("\n");
    const continuation = CONTINUATION.exec(lines[lines.length - 1]);
    state.docCursor = continuation ? continuation[1] : null;
    if (continuation) text = lines.slice(0, -1).join("\n");
    show($("doc-more"), Boolean(state.docCursor));
    $("doc-more").title = continuation ? lines[lines.length - 1].replace(/ "[^"]+" ---$/, " ---") : "";
    const chunks = renderChunks(text, open.hit.chunk_id);
    const targetText = chunks.find((chunk) => chunk.classList.contains("target"))?.querySelector(".markdown");
    if (targetText) await highlightTree(targetText, state.query);
    if (seq !== state.docSeq) return;
    if (more) {
      body.append(...chunks);
      chunks[0]?.scrollIntoView({ block: "nearest" });
      return;
    }
    body.replaceChildren(...chunks);
    const target = body.querySelector(".chunk.target");
    // Scroll the document pane only (scrollIntoView would move the whole page too).
    body.scrollTop =
      target && context > 0 ? body.scrollTop + target.getBoundingClientRect().top - body.getBoundingClientRect().top : 0;
  } catch (err) {
    if (seq !== state.docSeq) return;
    if (handleAuthError(err)) return;
    body.replaceChildren();
    $("doc-error").textContent = `get_doc failed: ${errorText(err)}`;
    show($("doc-error"), true);
  } finally {
    if (seq === state.docSeq) body.removeAttribute("aria-busy");
  }
}

/** get_doc's text split at its `--- Chunk: … ---` delimiters, each chunk rendered as markdown. */
function renderChunks(text, targetId) {
  const blocks = [];
  let current = null;
  for (const line of text.split("\n")) {
    const match = CHUNK_DELIMITER.exec(line);
    const section = match ? null : SECTION_DELIMITER.exec(line);
    if (match) {
      current = { id: match[1], index: match[2], total: match[3], role: match[4], continued: Boolean(match[5]), lines: [] };
      blocks.push(current);
    } else if (section) {
      // a whole section (get_doc scope section or parent): one block, in the page's reading order
      current = { id: section[1], section: section[2], role: "Target", continued: Boolean(section[4]), lines: [] };
      blocks.push(current);
    } else {
      if (!current) {
        current = { id: targetId, index: null, total: null, role: "Target", lines: [] };
        blocks.push(current);
      }
      current.lines.push(line);
    }
  }
  return blocks.map((block) => {
    const isTarget = block.role === "Target";
    const content = h("div", { class: "markdown" });
    content.append(renderMarkdown(block.lines.join("\n")));
    const label =
      (block.section
        ? `Section · ${block.section}`
        : block.index
          ? `Chunk ${block.index} of ${block.total} · ${isTarget ? "target" : block.role.replace("Context: ", "context ")}`
          : "Chunk") + (block.continued ? " · continued" : "");
    return h(
      "section",
      { class: `chunk ${isTarget ? "target" : "context"}`, dataset: { chunkId: block.id, role: block.role } },
      h("p", { class: "chunk-label" }, h("span", { text: label }), h("code", { text: block.id })),
      content,
    );
  });
}

function closeDoc({ restoreFocus = true } = {}) {
  if ($("doc").hidden) return;
  const open = state.openHit;
  state.openHit = null;
  state.docSeq++;
  show($("doc"), false);
  $("doc-body").replaceChildren();
  $("results-layout").classList.remove("with-doc");
  document.body.classList.remove("doc-open");
  for (const el of document.querySelectorAll("#results [aria-current]")) el.removeAttribute("aria-current");
  if (restoreFocus && open?.button?.isConnected) open.button.focus();
}

// ---------------------------------------------------------------------------------------------
// Tools, prompts, resources, install snippets

function renderTools() {
  const list = $("tools-list");
  list.replaceChildren(
    ...state.tools.map((tool) =>
      h(
        "article",
        { class: "card", dataset: { tool: tool.name } },
        h("h3", {}, h("code", { text: tool.name })),
        tool.title ? h("p", { class: "card-title", text: tool.title }) : null,
        h("p", { class: "description", text: tool.description || "" }),
        h(
          "details",
          { open: tool === state.searchTool },
          h("summary", { text: "Input schema" }),
          h("pre", { class: "schema" }, h("code", { text: JSON.stringify(tool.inputSchema, null, 2) })),
        ),
        tool.outputSchema
          ? h(
              "details",
              {},
              h("summary", { text: "Output schema" }),
              h("pre", { class: "schema" }, h("code", { text: JSON.stringify(tool.outputSchema, null, 2) })),
            )
          : null,
      ),
    ),
  );
}

function renderPrompts(prompts) {
  const list = $("prompts-list");
  if (!prompts.length) {
    list.replaceChildren(h("p", { class: "muted", text: "This server advertises no prompts." }));
    return;
  }
  list.replaceChildren(...prompts.map(promptCard));
}

function promptCard(prompt) {
  const args = prompt.arguments || [];
  const output = h("div", { class: "prompt-output" });
  const form = h(
    "form",
    {
      class: "prompt-form",
      onsubmit: async (event) => {
        event.preventDefault();
        const values = {};
        for (const arg of args) {
          const value = form.elements.namedItem(arg.name).value;
          if (value) values[arg.name] = value;
        }
        output.replaceChildren(h("p", { class: "muted", text: "Rendering…" }));
        try {
          const result = await client.request("prompts/get", { name: prompt.name, arguments: values });
          output.replaceChildren(
            ...(result.messages || []).map((message) =>
              h(
                "div",
                { class: "prompt-message" },
                h("p", { class: "chunk-label", text: message.role }),
                h("pre", { class: "prompt-text", text: message.content?.text ?? JSON.stringify(message.content, null, 2) }),
              ),
            ),
          );
        } catch (err) {
          if (handleAuthError(err)) return;
          output.replaceChildren(h("p", { class: "error", text: errorText(err) }));
        }
      },
    },
    args.map((arg) => {
      const id = `prompt-${prompt.name}-${arg.name}`.replace(/[^\w-]/g, "-");
      return h(
        "div",
        { class: "field" },
        h("label", { for: id }, arg.name, arg.required ? h("span", { class: "required", text: " *" }) : null),
        h("input", { id, name: arg.name, required: Boolean(arg.required), placeholder: arg.description || "" }),
      );
    }),
    h("button", { type: "submit", text: "Preview" }),
  );
  return h(
    "article",
    { class: "card", dataset: { prompt: prompt.name } },
    h("h3", {}, h("code", { text: prompt.name })),
    prompt.title ? h("p", { class: "card-title", text: prompt.title }) : null,
    h("p", { class: "description", text: prompt.description || "" }),
    h("details", {}, h("summary", { text: args.length ? `Arguments (${args.length})` : "Preview" }), form, output),
  );
}

function renderResources(resources) {
  const list = $("resources-list");
  if (!resources.length) {
    list.replaceChildren(h("li", { class: "muted", text: "This server exposes no resources." }));
    return;
  }
  list.replaceChildren(
    ...resources.map((resource) =>
      h(
        "li",
        {},
        h(
          "button",
          {
            type: "button",
            class: "resource",
            dataset: { uri: resource.uri },
            onclick: () => openResource(resource),
          },
          h("span", { class: "resource-title", text: resource.title || resource.name }),
          h("code", { class: "resource-uri", text: resource.uri }),
        ),
      ),
    ),
  );
}

async function openResource(resource) {
  $("resource-title").textContent = resource.title || resource.name;
  const body = $("resource-body");
  body.replaceChildren(h("p", { class: "muted", text: "Loading…" }));
  show($("resource-view"), true);
  try {
    const result = await client.request("resources/read", { uri: resource.uri });
    const text = (result.contents || []).map((c) => c.text || "").join("\n\n");
    body.replaceChildren(renderMarkdown(text));
  } catch (err) {
    if (handleAuthError(err)) return;
    body.replaceChildren(h("p", { class: "error", text: errorText(err) }));
  }
  $("resource-view").scrollIntoView({ block: "start" });
}

function shellQuote(value) {
  return /^[\w.@%+=:,/-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;
}

function installSnippets(name, url) {
  const needsAuth = AUTH_MODE !== "none";
  const secret = AUTH_MODE === "password" ? "YOUR_PASSWORD" : "YOUR_TOKEN";
  const headers = needsAuth ? { headers: { Authorization: `Bearer ${secret}` } } : {};
  const stdioArgs = ["--index-dir", "/path/to/index"];
  const stdio = { command: "docs-mcp-server", args: stdioArgs };
  const json = (value) => JSON.stringify(value, null, 2);
  const remoteArgs = ["-y", "mcp-remote", url, ...(needsAuth ? ["--header", `Authorization: Bearer ${secret}`] : [])];
  return [
    {
      id: "claude-desktop",
      name: "Claude Desktop",
      where: "claude_desktop_config.json (Settings → Developer → Edit Config)",
      http: json({ mcpServers: { [name]: { command: "npx", args: remoteArgs } } }),
      httpNote: "Claude Desktop's config file starts local programs; mcp-remote bridges to the HTTP endpoint.",
      stdio: json({ mcpServers: { [name]: stdio } }),
    },
    {
      id: "cursor",
      name: "Cursor",
      where: "~/.cursor/mcp.json or .cursor/mcp.json in a project",
      http: json({ mcpServers: { [name]: { url, ...headers } } }),
      stdio: json({ mcpServers: { [name]: stdio } }),
    },
    {
      id: "claude-code",
      name: "Claude Code",
      where: "a terminal, in your project",
      http:
        `claude mcp add --transport http ${shellQuote(name)} ${shellQuote(url)}` +
        (needsAuth ? ` --header ${shellQuote(`Authorization: Bearer ${secret}`)}` : ""),
      stdio: `claude mcp add ${shellQuote(name)} -- docs-mcp-server ${stdioArgs.map(shellQuote).join(" ")}`,
    },
    {
      id: "vscode",
      name: "VS Code",
      where: ".vscode/mcp.json in your workspace",
      http: json({ servers: { [name]: { type: "http", url, ...headers } } }),
      stdio: json({ servers: { [name]: { type: "stdio", ...stdio } } }),
    },
  ];
}

function renderInstall(serverName) {
  const url = new URL("/mcp", location.href).href;
  $("mcp-url").textContent = url;
  if (AUTH_MODE !== "none") {
    $("auth-note").textContent =
      AUTH_MODE === "password"
        ? "This server is password protected: the HTTP snippets send the password as a bearer token (replace YOUR_PASSWORD)."
        : "This server wants a bearer token on /mcp: replace YOUR_TOKEN in the HTTP snippets.";
    show($("auth-note"), true);
  }
  $("install").replaceChildren(
    ...installSnippets(serverName, url).map((client) =>
      h(
        "article",
        { class: "card install-card", dataset: { client: client.id } },
        h("h3", { text: client.name }),
        h("p", { class: "muted", text: `Where: ${client.where}` }),
        snippetBlock("HTTP", client.http, `${client.id}-http`),
        client.httpNote ? h("p", { class: "note small", text: client.httpNote }) : null,
        snippetBlock("stdio (local index)", client.stdio, `${client.id}-stdio`),
      ),
    ),
  );
}

function snippetBlock(label, text, id) {
  const code = h("code", { text });
  const button = h("button", {
    type: "button",
    class: "copy",
    text: "Copy",
    "aria-label": `Copy the ${label} snippet`,
    onclick: () => copyText(text, button, code),
  });
  return h(
    "div",
    { class: "snippet", dataset: { snippet: id } },
    h("div", { class: "snippet-head" }, h("span", { text: label }), button),
    h("pre", {}, code),
  );
}

async function copyText(text, button, code) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    // No clipboard access (e.g. plain http on another host): select the text for Ctrl+C.
    const range = document.createRange();
    range.selectNodeContents(code);
    const selection = getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    button.textContent = "Selected: press Ctrl+C";
  }
  setTimeout(() => {
    button.textContent = "Copy";
  }, 2000);
}

// ---------------------------------------------------------------------------------------------
// Footer (/healthz) and connection

async function loadHealth() {
  try {
    const response = await fetch("/healthz", { credentials: "same-origin", signal: AbortSignal.timeout(10000) });
    if (!response.ok) return;
    const health = await response.json();
    const build = health.build || {};
    const parts = [`${build.name || ""} ${build.version ? `v${build.version}` : ""}`.trim()];
    if (build.gitCommit) parts.push(`git ${build.gitCommit}`);
    if (build.buildDate) parts.push(`built ${build.buildDate}`);
    $("footer-build").textContent = parts.filter(Boolean).join(" · ");
    const stats = health.index?.stats || {};
    const index = [];
    if (stats.total_chunks !== undefined) index.push(`${stats.total_chunks} chunks`);
    if (stats.total_files !== undefined) index.push(`${stats.total_files} files`);
    if (stats.indexed_at) index.push(`indexed ${String(stats.indexed_at).slice(0, 10)}`);
    if (health.index?.status) index.push(`index ${health.index.status}`);
    $("footer-index").textContent = index.join(" · ");
  } catch {
    // the footer is informative only
  }
}

function handleAuthError(err) {
  if (!(err instanceof McpError) || err.status !== 401) return false;
  if (AUTH_MODE === "password") {
    location.reload(); // the login cookie is gone (expired or the server restarted): sign in again
    return true;
  }
  setStatus("token required", "error");
  askForToken();
  return true;
}

function askForToken() {
  const dialog = $("token-dialog");
  if (dialog.open) return;
  $("token-input").value = "";
  dialog.showModal();
}

async function connect() {
  setStatus("connecting…", "connecting");
  try {
    const init = await client.connect();
    const [tools, prompts, resources] = await Promise.all([
      client.listAll("tools/list", "tools"),
      init.capabilities?.prompts ? client.listAll("prompts/list", "prompts") : Promise.resolve([]),
      init.capabilities?.resources ? client.listAll("resources/list", "resources").catch(() => []) : Promise.resolve([]),
    ]);
    const info = init.serverInfo || {};
    $("server-name").textContent = info.name || "docs-mcp-server";
    document.title = `${info.name || "docs-mcp-server"} · docs playground`;
    if (info.version) {
      $("server-version").textContent = `v${info.version}`;
      show($("server-version"), true);
    }
    $("footer-protocol").textContent =
      `MCP ${client.protocolVersion} · ${client.sessionId ? "stateful session" : "stateless"}`;
    pickTools(tools);
    buildFilters();
    renderTools();
    renderPrompts(prompts);
    renderResources(resources);
    renderInstall(info.name || "docs");
    setStatus("connected", "ok");
    document.body.dataset.ready = "true";
    restoreFromLocation();
  } catch (err) {
    if (handleAuthError(err)) return;
    setStatus(`not connected: ${errorText(err)}`, "error");
  }
}

function restoreFromLocation() {
  const params = new URLSearchParams(location.hash.slice(1));
  const query = params.get("q");
  if (!query) return;
  $("q").value = query;
  const filters = {};
  for (const key of state.filterKeys) if (params.get(key)) filters[key] = params.get(key);
  writeFilters(filters);
  runSearch();
}

// ---------------------------------------------------------------------------------------------
// Tabs and keyboard

function selectTab(tab, focus = false) {
  const changed = tab.getAttribute("aria-selected") !== "true";
  for (const other of document.querySelectorAll('[role="tab"]')) {
    const selected = other === tab;
    other.setAttribute("aria-selected", String(selected));
    other.tabIndex = selected ? 0 : -1;
    show($(other.getAttribute("aria-controls")), selected);
  }
  if (changed) window.scrollTo(0, 0);
  if (focus) tab.focus();
}

function isTyping(target) {
  return target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

/** The results' buttons in page order: each card, then the results folded under it. */
function hitButtons() {
  return Array.from(document.querySelectorAll("#results .hit, #results .fold-hit"));
}

function onKeyDown(event) {
  if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
  const target = event.target;
  if (event.key === "/" && !isTyping(target)) {
    event.preventDefault();
    selectTab($("tab-search"));
    $("q").focus();
    $("q").select();
    return;
  }
  if (event.key === "Escape" && !$("doc").hidden && !$("token-dialog").open) {
    event.preventDefault();
    closeDoc();
    return;
  }
  if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
  const hits = hitButtons();
  if (!hits.length) return;
  const down = event.key === "ArrowDown";
  if (target === $("q") && down) {
    event.preventDefault();
    hits[0].focus();
  } else if (target instanceof HTMLElement && (target.classList.contains("hit") || target.classList.contains("fold-hit"))) {
    event.preventDefault();
    const index = hits.indexOf(target);
    if (down) (hits[index + 1] || (!$("more").hidden ? $("more") : hits[index])).focus();
    else if (index > 0) hits[index - 1].focus();
    else $("q").focus();
  } else if (target === $("more") && !down) {
    event.preventDefault();
    hits[hits.length - 1].focus();
  }
}

function wire() {
  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    runSearch();
  });
  $("more").addEventListener("click", () => runSearch({ append: true }));
  $("doc-close").addEventListener("click", () => closeDoc());
  $("doc-context").addEventListener("change", () => loadDoc());
  $("doc-scope").addEventListener("change", () => loadDoc());
  $("doc-more").addEventListener("click", () => loadDoc({ more: true }));
  $("max-tokens").addEventListener("change", () => {
    // an open document is read again with the new budget; otherwise the search is run again
    if (state.openHit) loadDoc();
    else if ($("q").value.trim()) runSearch();
  });
  $("facets").addEventListener("change", () => {
    if ($("q").value.trim()) runSearch();
  });
  $("resource-close").addEventListener("click", () => show($("resource-view"), false));
  document.addEventListener("keydown", onKeyDown);

  const tabs = Array.from(document.querySelectorAll('[role="tab"]'));
  for (const tab of tabs) {
    tab.addEventListener("click", () => selectTab(tab));
    tab.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      event.preventDefault();
      selectTab(tabs[(tabs.indexOf(tab) + step + tabs.length) % tabs.length], true);
    });
  }

  $("token-form").addEventListener("submit", () => {
    sessionStorage.setItem(TOKEN_KEY, $("token-input").value);
    connect();
  });
  if (AUTH_MODE === "password") show($("logout-form"), true);
  addEventListener("pagehide", () => client.close());
}

wire();
loadHealth();
connect();
