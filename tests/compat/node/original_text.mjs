// The original's content_text of whole documents: remark-parse 11 + remark-frontmatter 5 (yaml) +
// remark-gfm 4, every top-level node but the front matter through mdast-util-to-string 4, joined
// by a blank line (core/chunking.ts). Reads JSON lines {"path", "markdown"} on stdin and writes
// JSON lines {"path", "text"} in the same order.
import readline from "node:readline";
import { toString } from "mdast-util-to-string";
import remarkFrontmatter from "remark-frontmatter";
import remarkGfm from "remark-gfm";
import remarkParse from "remark-parse";
import { unified } from "unified";

const parser = unified().use(remarkParse).use(remarkFrontmatter, ["yaml"]).use(remarkGfm);
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line) continue;
  const { path, markdown } = JSON.parse(line);
  const nodes = parser.parse(markdown).children.filter((node) => node.type !== "yaml");
  const text = nodes.map((node) => toString(node)).join("\n\n");
  process.stdout.write(JSON.stringify({ path, text }) + "\n");
}
