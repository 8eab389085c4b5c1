// Records the full-text scores of @lancedb/lancedb 0.26.2, the LanceDB the original docs-mcp
// indexed and searched with, so that tests can check that the `original` ranking reproduces them
// (tests/core/test_lexical_index.py, docs_mcp_core/lexical_index.py ORIGINAL_SCORING).
//
//   npm ci --prefix tests/compat/node    # @lancedb/lancedb 0.26.2, pinned by its package-lock.json
//   NODE_PATH=$PWD/tests/compat/node/node_modules node scripts/record_lancedb_0_26_scores.mjs \
//       IDX/chunks.json tests/core/data/lancedb-0.26.2-scores.json
//
// IDX is an index of examples/docs (docs-mcp build --docs-dir examples/docs --out IDX). The table is
// made of chunks.json's chunk_id, heading and content_text, indexed as the original indexes them:
// Index.fts({ withPosition: true }) on heading and content_text.
import fs from "fs";
import { createRequire } from "module";
import path from "path";

const require = createRequire(path.join(process.env.NODE_PATH ?? process.cwd(), "noop.js"));
const lancedb = require("@lancedb/lancedb");
const { Index, MatchQuery, MultiMatchQuery, PhraseQuery } = lancedb;

const [chunksPath, outPath] = process.argv.slice(2);
const QUERIES = [
  "retry configuration",
  "retries backoff python",
  "create a link",
  "error handling",
  "pagination cursor next page",
  "authentication bearer token",
  "rate limit 429 Too Many Requests",
  "what happens when a request fails",
  "how do I install the SDK with pip",
  "webhooks signature verify",
  "the",
  "error error error",
];

const chunks = JSON.parse(fs.readFileSync(chunksPath, "utf8"));
const dir = fs.mkdtempSync("/tmp/lancedb-0.26-");
const db = await lancedb.connect(dir);
const rows = chunks.map((c) => ({ chunk_id: c.chunk_id, heading: c.heading, content_text: c.content_text }));
const table = await db.createTable("chunks", rows);
await table.createIndex("heading", { config: Index.fts({ withPosition: true }) });
await table.createIndex("content_text", { config: Index.fts({ withPosition: true }) });

async function scores(query) {
  const found = await table.search(query, "fts").select(["chunk_id", "_score"]).limit(10000).toArray();
  return Object.fromEntries(found.map((r) => [r.chunk_id, r._score]));
}

const out = { lancedb: "0.26.2", rows: chunks.length, queries: {} };
for (const q of QUERIES) {
  out.queries[q] = {
    heading: await scores(new MatchQuery(q, "heading")),
    content_text: await scores(new MatchQuery(q, "content_text")),
    match: await scores(new MultiMatchQuery(q, ["heading", "content_text"], { boosts: [3, 1] })),
    phrase: await scores(new PhraseQuery(q, "content_text")),
  };
}
fs.writeFileSync(outPath, JSON.stringify(out, null, 1) + "\n");
fs.rmSync(dir, { recursive: true, force: true });
console.log(`recorded ${QUERIES.length} queries over ${chunks.length} rows to ${outPath}`);
