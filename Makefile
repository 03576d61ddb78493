# Strata — see README.md. Every target installs what it needs itself.
GO      ?= go
PKGS    ?= ./...
BENCHTIME ?= 1s

.PHONY: all build test test-short test-arm64 test-avx2 lint bench bench-quick datasets peers demo clean

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

## bench: full Go benchmarks (kernels, indexes). Heavy; not part of CI.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime=$(BENCHTIME) $(PKGS)

## bench-quick: a short pass over the benchmarks, to check they run.
bench-quick:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime=100ms -short $(PKGS)

## datasets: fetch + convert fashion-mnist-784 and glove-6b-100-angular, with ground truth, into $$STRATA_CACHE.
datasets:
	./scripts/fetch-datasets.sh

## peers: the comparison engines.
peers:
	./scripts/ensure-apt.sh python3-faiss python3-hnswlib python3-xapian sqlite3 python3-numpy \
		libhnswlib-dev libxapian-dev libsqlite3-dev libopenblas0-pthread g++

demo:
	./scripts/demo.sh

clean:
	$(GO) clean -testcache
