#!/usr/bin/env bash
# test.sh: the test suite CI runs (`make test`, `.ci/run`).
# Budget: <= 20 min on 2 cores, on AVX-512 and AVX2-only hosts alike, with
# another process loading one core.
#
#   1. default build, full tests (real-data tests run here, once)
#   2. -race, -short
#   3. -tags noasm, -short (pure-Go kernels everywhere)
#   4. asm/ under qemu-x86_64 -cpu max, -short: run-time dispatch on a CPU
#      with AVX2 and no AVX-512 (only on an AVX-512 host; on an AVX2-only
#      host step 1 already ran the AVX2 path natively)
#   5. asm/ under qemu-aarch64, -short: the NEON path
#
# Only asm/ has architecture-specific code (every *_amd64 / *_arm64 file and
# every cpuid dispatch lives there), so only asm/ runs emulated. The emulated
# steps set STRATA_EMULATED=1, the one switch that makes training-heavy and
# real-data tests skip (internal/testenv.SkipIfEmulated).
#
# Every go test call names its -timeout. The script prints each step's
# duration, the total, and one line naming which kernel levels ran.
#
# Real datasets are read from $STRATA_DATASETS or ../shared/datasets.
set -euo pipefail
cd "$(dirname "$0")/.."
# qemu-user for the emulated CPU paths; the peer engines for the bench harness test.
"$(dirname "$0")/ensure-apt.sh" qemu-user-static
# A C toolchain for cgo: ingest/lang's tree-sitter parsers, and -race.
"$(dirname "$0")/ensure-apt.sh" gcc libc6-dev
"$(dirname "$0")/peers.sh"
# versitygw, the S3 server the object-store tests start on loopback
# (internal/testenv/s3gw; under CI=true a missing gateway fails them).
"$(dirname "$0")/versitygw.sh"
# Node tools the tests drive (pinned by their package-lock.json files):
# DuckDB reads the cold tier's Parquet files back (engine/tier), and the
# bundled USE-Lite embed server backs the hybrid main-job test
# (cmd/searchd), and LanceDB is the bench harness's lancedb peer (bench).
# Under CI=true a test whose tool is missing fails.
if command -v node >/dev/null; then
	for d in tools/parquet-check tools/embed-server tools/mcp-client tools/lancedb-peer; do
		if [ ! -d "$d/node_modules" ] || [ "$d/package-lock.json" -nt "$d/node_modules" ]; then
			(cd "$d" && npm ci --no-audit --no-fund --loglevel=error)
		fi
	done
	if [ "${CI:-}" = true ]; then export STRATA_REQUIRE_EMBEDDER=1; fi
fi

start=$(date +%s)
step_name=""
step_start=0
durations=()
step() {
	finish_step
	step_name="$*"
	step_start=$(date +%s)
	printf '\n=== %s (%s)\n' "$step_name" "$(date +%T)"
}
finish_step() {
	if [ -n "$step_name" ]; then
		local d=$(( $(date +%s) - step_start ))
		durations+=("$(printf '%5ds  %s' "$d" "$step_name")")
		printf '=== %s: %ds\n' "$step_name" "$d"
		step_name=""
	fi
}
summary() {
	local rc=$?
	finish_step
	echo
	echo "test.sh: step durations"
	for l in "${durations[@]}"; do echo "  $l"; done
	echo "test.sh: total $(( $(date +%s) - start ))s ($([ $rc = 0 ] && echo passed || echo "FAILED, exit $rc"))"
	[ -n "${levels_line:-}" ] && echo "$levels_line"
}
trap summary EXIT

# levels EXEC...: the asm dispatch levels a test binary run under EXEC can
# execute (TestReportLevels prints "asm-levels: supported=a,b current=b").
levels() {
	local out
	out=$("$@" 2>&1 | grep -o 'asm-levels: supported=[a-z0-9,]*' | head -1 | sed 's/.*supported=//') || true
	echo "${out:-none}"
}

step "go vet"
go vet ./...

step "1/5 default build, full"
go test -count=1 -timeout 14m ./...
native=$(levels go test -count=1 -timeout 1m -run '^TestReportLevels$' -v ./asm)

step "2/5 -race -short"
go test -count=1 -race -short -timeout 10m ./...

step "3/5 -tags noasm -short"
go test -count=1 -tags noasm -short -timeout 8m ./...

export STRATA_EMULATED=1
qemu_amd64="not run"
if [[ ",$native," == *",avx512,"* ]]; then
	step "4/5 asm AVX2 dispatch: qemu-x86_64-static -cpu max, -short"
	go test -count=1 -short -timeout 6m -exec 'qemu-x86_64-static -cpu max' ./asm/...
	qemu_amd64=$(levels go test -count=1 -timeout 2m -run '^TestReportLevels$' -v -exec 'qemu-x86_64-static -cpu max' ./asm)
else
	echo
	echo "=== 4/5 skipped: this host has no AVX-512 (native levels: $native), so step 1 already ran the AVX2 path natively"
fi

step "5/5 asm arm64 NEON path: qemu-aarch64-static, -short"
GOARCH=arm64 go test -count=1 -short -timeout 6m -exec qemu-aarch64-static ./asm/...
arm64=$(GOARCH=arm64 levels go test -count=1 -timeout 2m -run '^TestReportLevels$' -v -exec qemu-aarch64-static ./asm)
unset STRATA_EMULATED

# One line: which kernel levels ran, and which did not.
ran=()
notrun=()
for l in generic avx2 avx512; do
	where=()
	[[ ",$native," == *",$l,"* ]] && where+=("native")
	[[ ",$qemu_amd64," == *",$l,"* ]] && where+=("qemu-x86_64")
	if [ ${#where[@]} -gt 0 ]; then ran+=("$l ($(IFS=+; echo "${where[*]}"))"); else notrun+=("$l"); fi
done
if [[ ",$arm64," == *",neon,"* ]]; then ran+=("neon (qemu-aarch64)"); else notrun+=("neon"); fi
why=""
if [[ " ${notrun[*]} " == *" avx512 "* ]]; then
	if [ -n "${STRATA_ASM_MAX_LEVEL:-}" ]; then
		why=" (avx512: capped by STRATA_ASM_MAX_LEVEL=$STRATA_ASM_MAX_LEVEL)"
	else
		why=" (avx512: this host has no AVX-512 and qemu cannot emulate it)"
	fi
fi
levels_line="test.sh: kernel levels executed: $(IFS=,; echo "${ran[*]}" | sed 's/,/, /g'); not executed: ${notrun[*]:-none}$why"
