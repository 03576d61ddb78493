#!/usr/bin/env bash
# Installs the independent Parquet reader used by engine/tier's
# TestColdArchiveDuckDB (tools/parquet-check: DuckDB through npm
# @duckdb/node-api, pinned by package-lock.json), then runs that test with
# CI=true so a missing or failing reader is an error, not a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
(cd tools/parquet-check && npm ci --no-audit --no-fund)
CI=true go test -count=1 -run 'TestColdArchiveDuckDB' ./engine/tier/
