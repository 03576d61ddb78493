#!/usr/bin/env bash
# demo.sh: `make demo`. Builds searchd and runs the main job on real input:
# BM25 code search over the Go standard library source, then lexical, dense
# and hybrid retrieval on the Cranfield and Vaswani test collections
# (read from $STRATA_DATASETS or ../shared/datasets), with their quality.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
go build -o bin/searchd ./cmd/searchd
exec ./bin/searchd demo "$@"
