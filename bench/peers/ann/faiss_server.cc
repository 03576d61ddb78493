// FAISS peer server for strata-bench's ann suite (bench/ann.go), linked
// against libfaiss_avx2.so built by scripts/peers-strong.sh (FAISS 1.7.3
// from Debian's source package, FAISS_OPT_LEVEL=avx2, OpenBLAS).
//
// Build (bench/ann_strong.go does this, cached next to the library):
//   g++ -O2 -std=c++17 -mavx2 -mfma -mf16c -mpopcnt -fopenmp -I DIR/include
//       -o faiss_server faiss_server.cc -L DIR/build/faiss -lfaiss_avx2 -Wl,-rpath,DIR/build/faiss
// Run:
//   faiss_server faiss-avx2-hnswflat|faiss-avx2-flat BASE.fvecs QUERIES.fvecs l2|ip M EFC K
//   faiss_server faiss-avx2-ivfpq8|faiss-avx2-ivfpq4fs BASE.fvecs QUERIES.fvecs l2|ip M NLIST K NBITS KFACTOR RESIDUAL
//
// Engines (each the C++ counterpart of bench/peers/ann/py_server.py's FAISS engine):
//   faiss-avx2-hnswflat  IndexHNSWFlat(d, M, metric), hnsw.efConstruction = EFC; "search EF S"
//                        sets hnsw.efSearch.
//   faiss-avx2-ivfpq8    IndexRefineFlat(index_factory(d, "IVF{NLIST},PQ{M}", metric)),
//                        k_factor = KFACTOR, by_residual = RESIDUAL, no polysemous training;
//                        build = train(base) then add(base), timed separately;
//                        "search NPROBE S" sets the IVF's nprobe.
//   faiss-avx2-ivfpq4fs  the same with "IVF{NLIST},PQ{M}x4fs" (4-bit fast-scan).
//   faiss-avx2-flat      IndexFlatL2(d) / IndexFlatIP(d) (M and EFC ignored); "search 0 S".
// One thread throughout: omp_set_num_threads(1); the harness also sets
// OMP_NUM_THREADS=1 and OPENBLAS_NUM_THREADS=1 (k-means and the flat batch
// search call OpenBLAS sgemm).
//
// Line protocol: the same as hnswlib_server.cc (see bench/peer.go). A FAISS
// exception is answered with {"error": "..."}; bad arguments exit with status 2.
#include <faiss/IVFlib.h>
#include <faiss/Index.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVF.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/IndexIVFPQFastScan.h>
#include <faiss/IndexRefine.h>
#include <faiss/impl/FaissException.h>
#include <faiss/index_factory.h>
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

static std::vector<float> read_fvecs(const char* path, int* dim, size_t* n) {
    std::ifstream f(path, std::ios::binary);
    if (!f) { std::fprintf(stderr, "cannot open %s\n", path); std::exit(1); }
    std::vector<float> out;
    *dim = 0; *n = 0;
    int d;
    while (f.read(reinterpret_cast<char*>(&d), 4)) {
        if (*dim == 0) *dim = d;
        if (d != *dim || d <= 0) { std::fprintf(stderr, "%s: bad dimension\n", path); std::exit(1); }
        size_t at = out.size();
        out.resize(at + d);
        if (!f.read(reinterpret_cast<char*>(&out[at]), 4 * (size_t)d)) { std::fprintf(stderr, "%s: truncated\n", path); std::exit(1); }
        ++*n;
    }
    return out;
}

static double cpu_seconds() {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static long rss_bytes() {
    long pages = 0, rss = 0;
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (std::fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
    std::fclose(f);
    return rss * sysconf(_SC_PAGESIZE);
}

static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// JSON string body: quotes, backslashes and control characters escaped.
static std::string json_escape(const std::string& s) {
    std::string o;
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') { o += '\\'; o += (char)c; }
        else if (c < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); o += b; }
        else o += (char)c;
    }
    return o;
}

// The FAISS and BLAS/LAPACK shared objects mapped into this process.
static std::string mapped_libs() {
    std::ifstream f("/proc/self/maps");
    std::set<std::string> libs;
    std::string line;
    while (std::getline(f, line)) {
        size_t sp = line.rfind(' ');
        if (sp == std::string::npos) continue;
        std::string p = line.substr(sp + 1);
        if (p.find("blas") != std::string::npos || p.find("lapack") != std::string::npos || p.find("faiss") != std::string::npos)
            libs.insert(p);
    }
    std::string o;
    for (const auto& l : libs) { if (!o.empty()) o += ", "; o += l; }
    return o.empty() ? "none mapped" : o;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s ENGINE BASE.fvecs QUERIES.fvecs l2|ip M EFC K [NBITS KFACTOR RESIDUAL]\n", argv[0]);
        return 2;
    }
    std::string engine = argv[1];
    bool ivf = engine == "faiss-avx2-ivfpq8" || engine == "faiss-avx2-ivfpq4fs";
    bool hnsw = engine == "faiss-avx2-hnswflat", flat = engine == "faiss-avx2-flat";
    if (!ivf && !hnsw && !flat) { std::fprintf(stderr, "unknown engine %s\n", engine.c_str()); return 2; }
    if (argc != (ivf ? 11 : 8)) {
        std::fprintf(stderr, "%s: %d arguments, want %d\n", engine.c_str(), argc - 1, ivf ? 10 : 7);
        return 2;
    }
    std::string metric = argv[4];
    if (metric != "l2" && metric != "ip") { std::fprintf(stderr, "metric must be l2 or ip\n"); return 2; }
    int M = std::atoi(argv[5]), efc = std::atoi(argv[6]), k = std::atoi(argv[7]);
    int nbits = 0, kfactor = 0, residual = 0;
    if (ivf) {
        nbits = std::atoi(argv[8]); kfactor = std::atoi(argv[9]); residual = std::atoi(argv[10]);
        int want = engine == "faiss-avx2-ivfpq8" ? 8 : 4;
        if (nbits != want) { std::fprintf(stderr, "%s: NBITS = %d, want %d\n", engine.c_str(), nbits, want); return 2; }
        if (kfactor < 1 || efc < 1) { std::fprintf(stderr, "%s: KFACTOR and NLIST must be ≥ 1\n", engine.c_str()); return 2; }
    }
    if (k < 1 || ((hnsw || ivf) && M < 1)) { std::fprintf(stderr, "K and M must be ≥ 1\n"); return 2; }
    int d, dq;
    size_t n, nq;
    std::vector<float> base = read_fvecs(argv[2], &d, &n);
    std::vector<float> qs = read_fvecs(argv[3], &dq, &nq);
    if (d != dq) { std::fprintf(stderr, "dimension mismatch\n"); return 1; }
    omp_set_num_threads(1);
    faiss::MetricType mt = metric == "l2" ? faiss::METRIC_L2 : faiss::METRIC_INNER_PRODUCT;
    // Map the library (and its BLAS) before naming it: it is loaded at startup.
    std::string version = std::to_string(FAISS_VERSION_MAJOR) + "." + std::to_string(FAISS_VERSION_MINOR) + "." +
                          std::to_string(FAISS_VERSION_PATCH) +
                          " (Debian source 1.7.3-2, FAISS_OPT_LEVEL=avx2, C++ driver); libraries: " + mapped_libs();
    std::printf("{\"engine\":\"%s\",\"version\":\"%s\",\"n\":%zu,\"nq\":%zu,\"d\":%d}\n", engine.c_str(),
                json_escape(version).c_str(), n, nq, d);
    std::fflush(stdout);

    std::unique_ptr<faiss::Index> index;
    faiss::IndexIVF* ivfindex = nullptr;
    faiss::IndexHNSW* hnswindex = nullptr;
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string cmd;
        in >> cmd;
        if (cmd.empty()) continue;
        if (cmd == "quit") break;
        try {
            if (cmd == "build") {
                index.reset();
                ivfindex = nullptr;
                hnswindex = nullptr;
                long r0 = rss_bytes();
                double t0 = now(), c0 = cpu_seconds();
                std::string extra;
                if (ivf) {
                    std::string spec = "IVF" + std::to_string(efc) + ",PQ" + std::to_string(M) + (nbits == 4 ? "x4fs" : "");
                    faiss::Index* b = faiss::index_factory(d, spec.c_str(), mt);
                    ivfindex = faiss::ivflib::extract_index_ivf(b);
                    size_t code_size = ivfindex->code_size;
                    if (auto* pq = dynamic_cast<faiss::IndexIVFPQ*>(ivfindex)) {
                        pq->by_residual = residual != 0;
                        // index_factory turns polysemous training on; the search
                        // does not use it (polysemous_ht = 0), as py_server.py.
                        pq->do_polysemous_training = false;
                    } else if (auto* fs = dynamic_cast<faiss::IndexIVFPQFastScan*>(ivfindex)) {
                        fs->by_residual = residual != 0;
                    } else {
                        delete b;
                        throw std::runtime_error("index_factory(" + spec + ") is not IVFPQ / IVFPQFastScan");
                    }
                    auto* r = new faiss::IndexRefineFlat(b);
                    r->own_fields = true;
                    r->k_factor = kfactor;
                    index.reset(r);
                    index->train(n, base.data());
                    double tw = now() - t0, tc = cpu_seconds() - c0;
                    index->add(n, base.data());
                    double aw = now() - t0 - tw, ac = cpu_seconds() - c0 - tc;
                    char buf[1024];
                    std::snprintf(buf, sizeof buf,
                                  ",\"train_wall_s\":%.6f,\"train_cpu_s\":%.6f,\"add_wall_s\":%.6f,\"add_cpu_s\":%.6f,"
                                  "\"bytes_per_vector\":%zu,\"index_desc\":\"IndexRefineFlat(%s, k_factor=%d, by_residual=%s, spherical=%s%s) [avx2]\"",
                                  tw, tc, aw, ac, code_size + sizeof(faiss::Index::idx_t), spec.c_str(), kfactor,
                                  residual ? "True" : "False", ivfindex->cp.spherical ? "True" : "False",
                                  nbits == 8 ? ", no polysemous training" : "");
                    extra = buf;
                } else if (flat) {
                    if (mt == faiss::METRIC_L2) index.reset(new faiss::IndexFlatL2(d));
                    else index.reset(new faiss::IndexFlatIP(d));
                    index->add(n, base.data());
                    extra = ",\"bytes_per_vector\":" + std::to_string(4 * d) + ",\"index_desc\":\"" +
                            (mt == faiss::METRIC_L2 ? "IndexFlatL2" : "IndexFlatIP") + " [avx2]\"";
                } else {
                    hnswindex = new faiss::IndexHNSWFlat(d, M, mt);
                    index.reset(hnswindex);
                    hnswindex->hnsw.efConstruction = efc;
                    index->add(n, base.data());
                }
                double w = now() - t0, c = cpu_seconds() - c0;
                std::printf("{\"build_wall_s\":%.6f,\"build_cpu_s\":%.6f,\"rss_before_bytes\":%ld,\"rss_after_bytes\":%ld%s}\n",
                            w, c, r0, rss_bytes(), extra.c_str());
            } else if (cmd == "search") {
                int ef = 0;
                double minsec = 0;
                if (!(in >> ef >> minsec) || ef < 0) {
                    std::printf("{\"error\":\"search wants EF S\"}\n");
                } else if (!index) {
                    std::printf("{\"error\":\"search before build\"}\n");
                } else {
                    if (ivfindex) ivfindex->nprobe = ef;
                    if (hnswindex) hnswindex->hnsw.efSearch = ef;
                    std::vector<float> dist(nq * k);
                    std::vector<faiss::Index::idx_t> got(nq * k), ids;
                    size_t reps = 0;
                    double t0 = now(), c0 = cpu_seconds(), el = 0;
                    do {
                        index->search(nq, qs.data(), k, dist.data(), got.data());
                        if (reps == 0) ids = got;
                        reps++;
                        el = now() - t0;
                    } while (el < minsec);
                    double c = cpu_seconds() - c0;
                    std::string s;
                    s.reserve(nq * k * 7);
                    for (size_t i = 0; i < ids.size(); i++) { if (i) s += ','; s += std::to_string((long long)ids[i]); }
                    std::printf("{\"ef\":%d,\"reps\":%zu,\"wall_s\":%.6f,\"cpu_s\":%.6f,\"ids\":[%s]}\n", ef, reps, el, c, s.c_str());
                }
            } else {
                std::printf("{\"error\":\"unknown command\"}\n");
            }
        } catch (const std::exception& e) {
            std::printf("{\"error\":\"%s\"}\n", json_escape(e.what()).c_str());
        }
        std::fflush(stdout);
    }
    return 0;
}
