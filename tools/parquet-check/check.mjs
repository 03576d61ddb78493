// check.mjs: an independent reader check of a Strata cold archive.
//
//   node check.mjs FILE.parquet
//
// Opens FILE with DuckDB (@duckdb/node-api) — not with the parquet-go
// code that wrote it — and prints one JSON object on stdout:
//
//   {"rows": N,                       row count (count(*))
//    "docs": [{"id": ..., "content": ...}, ...],   every row, file order
//    "codes": K,                      rows with a non-null code
//    "code_lengths": [18],            distinct byte lengths of the codes
//    "format_version": "1"}           the strata.format_version key-value entry
//
// Exit status 1 (message on stderr) when DuckDB cannot read the file.
import { DuckDBInstance } from '@duckdb/node-api';

const file = process.argv[2];
if (!file) {
  console.error('usage: node check.mjs FILE.parquet');
  process.exit(2);
}
const lit = "'" + file.replaceAll("'", "''") + "'";

try {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  const q = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
  const [{ n }] = await q(`SELECT count(*) AS n FROM read_parquet(${lit})`);
  const docs = await q(`SELECT id, content FROM read_parquet(${lit}, file_row_number = true) ORDER BY file_row_number`);
  const [{ codes }] = await q(`SELECT count(code) AS codes FROM read_parquet(${lit})`);
  const lens = await q(`SELECT DISTINCT octet_length(code) AS l FROM read_parquet(${lit}) WHERE code IS NOT NULL ORDER BY l`);
  const kv = await q(`SELECT decode(value) AS v FROM parquet_kv_metadata(${lit}) WHERE decode(key) = 'strata.format_version'`);
  const out = {
    rows: Number(n),
    docs: docs.map((r) => ({ id: r.id, content: r.content })),
    codes: Number(codes),
    code_lengths: lens.map((r) => Number(r.l)),
    format_version: kv.length ? kv[0].v : null,
  };
  process.stdout.write(JSON.stringify(out) + '\n');
  con.closeSync?.();
} catch (e) {
  console.error(`parquet-check: ${file}: ${e?.message ?? e}`);
  process.exit(1);
}
