// Markdown to DOM, safely. markdown-it (vendor/markdown-it.min.js) runs with `html: false`, so raw
// HTML in the documents is escaped, never interpreted. Its output is then parsed in an inert
// document and rebuilt node by node from an allow-list of elements and attributes: anything else is
// dropped, links keep only http(s)/mailto/fragment targets, and images become links (the page makes
// no request to any other host, and the Content-Security-Policy forbids it anyway).

const ALLOWED = new Set([
  "a", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i",
  "li", "ol", "p", "pre", "s", "strong", "sub", "sup", "table", "tbody", "td", "tfoot", "th", "thead",
  "tr", "ul",
]);
const DROP_WITH_CONTENT = new Set(["script", "style", "iframe", "object", "embed", "template", "noscript", "svg", "math"]);
const ALIGN = new Set(["left", "right", "center"]);

let renderer = null;

function markdownRenderer() {
  if (!renderer) {
    if (typeof window.markdownit !== "function") throw new Error("the markdown renderer did not load");
    renderer = window.markdownit({ html: false, linkify: false, typographer: false, breaks: false });
  }
  return renderer;
}

/** The markdown `text` as a sanitised DocumentFragment. */
export function renderMarkdown(text) {
  // markdown-it aligns table cells with style attributes, which the page's CSP refuses even in an
  // inert document: turn them into data attributes first (raw HTML is escaped, so every literal
  // `<td style=…>` here was written by markdown-it itself).
  const html = markdownRenderer()
    .render(withoutCommentLines(text))
    .replace(/<(t[hd]) style="text-align:(left|right|center)">/g, '<$1 data-align="$2">');
  const inert = new DOMParser().parseFromString(`<body>${html}</body>`, "text/html");
  const fragment = document.createDocumentFragment();
  for (const child of Array.from(inert.body.childNodes)) appendClean(fragment, child);
  return fragment;
}

/**
 * Lines that are nothing but an HTML comment (`<!-- mcp_chunking_hint: … -->` directives) removed,
 * outside fenced code: with raw HTML escaped they would otherwise show up as text.
 */
function withoutCommentLines(text) {
  let fence = null;
  const kept = [];
  for (const line of text.split("\n")) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (marker) {
      if (fence === null) fence = marker[1][0];
      else if (marker[1][0] === fence) fence = null;
    }
    if (fence === null && /^\s*<!--(?:(?!-->).)*-->\s*$/.test(line)) continue;
    kept.push(line);
  }
  return kept.join("\n");
}

function appendClean(parent, node) {
  if (node.nodeType === Node.TEXT_NODE) {
    parent.appendChild(document.createTextNode(node.data));
    return;
  }
  if (node.nodeType !== Node.ELEMENT_NODE) return;
  const tag = node.localName;
  if (DROP_WITH_CONTENT.has(tag)) return;
  if (tag === "img") {
    parent.appendChild(imageStandIn(node));
    return;
  }
  if (!ALLOWED.has(tag)) {
    for (const child of Array.from(node.childNodes)) appendClean(parent, child);
    return;
  }
  const clean = document.createElement(tag);
  copyAttributes(node, clean, tag);
  for (const child of Array.from(node.childNodes)) appendClean(clean, child);
  parent.appendChild(clean);
}

function copyAttributes(source, target, tag) {
  if (tag === "a") {
    const href = safeHref(source.getAttribute("href"));
    if (href) {
      target.setAttribute("href", href);
      if (!href.startsWith("#")) {
        target.setAttribute("target", "_blank");
        target.setAttribute("rel", "noopener noreferrer");
      }
    } else {
      target.className = "inert-link";
      const original = source.getAttribute("href");
      if (original) target.title = original;
    }
    const title = source.getAttribute("title");
    if (title && href) target.title = title;
  } else if (tag === "code") {
    const cls = source.getAttribute("class") || "";
    const lang = /^language-([\w+#.-]{1,40})$/.exec(cls);
    if (lang) target.className = `language-${lang[1]}`;
  } else if (tag === "ol") {
    const start = Number.parseInt(source.getAttribute("start") || "", 10);
    if (Number.isFinite(start)) target.setAttribute("start", String(start));
  } else if (tag === "td" || tag === "th") {
    const align = source.getAttribute("data-align");
    if (align && ALIGN.has(align)) target.className = `align-${align}`;
  }
}

/** Absolute http(s) and mailto links, and in-page fragments; relative links point nowhere here. */
function safeHref(href) {
  if (!href) return null;
  const value = href.trim();
  if (value.startsWith("#")) return value;
  if (/^mailto:/i.test(value)) return value;
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return url.href;
  } catch {
    // relative: the document's own folder structure does not exist on this server
  }
  return null;
}

function imageStandIn(img) {
  const alt = img.getAttribute("alt") || "image";
  const href = safeHref(img.getAttribute("src"));
  const label = `[image: ${alt}]`;
  if (href && !href.startsWith("#")) {
    const link = document.createElement("a");
    link.href = href;
    link.target = "_blank";
    link.rel = "noopener noreferrer";
    link.className = "image-link";
    link.textContent = label;
    return link;
  }
  const span = document.createElement("span");
  span.className = "image-link";
  span.textContent = label;
  return span;
}
