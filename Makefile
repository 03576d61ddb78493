# Strata — see README.md. Every target installs what it needs itself.
GO      ?= go
PKGS    ?= ./...
BENCHTIME ?= 1s

.PHONY: all build test test-short test-arm64 test-avx2 lint bench bench-quick bench-go datasets peers demo clean

all: build

build:
	$(GO) build $(PKGS)

## test: the suite CI runs (.ci/run): full default build + -race, noasm, qemu AVX2 and qemu arm64 variants with -short.
test:
	./scripts/test.sh

## test-short: a quick local loop: default build, -short.
test-short:
	$(GO) test -short $(PKGS)

## test-arm64: arm64 (NEON) under qemu-user.
test-arm64:
	./scripts/ensure-apt.sh qemu-user-static
	GOARCH=arm64 $(GO) test -count=1 -short -exec qemu-aarch64-static ./asm/... ./engine/...

## test-avx2: the AVX2 path on an AVX-512 host, under qemu -cpu max.
test-avx2:
	./scripts/ensure-apt.sh qemu-user-static
	$(GO) test -count=1 -short -exec 'qemu-x86_64-static -cpu max' ./asm/...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	GOARCH=arm64 $(GO) vet $(PKGS)
	$(GO) vet -tags noasm $(PKGS)

## bench: the full harness (kernels, ann) against the peers; report in bench/results/full. Heavy; not part of CI.
bench: peers datasets
	$(GO) run ./bench/cmd/strata-bench kernels ann --out bench/results/full

## bench-quick: the harness on subsampled data (< 5 min on 2 cores); report in bench/results/quick.
bench-quick: peers datasets
	$(GO) run ./bench/cmd/strata-bench kernels ann --quick --out bench/results/quick

## bench-go: every Go micro-benchmark, once.
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime=$(BENCHTIME) $(PKGS)

## datasets: fetch + convert fashion-mnist-784 and glove-6b-100-angular, with ground truth, into $$STRATA_CACHE.
datasets:
	./scripts/fetch-datasets.sh

## peers: the comparison engines.
peers:
	./scripts/peers.sh

demo:
	./scripts/demo.sh

clean:
	$(GO) clean -testcache
