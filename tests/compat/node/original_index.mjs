// Writes a `chunks` table the way the original docs-mcp (0.17.1) does, through the LanceDB it ships
// (@lancedb/lancedb 0.26.2, pinned by package-lock.json next to this file):
//
//   node original_index.mjs ROWS.json DB_DIR
//
// ROWS.json: {"metadata_keys": [...], "chunks": [chunks.json entries], "fingerprints": {filepath: hex},
// "vectors": {chunk_id: [floats]} | null}. The rows are the original's columns only, built from plain
// JavaScript objects as its buildLanceDbIndex builds them (numbers become float64, vectors float32),
// then its indexes: full-text with positions on content_text and heading (this LanceDB writes them
// at format version 1), btree on chunk_id, filepath and chunk_index, and IVF-PQ on vector from 256
// vectors.
import fs from "node:fs";

import * as lancedb from "@lancedb/lancedb";

const [rowsPath, dbDir] = process.argv.slice(2);
const input = JSON.parse(fs.readFileSync(rowsPath, "utf8"));
const vectors = input.vectors ?? null;
const rows = input.chunks.map((chunk) => {
  const row = {
    chunk_id: chunk.chunk_id,
    filepath: chunk.filepath,
    heading: chunk.heading,
    heading_level: chunk.heading_level,
    content: chunk.content,
    content_text: chunk.content_text,
    breadcrumb: chunk.breadcrumb,
    chunk_index: chunk.chunk_index,
    metadata_json: JSON.stringify(chunk.metadata),
  };
  for (const key of input.metadata_keys) row[key] = chunk.metadata[key] ?? "";
  row.file_fingerprint = input.fingerprints[chunk.filepath] ?? "";
  if (vectors && vectors[chunk.chunk_id]) row.vector = vectors[chunk.chunk_id];
  return row;
});

const db = await lancedb.connect(dbDir);
const table = await db.createTable("chunks", rows, { mode: "overwrite" });
for (const column of ["content_text", "heading"]) {
  await table.createIndex(column, { config: lancedb.Index.fts({ withPosition: true }), replace: true });
}
for (const column of ["chunk_id", "filepath", "chunk_index"]) {
  await table.createIndex(column, { config: lancedb.Index.btree(), replace: true });
}
const vectorCount = vectors ? Object.keys(vectors).length : 0;
if (vectorCount >= 256) {
  const numPartitions = Math.max(1, Math.round(Math.sqrt(vectorCount)));
  await table.createIndex("vector", { config: lancedb.Index.ivfPq({ numPartitions }), replace: true });
}
table.close();
db.close();
console.log(`wrote ${rows.length} rows to ${dbDir}`);
