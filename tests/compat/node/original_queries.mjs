// Runs the queries the original docs-mcp server makes, through the LanceDB it ships
// (@lancedb/lancedb 0.26.2, pinned by package-lock.json next to this file), against one table.
//
//   node original_queries.mjs PLAN.json
//
// PLAN.json: {"db": "<dir>/.lancedb", "table": "chunks", "queries": [QUERY, ...]} where a QUERY is
//   {"name", "kind": "match", "query", "where"?, "limit"}           MultiMatchQuery on heading (x3) + content_text
//   {"name", "kind": "phrase", "query", "slop", "where"?, "limit"}  PhraseQuery on content_text
//   {"name", "kind": "rows", "where", "select"?}                    query().where(...)
//   {"name", "kind": "vector", "vector", "where"?, "limit"}         search(vector, "vector", "vector")
// Each query is built exactly as the original server builds it (packages/core/src/lancedb.ts,
// speakeasy-api/docs-mcp 0.17.1), reading every column as it does; a QUERY's optional "report" lists
// the columns to print (default: all). Prints one JSON document:
// {"lancedb": version, "indices": [...], "results": {name: {"rows": [...]} | {"error": message}}}.
// A failing query is reported, not thrown, so one run shows every query's outcome.
import fs from "node:fs";
import * as lancedb from "@lancedb/lancedb";

const { version } = JSON.parse(
  fs.readFileSync(new URL("./node_modules/@lancedb/lancedb/package.json", import.meta.url), "utf8"),
);

function plain(value) {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return Number(value);
  if (ArrayBuffer.isView(value)) return Array.from(value, plain);
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "object" && typeof value.toArray === "function") return plain(value.toArray());
  if (typeof value === "object" && typeof value.toJSON === "function") return plain(value.toJSON());
  if (typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

function build(table, q) {
  switch (q.kind) {
    case "match":
      return table.search(new lancedb.MultiMatchQuery(q.query, ["heading", "content_text"], { boosts: [3, 1] }), "fts");
    case "phrase":
      return table.search(new lancedb.PhraseQuery(q.query, "content_text", { slop: q.slop ?? 0 }), "fts");
    case "vector":
      return table.search(q.vector, "vector", "vector");
    case "rows": {
      const builder = table.query();
      return q.select ? builder.select(q.select) : builder;
    }
    default:
      throw new Error(`unknown query kind '${q.kind}'`);
  }
}

async function run(table, q) {
  let builder = build(table, q);
  if (q.where) builder = builder.where(q.where);
  if (q.limit) builder = builder.limit(q.limit);
  const rows = await builder.toArray();
  return rows.map((row) => {
    const values = row.toJSON ? row.toJSON() : row;
    const wanted = q.report ?? Object.keys(values);
    return Object.fromEntries(wanted.map((column) => [column, plain(values[column])]));
  });
}

const plan = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const db = await lancedb.connect(plan.db);
const table = await db.openTable(plan.table ?? "chunks");
const out = { lancedb: version, indices: plain(await table.listIndices()), results: {} };
for (const q of plan.queries) {
  try {
    out.results[q.name] = { rows: await run(table, q) };
  } catch (error) {
    out.results[q.name] = { error: error instanceof Error ? error.message : String(error) };
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
