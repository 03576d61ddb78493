#!/usr/bin/env bash
# demo.sh (`make demo`): the main job on real input, no service, no download.
#   1. searchd index: the Go standard library source, $(go env GOROOT)/src,
#      chunked by declaration, into an embedded store (WAL + MemTable), with
#      a vector per chunk from the built-in embedder;
#   2. searchd search: code queries answered with envelopes (file:// URI with
#      line span, BLAKE3 version hash re-checked against the file, trust),
#      then searchd mcp over stdio: tools/list and one tools/call;
#   3. searchd demo: lexical, dense and hybrid retrieval through the engine on
#      the judged Cranfield and Vaswani collections ($STRATA_DATASETS or
#      ../shared/datasets), with nDCG@10 / MAP / R@100.
# The store goes to $STRATA_DEMO_DATA (default: a temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
go build -o bin/searchd ./cmd/searchd
if [ -n "${STRATA_DEMO_DATA:-}" ]; then
	data="$STRATA_DEMO_DATA"
else
	data="$(mktemp -d -t strata-demo-XXXXXX)"
	trap 'rm -rf "$data"' EXIT
fi
src="$(go env GOROOT)/src"

echo "== searchd index $src --data $data"
./bin/searchd index "$src" --data "$data"
echo
echo "== searchd search (one store opening, several queries; hybrid by default)"
./bin/searchd search --batch --data "$data" --top-k 3 \
	EqualFold ReadFull DecodeRuneInString \
	"parse http request header" "base64 url encoding without padding" \
	'"deadline exceeded"'
echo
echo "== searchd mcp (stdio): the tools an MCP client sees, and one call"
./bin/searchd mcp --describe --data "$data" | tail -1
go run ./bench/cmd/mcp-session --demo --searchd ./bin/searchd --data "$data"
echo
echo "== searchd demo: Cranfield and Vaswani through the engine"
./bin/searchd demo -skip-code
