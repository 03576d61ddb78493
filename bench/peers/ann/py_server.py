#!/usr/bin/python3
"""Python peer server for strata-bench's ann suite (bench/ann.go).

Usage: /usr/bin/python3 py_server.py faiss-hnswflat|hnswlib-python BASE.fvecs QUERIES.fvecs l2|ip M EFC K

Engines (Debian packages; run with /usr/bin/python3, which sees dist-packages):
  faiss-hnswflat  python3-faiss IndexHNSWFlat(d, M, metric), hnsw.efConstruction = EFC,
                  omp_set_num_threads(1); search = one index.search(queries, k) call.
  hnswlib-python  python3-hnswlib (Debian build, baseline x86-64 SIMD), reference only;
                  search = one knn_query(queries, k, num_threads=1) call.

Line protocol: the same as hnswlib_server.cc (see bench/peer.go).
"""
import json
import os
import resource
import sys
import time

import numpy as np


def read_fvecs(path):
    raw = np.fromfile(path, dtype=np.int32)
    if raw.size == 0:
        return np.zeros((0, 0), dtype=np.float32)
    d = int(raw[0])
    if d <= 0 or raw.size % (d + 1) != 0:
        sys.exit("%s: bad fvecs file" % path)
    m = raw.reshape(-1, d + 1)
    if not np.all(m[:, 0] == d):
        sys.exit("%s: mixed dimensions" % path)
    return np.ascontiguousarray(m[:, 1:].view(np.float32))


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def dpkg_version(pkg):
    try:
        import subprocess
        return subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def main():
    if len(sys.argv) != 8:
        sys.exit(__doc__)
    engine, bpath, qpath, metric, m, efc, k = sys.argv[1:]
    m, efc, k = int(m), int(efc), int(k)
    if metric not in ("l2", "ip"):
        sys.exit("metric must be l2 or ip")
    xb, xq = read_fvecs(bpath), read_fvecs(qpath)
    n, d = xb.shape
    nq = xq.shape[0]
    if engine == "faiss-hnswflat":
        import faiss
        faiss.omp_set_num_threads(1)
        version = faiss.__version__ + " (Debian python3-faiss " + dpkg_version("python3-faiss") + ")"
    elif engine == "hnswlib-python":
        import hnswlib
        version = getattr(hnswlib, "__version__", None) or ("Debian python3-hnswlib " + dpkg_version("python3-hnswlib"))
    else:
        sys.exit("unknown engine " + engine)
    out = sys.stdout
    out.write(json.dumps({"engine": engine, "version": version, "n": n, "nq": nq, "d": d}) + "\n")
    out.flush()
    index = None
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        if f[0] == "quit":
            break
        if f[0] == "build":
            r0 = rss()
            t0, c0 = time.perf_counter(), cpu()
            if engine == "faiss-hnswflat":
                mt = faiss.METRIC_L2 if metric == "l2" else faiss.METRIC_INNER_PRODUCT
                index = faiss.IndexHNSWFlat(d, m, mt)
                index.hnsw.efConstruction = efc
                index.add(xb)
            else:
                index = hnswlib.Index(space=metric, dim=d)
                index.init_index(max_elements=n, ef_construction=efc, M=m, random_seed=42)
                index.add_items(xb, np.arange(n), num_threads=1)
            w, c = time.perf_counter() - t0, cpu() - c0
            out.write(json.dumps({"build_wall_s": w, "build_cpu_s": c, "rss_before_bytes": r0, "rss_after_bytes": rss()}) + "\n")
        elif f[0] == "search":
            ef, minsec = int(f[1]), float(f[2])
            if index is None:
                out.write('{"error":"search before build"}\n')
                out.flush()
                continue
            if engine == "faiss-hnswflat":
                index.hnsw.efSearch = ef
            else:
                index.set_ef(ef)
            reps, ids = 0, None
            t0, c0 = time.perf_counter(), cpu()
            while True:
                if engine == "faiss-hnswflat":
                    _, got = index.search(xq, k)
                else:
                    got, _ = index.knn_query(xq, k=k, num_threads=1)
                if ids is None:
                    ids = np.asarray(got, dtype=np.int64).reshape(-1).tolist()
                reps += 1
                el = time.perf_counter() - t0
                if el >= minsec:
                    break
            c = cpu() - c0
            out.write(json.dumps({"ef": ef, "reps": reps, "wall_s": el, "cpu_s": c, "ids": ids}) + "\n")
        else:
            out.write('{"error":"unknown command"}\n')
        out.flush()


if __name__ == "__main__":
    main()
