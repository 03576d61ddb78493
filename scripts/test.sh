#!/usr/bin/env bash
# test.sh: the test suite CI runs (`make test`). Budget: < 15 min on 2 cores.
#
#   1. default build, full tests (real-data tests run here, once)
#   2. -race, -short
#   3. -tags noasm, -short (pure-Go kernels everywhere)
#   4. amd64 under qemu-x86_64 -cpu max, -short: AVX2 without AVX-512
#   5. arm64 under qemu-aarch64, -short: the NEON path
#
# Real datasets are read from $STRATA_DATASETS or ../shared/datasets.
set -euo pipefail
cd "$(dirname "$0")/.."
# qemu-user for the emulated CPU paths; the peer engines for the bench harness test.
"$(dirname "$0")/ensure-apt.sh" qemu-user-static
"$(dirname "$0")/peers.sh"
# Node tools the tests drive (pinned by their package-lock.json files):
# DuckDB reads the cold tier's Parquet files back (engine/tier), and the
# bundled USE-Lite embed server backs the hybrid main-job test
# (cmd/searchd). Under CI=true a test whose tool is missing fails.
if command -v node >/dev/null; then
	for d in tools/parquet-check tools/embed-server; do
		if [ ! -d "$d/node_modules" ] || [ "$d/package-lock.json" -nt "$d/node_modules" ]; then
			(cd "$d" && npm ci --no-audit --no-fund --loglevel=error)
		fi
	done
	if [ "${CI:-}" = true ]; then export STRATA_REQUIRE_EMBEDDER=1; fi
fi

step() { printf '\n=== %s (%s)\n' "$*" "$(date +%T)"; }
start=$(date +%s)

step "go vet"
go vet ./...

step "1/5 default build, full"
go test -count=1 ./...

step "2/5 -race -short"
go test -count=1 -race -short ./...

step "3/5 -tags noasm -short"
go test -count=1 -tags noasm -short ./...

# Packages with architecture-specific code paths run under qemu.
QEMU_PKGS="./asm/... ./engine/..."

run_qemu() { # $1 = GOARCH, $2.. = exec
	local arch="$1"; shift
	GOARCH=$arch go test -count=1 -short -exec "$*" $QEMU_PKGS
}

step "4/5 amd64 AVX2 path: qemu-x86_64-static -cpu max, -short"
run_qemu amd64 qemu-x86_64-static -cpu max

step "5/5 arm64 NEON path: qemu-aarch64-static, -short"
run_qemu arm64 qemu-aarch64-static

echo
echo "test.sh: all variants passed in $(( $(date +%s) - start ))s"
