#!/usr/bin/python3
"""FAISS peer for engine/ivfpq's BenchmarkSearch on Vaswani USE-512.

Run with Debian's interpreter (python3-faiss lives in its dist-packages):
    /usr/bin/python3 engine/ivfpq/testdata/faiss_compare.py [datasets-dir]
and compare with
    go test -run XXX -bench Search -benchtime 200ms ./engine/ivfpq/

Same settings as the Go benchmark: inner product, nlist=64,
IVF64,PQ64 (8-bit, refine k_factor 4) and IVF64,PQ128x4fs (4-bit fast-scan,
refine k_factor 10), both without residuals (Strata's IP default), one
thread, nprobe in {4, 8, 16, 32}. Queries are searched one at a time (as the
Go benchmark does) and also in one batch. recall@10 is the id intersection
with brute-force inner product.
"""
import os
import sys
import time

import faiss
import numpy as np

faiss.omp_set_num_threads(1)
root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
    "STRATA_DATASETS", os.path.join(os.path.dirname(__file__), "../../../../shared/datasets"))


def fvecs(path):
    a = np.fromfile(path, dtype="int32")
    d = a[0]
    return a.reshape(-1, d + 1)[:, 1:].copy().view("float32")


xb = fvecs(os.path.join(root, "vaswani/use512-docs.fvecs"))
xq = fvecs(os.path.join(root, "vaswani/use512-queries.fvecs"))
d = xb.shape[1]
flat = faiss.IndexFlatIP(d)
flat.add(xb)
_, gt = flat.search(xq, 10)


def recall(ids):
    return np.mean([len(set(ids[i][:10]) & set(gt[i])) / 10 for i in range(len(xq))])


for spec, kf in [("IVF64,PQ128x4fs", 10), ("IVF64,PQ64", 4)]:
    idx = faiss.index_factory(d, spec, faiss.METRIC_INNER_PRODUCT)
    ivf = faiss.extract_index_ivf(idx)
    ivf.by_residual = False
    t = time.time()
    idx.train(xb)
    train = time.time() - t
    ref = faiss.IndexRefineFlat(idx)
    t = time.time()
    ref.add(xb)
    add = time.time() - t
    print(f"{spec}: train {train:.2f}s add {add:.3f}s code bytes/vector {ivf.code_size}")
    for nprobe in [4, 8, 16, 32]:
        ivf.nprobe = nprobe
        for name, index, k_factor in [("raw", idx, None), (f"refine x{kf}", ref, kf)]:
            if k_factor:
                index.k_factor = k_factor
            _, ids = index.search(xq, 10)
            reps = 5
            t = time.time()
            for _ in range(reps):
                for i in range(len(xq)):
                    index.search(xq[i:i + 1], 10)
            single = (time.time() - t) / (reps * len(xq))
            t = time.time()
            for _ in range(reps):
                index.search(xq, 10)
            batch = (time.time() - t) / (reps * len(xq))
            print(f"  nprobe={nprobe:2d} {name:12s} recall@10 {recall(ids):.4f}  "
                  f"{single * 1e6:8.1f} us/query single  {batch * 1e6:8.1f} us/query batched")
