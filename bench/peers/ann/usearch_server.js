// USearch peer server for strata-bench's ann suite (bench/ann.go).
//
// Usage: NODE_PATH=DIR/node_modules node usearch_server.js BASE.fvecs QUERIES.fvecs l2|ip M EFC K
// where DIR holds `npm install usearch@2.26.2` (the harness installs it in a cache dir).
//
// Build: new Index({metric: l2sq|ip, connectivity: M, expansion_add: EFC}), one
// index.add(keys, vectors, 1) call (one thread). USearch fixes expansion_search when an
// index is constructed, so each efSearch point saves nothing new: the built index is
// saved once to a temp file and loaded into an Index constructed with
// expansion_search = EF (load copies it into memory), then searched with one
// index.search(queries, k, 1) call per repetition.
// Line protocol: the same as hnswlib_server.cc (see bench/peer.go).
const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');
const usearch = require('usearch');

function readFvecs(p) {
  const buf = fs.readFileSync(p);
  if (buf.length === 0) return { n: 0, d: 0, data: new Float32Array(0) };
  const d = buf.readInt32LE(0);
  const rec = 4 + 4 * d;
  if (d <= 0 || buf.length % rec !== 0) throw new Error(p + ': bad fvecs file');
  const n = buf.length / rec;
  const data = new Float32Array(n * d);
  for (let i = 0; i < n; i++) {
    if (buf.readInt32LE(i * rec) !== d) throw new Error(p + ': mixed dimensions');
    const src = new Float32Array(buf.buffer.slice(buf.byteOffset + i * rec + 4, buf.byteOffset + (i + 1) * rec));
    data.set(src, i * d);
  }
  return { n, d, data };
}

function rss() {
  const f = fs.readFileSync('/proc/self/statm', 'utf8').split(' ');
  return Number(f[1]) * 4096;
}
function cpu() { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; }
function now() { return Number(process.hrtime.bigint()) / 1e9; }

const [bpath, qpath, metricArg, mArg, efcArg, kArg] = process.argv.slice(2);
if (!kArg) { console.error('usage: usearch_server.js BASE QUERIES l2|ip M EFC K'); process.exit(2); }
const metric = metricArg === 'l2' ? 'l2sq' : metricArg === 'ip' ? 'ip' : null;
if (!metric) { console.error('metric must be l2 or ip'); process.exit(2); }
const M = Number(mArg), efc = Number(efcArg), k = Number(kArg);
const base = readFvecs(bpath), qs = readFvecs(qpath);
// The package's "exports" hide package.json from require: walk up from the
// resolved entry point to the usearch package directory.
function usearchVersion() {
  let dir = path.dirname(require.resolve('usearch'));
  for (;;) {
    const pj = path.join(dir, 'package.json');
    if (fs.existsSync(pj)) {
      const j = JSON.parse(fs.readFileSync(pj, 'utf8'));
      if (j.name === 'usearch') return j.version;
    }
    const up = path.dirname(dir);
    if (up === dir) return 'unknown';
    dir = up;
  }
}
const version = usearchVersion();
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
out({ engine: 'usearch', version: version + ' (npm prebuilt, node ' + process.version + ')', n: base.n, nq: qs.n, d: base.d });

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'usearch-'));
const file = path.join(tmp, 'index.usearch');
let built = false;
const config = (ef) => ({ dimensions: base.d, metric, connectivity: M, expansion_add: efc, expansion_search: ef });
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const f = line.trim().split(/\s+/);
  if (f[0] === 'quit') { rl.close(); return; }
  if (f[0] === 'build') {
    const r0 = rss();
    const t0 = now(), c0 = cpu();
    const ix = new usearch.Index(config(64));
    const keys = new BigUint64Array(base.n);
    for (let i = 0; i < base.n; i++) keys[i] = BigInt(i);
    ix.add(keys, base.data, 1);
    const w = now() - t0, c = cpu() - c0;
    const r1 = rss();
    ix.save(file);
    built = true;
    out({ build_wall_s: w, build_cpu_s: c, rss_before_bytes: r0, rss_after_bytes: r1 });
  } else if (f[0] === 'search') {
    const ef = Number(f[1]), minsec = Number(f[2]);
    if (!built) { out({ error: 'search before build' }); return; }
    const ix = new usearch.Index(config(ef));
    ix.load(file);
    let reps = 0, ids = null, el = 0;
    const t0 = now(), c0 = cpu();
    do {
      const res = ix.search(qs.data, k, 1);
      if (ids === null) {
        ids = new Array(qs.n * k).fill(-1);
        for (let q = 0; q < qs.n; q++) {
          const cnt = Number(res.counts[q]);
          for (let j = 0; j < cnt; j++) ids[q * k + j] = Number(res.keys[q * k + j]);
        }
      }
      reps++;
      el = now() - t0;
    } while (el < minsec);
    out({ ef, reps, wall_s: el, cpu_s: cpu() - c0, ids });
  } else {
    out({ error: 'unknown command' });
  }
});
rl.on('close', () => { fs.rmSync(tmp, { recursive: true, force: true }); });
