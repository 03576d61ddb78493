// hnswlib peer driver for Strata's HNSW benchmarks (issue 4).
//
// Builds an hnswlib 0.6.2 index (Debian libhnswlib-dev, header-only) over
// an fvecs base set single-threaded, then runs all queries single-threaded
// for each efSearch and prints recall@k against exact brute force and QPS.
//
// Build:  g++ -O3 -march=native -std=c++17 -o hnswlib_bench main.cc -I/usr/include
// Run:    ./hnswlib_bench BASE.fvecs QUERIES.fvecs METRIC M EFC K EF1,EF2,...
//         METRIC is l2, ip or cosine (cosine = ip over normalised vectors).
// Output: one tab-separated line per efSearch:
//         engine M efc ef recall@k qps_wall qps_cpu build_wall_s build_cpu_s
// (the _cpu figures divide by this thread's CPU time, which other
// processes on shared cores do not inflate).
#include <hnswlib/hnswlib.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static std::vector<float> read_fvecs(const char* path, int* dim, size_t* n) {
    std::ifstream f(path, std::ios::binary);
    if (!f) { std::fprintf(stderr, "cannot open %s\n", path); std::exit(1); }
    std::vector<float> out;
    *dim = 0;
    *n = 0;
    int d;
    while (f.read(reinterpret_cast<char*>(&d), 4)) {
        if (*dim == 0) *dim = d;
        if (d != *dim) { std::fprintf(stderr, "%s: mixed dimensions\n", path); std::exit(1); }
        size_t at = out.size();
        out.resize(at + d);
        if (!f.read(reinterpret_cast<char*>(&out[at]), 4 * (size_t)d)) {
            std::fprintf(stderr, "%s: truncated\n", path);
            std::exit(1);
        }
        ++*n;
    }
    return out;
}

// Thread CPU seconds: robust to other processes sharing the cores.
static double cpu_seconds() {
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static void normalise(std::vector<float>& v, int d) {
    for (size_t i = 0; i + d <= v.size(); i += d) {
        double s = 0;
        for (int j = 0; j < d; j++) s += (double)v[i + j] * v[i + j];
        if (s == 0) continue;
        float r = (float)(1 / std::sqrt(s));
        for (int j = 0; j < d; j++) v[i + j] *= r;
    }
}

int main(int argc, char** argv) {
    if (argc != 8) {
        std::fprintf(stderr, "usage: %s BASE.fvecs QUERIES.fvecs l2|ip|cosine M EFC K EF1,EF2,...\n", argv[0]);
        return 2;
    }
    int d, dq;
    size_t n, nq;
    std::vector<float> base = read_fvecs(argv[1], &d, &n);
    std::vector<float> qs = read_fvecs(argv[2], &dq, &nq);
    if (d != dq) { std::fprintf(stderr, "dimension mismatch\n"); return 1; }
    std::string metric = argv[3];
    int M = std::atoi(argv[4]), efc = std::atoi(argv[5]), k = std::atoi(argv[6]);
    std::vector<int> efs;
    {
        std::stringstream ss(argv[7]);
        std::string tok;
        while (std::getline(ss, tok, ',')) efs.push_back(std::atoi(tok.c_str()));
    }
    bool l2 = metric == "l2";
    if (metric == "cosine") { normalise(base, d); normalise(qs, d); }

    // Exact ground truth (double precision).
    std::vector<std::vector<size_t>> truth(nq);
    for (size_t q = 0; q < nq; q++) {
        std::vector<std::pair<double, size_t>> all(n);
        for (size_t i = 0; i < n; i++) {
            double s = 0;
            for (int j = 0; j < d; j++) {
                double a = qs[q * d + j], b = base[i * d + j];
                s += l2 ? (a - b) * (a - b) : -a * b;
            }
            all[i] = {s, i};
        }
        std::partial_sort(all.begin(), all.begin() + k, all.end());
        for (int j = 0; j < k; j++) truth[q].push_back(all[j].second);
    }

    hnswlib::SpaceInterface<float>* space;
    if (l2) space = new hnswlib::L2Space(d);
    else space = new hnswlib::InnerProductSpace(d);
    auto t0 = std::chrono::steady_clock::now();
    double c0 = cpu_seconds();
    auto* index = new hnswlib::HierarchicalNSW<float>(space, n, M, efc, 42);
    for (size_t i = 0; i < n; i++) index->addPoint(&base[i * d], i);
    double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double build_cpu = cpu_seconds() - c0;

    for (int ef : efs) {
        index->setEf(ef);
        std::vector<std::vector<size_t>> got(nq);
        // Repeat the query set until at least 0.5 s has passed.
        size_t rounds = 0;
        auto s0 = std::chrono::steady_clock::now();
        double cs0 = cpu_seconds();
        double el = 0;
        do {
            for (size_t q = 0; q < nq; q++) {
                auto res = index->searchKnn(&qs[q * d], k);
                if (rounds == 0) {
                    std::vector<size_t> ids;
                    while (!res.empty()) { ids.push_back(res.top().second); res.pop(); }
                    std::reverse(ids.begin(), ids.end());
                    got[q] = ids;
                }
            }
            rounds++;
            el = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
        } while (el < 0.5);
        double cpu = cpu_seconds() - cs0;
        double hits = 0;
        for (size_t q = 0; q < nq; q++)
            for (size_t id : got[q])
                if (std::find(truth[q].begin(), truth[q].end(), id) != truth[q].end()) hits++;
        std::printf("hnswlib-native\t%d\t%d\t%d\t%.4f\t%.1f\t%.1f\t%.3f\t%.3f\n", M, efc, ef, hits / (nq * (double)k),
                    rounds * nq / el, rounds * nq / cpu, build_s, build_cpu);
    }
    delete index;
    delete space;
    return 0;
}
