#!/usr/bin/env node
// LanceDB (embedded, @lancedb/lancedb) driver for Strata's bench harness
// (bench/lancedb.go). One run, one JSON object on stdout:
//
//   node driver.js DIR DOCS.jsonl DOCS.fvecs QUERIES.jsonl QUERIES.fvecs K SWEEP
//
// DOCS.jsonl: {"id": int, "text": str, "tag": str} per line, in the order
// of DOCS.fvecs; QUERIES.jsonl: {"text": str} per line, in the order of
// QUERIES.fvecs. SWEEP: "nprobes:refine,nprobes:refine,..." for the vector
// queries. The table goes to DIR (created; must not exist).
//
// Reply: {"engine":"lancedb","version", "n","nq","d",
//   "ingest_s" (createTable with every row), "index_s": {"vector","fts","tag"},
//   "bytes" (DIR after the indexes), "index_desc",
//   "fts"|"hybrid": {"lat_ms":[nq], "ids":[[k ids]...]},
//   "vector"|"filtered": [{"nprobes","refine","lat_ms":[nq],"ids":[[...]]}]}
// Latency: one warm-up pass over the queries, then one timed pass, one
// query at a time (wall, process.hrtime). The filter of "filtered" is
// tag = FILTER_TAG (the harness writes tag "t<id mod 10>", FILTER_TAG "t3").
// An error prints {"error": "..."} and exits 1.
"use strict";
const fs = require("fs");
const path = require("path");
const lancedb = require("@lancedb/lancedb");

const FILTER_TAG = "t3";

function readFvecs(p) {
  const b = fs.readFileSync(p);
  const out = [];
  let off = 0;
  while (off < b.length) {
    const d = b.readInt32LE(off);
    off += 4;
    const v = new Float32Array(d);
    for (let i = 0; i < d; i++) v[i] = b.readFloatLE(off + 4 * i);
    off += 4 * d;
    out.push(v);
  }
  return out;
}

function readJSONL(p) {
  return fs.readFileSync(p, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
}

function dirBytes(d) {
  let n = 0;
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) n += dirBytes(p);
    else if (e.isFile()) n += fs.statSync(p).size;
  }
  return n;
}

const now = () => Number(process.hrtime.bigint()) / 1e6;

async function timed(nq, run) {
  for (let i = 0; i < nq; i++) await run(i); // warm-up
  const lat = [];
  const ids = [];
  for (let i = 0; i < nq; i++) {
    const t0 = now();
    const rows = await run(i);
    lat.push(now() - t0);
    ids.push(rows.map((r) => Number(r.id)));
  }
  return { lat_ms: lat, ids };
}

async function main() {
  const [dir, docsP, docVecP, qP, qVecP, kS, sweepS] = process.argv.slice(2);
  if (!sweepS) throw new Error("usage: driver.js DIR DOCS.jsonl DOCS.fvecs QUERIES.jsonl QUERIES.fvecs K SWEEP");
  const k = parseInt(kS, 10);
  const sweep = sweepS.split(",").map((s) => s.split(":").map((x) => parseInt(x, 10)));
  const docs = readJSONL(docsP);
  const dv = readFvecs(docVecP);
  const qs = readJSONL(qP);
  const qv = readFvecs(qVecP);
  if (docs.length !== dv.length || qs.length !== qv.length) {
    throw new Error(`rows: ${docs.length} docs / ${dv.length} vectors, ${qs.length} queries / ${qv.length} vectors`);
  }
  const d = dv[0].length;
  const version = JSON.parse(fs.readFileSync(path.join(__dirname, "node_modules", "@lancedb", "lancedb", "package.json"), "utf8")).version;
  const rows = docs.map((x, i) => ({ id: x.id, text: x.text, tag: x.tag, vector: Array.from(dv[i]) }));

  const db = await lancedb.connect(dir);
  let t0 = now();
  const tbl = await db.createTable("docs", rows);
  const ingestS = (now() - t0) / 1000;

  const partitions = Math.max(1, Math.round(Math.sqrt(docs.length)));
  const subVectors = d % 8 === 0 ? d / 8 : d % 4 === 0 ? d / 4 : d;
  const indexS = {};
  t0 = now();
  await tbl.createIndex("vector", { config: lancedb.Index.ivfPq({ numPartitions: partitions, numSubVectors: subVectors, distanceType: "cosine" }) });
  indexS.vector = (now() - t0) / 1000;
  t0 = now();
  await tbl.createIndex("text", { config: lancedb.Index.fts() });
  indexS.fts = (now() - t0) / 1000;
  t0 = now();
  await tbl.createIndex("tag", { config: lancedb.Index.bitmap() });
  indexS.tag = (now() - t0) / 1000;
  const bytes = dirBytes(dir);

  const nq = qs.length;
  const out = {
    engine: "lancedb", version, n: docs.length, nq, d, ingest_s: ingestS, index_s: indexS, bytes,
    index_desc: `IVF_PQ(partitions=${partitions}, sub_vectors=${subVectors}, cosine) + FTS(text) + BITMAP(tag)` +
      (process.env.LANCE_CPU_THREADS ? `; LANCE_CPU_THREADS=${process.env.LANCE_CPU_THREADS}` : ""),
  };
  out.fts = await timed(nq, (i) => tbl.query().fullTextSearch(qs[i].text).select(["id"]).limit(k).toArray());
  out.vector = [];
  out.filtered = [];
  for (const [np, rf] of sweep) {
    const v = await timed(nq, (i) => tbl.vectorSearch(qv[i]).distanceType("cosine").nprobes(np).refineFactor(rf).select(["id"]).limit(k).toArray());
    out.vector.push({ nprobes: np, refine: rf, ...v });
    const f = await timed(nq, (i) => tbl.vectorSearch(qv[i]).distanceType("cosine").where(`tag = '${FILTER_TAG}'`).nprobes(np).refineFactor(rf).select(["id"]).limit(k).toArray());
    out.filtered.push({ nprobes: np, refine: rf, ...f });
  }
  const rrf = await lancedb.rerankers.RRFReranker.create();
  const [np, rf] = sweep[sweep.length - 1];
  out.hybrid = await timed(nq, (i) => tbl.query().fullTextSearch(qs[i].text).nearestTo(qv[i]).distanceType("cosine").nprobes(np).refineFactor(rf).rerank(rrf).select(["id"]).limit(k).toArray());
  out.hybrid_desc = `RRF over FTS and vector (nprobes ${np}, refine ${rf})`;
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stdout.write(JSON.stringify({ error: String(e && e.stack ? e.stack : e) }) + "\n");
  process.exit(1);
});
