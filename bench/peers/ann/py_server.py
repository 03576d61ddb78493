#!/usr/bin/python3
"""Python peer server for strata-bench's ann suite (bench/ann.go).

Usage: /usr/bin/python3 py_server.py faiss-hnswflat|hnswlib-python|faiss-flat BASE.fvecs QUERIES.fvecs l2|ip M EFC K
       /usr/bin/python3 py_server.py faiss-ivfpq8|faiss-ivfpq4fs BASE.fvecs QUERIES.fvecs l2|ip M NLIST K NBITS KFACTOR RESIDUAL

Engines (Debian packages; run with /usr/bin/python3, which sees dist-packages):
  faiss-hnswflat  python3-faiss IndexHNSWFlat(d, M, metric), hnsw.efConstruction = EFC,
                  omp_set_num_threads(1); search = one index.search(queries, k) call.
  faiss-ivfpq8    python3-faiss IndexRefineFlat(index_factory(d, "IVF{NLIST},PQ{M}", metric)),
                  k_factor = KFACTOR, by_residual = RESIDUAL (0/1), do_polysemous_training = False
                  (the search does not use it); build = train(base) then
                  add(base), timed separately; "search NPROBE S" sets the IVF's nprobe.
  faiss-ivfpq4fs  the same with "IVF{NLIST},PQ{M}x4fs" (4-bit fast-scan, 32-vector blocks).
                  NBITS must be 8 for faiss-ivfpq8 and 4 for faiss-ivfpq4fs.
                  The hello line's version names the BLAS libraries mapped into the process
                  (/proc/self/maps), i.e. the BLAS FAISS's k-means really used.
  faiss-flat      python3-faiss IndexFlatL2(d) / IndexFlatIP(d) (M and EFC ignored); one thread
                  (OMP and OpenBLAS: its batch search is an sgemm); "search 0 S".
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


def blas_libs():
    """Basenames of the BLAS/LAPACK shared objects mapped into this process."""
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split()[-1]
                if "blas" in p or "lapack" in p or "mkl" in p:
                    libs.add(p)
    except OSError:
        pass
    return ", ".join(sorted(libs)) or "none mapped"


IVF_ENGINES = {"faiss-ivfpq8": 8, "faiss-ivfpq4fs": 4}


def main():
    ivf = len(sys.argv) > 1 and sys.argv[1] in IVF_ENGINES
    if len(sys.argv) != (11 if ivf else 8):
        sys.exit(__doc__)
    engine, bpath, qpath, metric, m, efc, k = sys.argv[1:8]
    m, efc, k = int(m), int(efc), int(k)
    nbits = kfactor = residual = 0
    if ivf:
        nbits, kfactor, residual = (int(a) for a in sys.argv[8:11])
        if nbits != IVF_ENGINES[engine]:
            sys.exit("%s: NBITS = %d, want %d" % (engine, nbits, IVF_ENGINES[engine]))
    if metric not in ("l2", "ip"):
        sys.exit("metric must be l2 or ip")
    xb, xq = read_fvecs(bpath), read_fvecs(qpath)
    n, d = xb.shape
    nq = xq.shape[0]
    if engine in ("faiss-hnswflat", "faiss-flat") or ivf:
        import faiss
        faiss.omp_set_num_threads(1)
        version = faiss.__version__ + " (Debian python3-faiss " + dpkg_version("python3-faiss") + ")"
        if ivf:
            version += "; BLAS: " + blas_libs()
    elif engine == "hnswlib-python":
        import hnswlib
        version = getattr(hnswlib, "__version__", None) or ("Debian python3-hnswlib " + dpkg_version("python3-hnswlib"))
    else:
        sys.exit("unknown engine " + engine)
    out = sys.stdout
    out.write(json.dumps({"engine": engine, "version": version, "n": n, "nq": nq, "d": d}) + "\n")
    out.flush()
    index = None
    ivfindex = None
    extra = {}
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        if f[0] == "quit":
            break
        if f[0] == "build":
            r0 = rss()
            t0, c0 = time.perf_counter(), cpu()
            extra = {}
            if ivf:
                mt = faiss.METRIC_L2 if metric == "l2" else faiss.METRIC_INNER_PRODUCT
                spec = "IVF%d,PQ%d" % (efc, m) + ("x4fs" if nbits == 4 else "")
                base = faiss.index_factory(d, spec, mt)
                ivfindex = faiss.extract_index_ivf(base)
                ivfindex.by_residual = bool(residual)
                if nbits == 8:
                    # index_factory turns on polysemous training for IVFPQ: a
                    # code-reordering pass that only serves polysemous
                    # filtering (polysemous_ht, 0 = off here) and that Strata
                    # does not do; it would dominate the training time.
                    faiss.downcast_index(ivfindex).do_polysemous_training = False
                index = faiss.IndexRefineFlat(base)
                index.k_factor = kfactor
                index.train(xb)
                tw, tc = time.perf_counter() - t0, cpu() - c0
                index.add(xb)
                extra = {"train_wall_s": tw, "train_cpu_s": tc,
                         "add_wall_s": time.perf_counter() - t0 - tw, "add_cpu_s": cpu() - c0 - tc,
                         # PQ code + 8-byte id per vector in the IVF lists (FAISS idx_t);
                         # IndexRefineFlat's raw copy (4·d bytes) not counted, as for Strata.
                         "bytes_per_vector": ivfindex.code_size + 8,
                         # cp.spherical: FAISS's IndexIVF sets it for inner product.
                         "index_desc": "IndexRefineFlat(%s, k_factor=%d, by_residual=%s, spherical=%s%s)" % (
                             spec, kfactor, bool(residual), bool(ivfindex.cp.spherical),
                             ", no polysemous training" if nbits == 8 else "")}
            elif engine == "faiss-flat":
                index = faiss.IndexFlatL2(d) if metric == "l2" else faiss.IndexFlatIP(d)
                index.add(xb)
                extra = {"bytes_per_vector": 4 * d, "index_desc": type(index).__name__}
            elif engine == "faiss-hnswflat":
                mt = faiss.METRIC_L2 if metric == "l2" else faiss.METRIC_INNER_PRODUCT
                index = faiss.IndexHNSWFlat(d, m, mt)
                index.hnsw.efConstruction = efc
                index.add(xb)
            else:
                index = hnswlib.Index(space=metric, dim=d)
                index.init_index(max_elements=n, ef_construction=efc, M=m, random_seed=42)
                index.add_items(xb, np.arange(n), num_threads=1)
            w, c = time.perf_counter() - t0, cpu() - c0
            reply = {"build_wall_s": w, "build_cpu_s": c, "rss_before_bytes": r0, "rss_after_bytes": rss()}
            reply.update(extra)
            out.write(json.dumps(reply) + "\n")
        elif f[0] == "search":
            ef, minsec = int(f[1]), float(f[2])
            if index is None:
                out.write('{"error":"search before build"}\n')
                out.flush()
                continue
            if ivf:
                ivfindex.nprobe = ef
            elif engine == "faiss-hnswflat":
                index.hnsw.efSearch = ef
            elif engine == "faiss-flat":
                pass
            else:
                index.set_ef(ef)
            reps, ids = 0, None
            t0, c0 = time.perf_counter(), cpu()
            while True:
                if engine != "hnswlib-python":
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
