#!/usr/bin/python3
"""Flat 4-bit PQ fast-scan search: Strata's Go kernel + top-k vs FAISS
IndexPQFastScan, one thread, same n, d, M, k.

Needs Debian's python3-faiss and python3-numpy (`make peers`, or
`apt-get install -y python3-faiss python3-numpy`); it is run with
/usr/bin/python3 because that is where Debian installs them.

FAISS side: random Gaussian base vectors (seeded), IndexPQFastScan(d, M, 4)
trained on up to 20,000 of them, nq queries searched in one call with
omp_set_num_threads(1); the best of --repeat runs gives queries/s.

Strata side: `go test -bench BenchmarkFastScan4Search ./asm` with the same
n, d, M (environment STRATA_FS_N / _D / _M). That benchmark does the same
per-query work: float LUT, QuantizeLUT4, the fast-scan kernel (queries
batched by 4), top-k. It prints queries/s for every dispatch level.

The two sides alternate for --rounds rounds and the best figure of each is
kept, so that load from other processes affects both alike.

Output: both figures and the ratio Strata / FAISS per level. Debian's FAISS
1.7.3 is a generic build whose fast-scan SIMD is emulated, so the ratio
against it is a floor; ../shared/REFERENCE.md holds AVX-512 FAISS figures for
IVF fast-scan (not flat), to be compared by hand.

Usage: bench/peers/faiss_fastscan.py [--n 100000] [--d 128] [--M 64]
       [--nq 200] [--k 10] [--repeat 3] [--rounds 3] [--benchtime 1s]
       [--no-go]
"""
import argparse
import os
import re
import subprocess
import sys
import time


def faiss_index(n, d, m, nq):
    import faiss
    import numpy as np

    faiss.omp_set_num_threads(1)
    rng = np.random.default_rng(1234)
    xb = rng.standard_normal((n, d), dtype=np.float32)
    xq = rng.standard_normal((nq, d), dtype=np.float32)
    index = faiss.IndexPQFastScan(d, m, 4, faiss.METRIC_L2)
    t0 = time.perf_counter()
    index.train(xb[: min(n, 20000)])
    index.add(xb)
    return index, xq, time.perf_counter() - t0, faiss.__version__


def faiss_qps(index, xq, k, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        index.search(xq, k)
        best = min(best, time.perf_counter() - t0)
    return len(xq) / best


def go_qps(n, d, m, benchtime):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, STRATA_FS_N=str(n), STRATA_FS_D=str(d), STRATA_FS_M=str(m))
    cmd = ["go", "test", "-run", "^$", "-bench", "^BenchmarkFastScan4Search$",
           "-benchtime", benchtime, "./asm"]
    out = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("go benchmark failed:\n" + out.stdout + out.stderr)
    res = {}
    for line in out.stdout.splitlines():
        mt = re.match(r"BenchmarkFastScan4Search/\S*level=(\w+)-\d+\s.*?([\d.e+]+) queries/s", line)
        if mt:
            res[mt.group(1)] = float(mt.group(2))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--M", type=int, default=64)
    ap.add_argument("--nq", type=int, default=200)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--benchtime", default="1s")
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternate FAISS and Go this many times; best of each")
    ap.add_argument("--no-go", action="store_true", help="only run FAISS")
    a = ap.parse_args()
    if a.d % a.M:
        sys.exit("d must be a multiple of M")

    index, xq, build, ver = faiss_index(a.n, a.d, a.M, a.nq)
    # Alternate the two sides so that load from other processes hits both
    # alike; keep the best figure of each.
    fq, gq = 0.0, {}
    for _ in range(max(1, a.rounds)):
        fq = max(fq, faiss_qps(index, xq, a.k, a.repeat))
        if a.no_go:
            continue
        for level, q in go_qps(a.n, a.d, a.M, a.benchtime).items():
            gq[level] = max(gq.get(level, 0.0), q)
    print(f"config: n={a.n} d={a.d} M={a.M} (4-bit) k={a.k} nq={a.nq}, 1 thread, "
          f"best of {a.rounds} rounds")
    print(f"faiss {ver} IndexPQFastScan: {fq:10.1f} queries/s  "
          f"({fq * a.n / 1e9:.3f} Gcodes/s; train+add {build:.1f} s)")
    for level, q in gq.items():
        print(f"strata level={level:8s}        {q:10.1f} queries/s  "
              f"({q * a.n / 1e9:.3f} Gcodes/s)  ratio strata/faiss = {q / fq:.2f}")


if __name__ == "__main__":
    main()
