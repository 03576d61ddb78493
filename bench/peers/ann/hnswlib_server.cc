// hnswlib peer server for strata-bench's ann suite (bench/ann.go).
//
// Build:  g++ -O3 -march=native -std=c++17 -o hnswlib_server hnswlib_server.cc
// Run:    hnswlib_server BASE.fvecs QUERIES.fvecs l2|ip M EFC K
//
// Line protocol (one JSON object per reply line, see bench/peer.go):
//   startup      -> {"engine":"hnswlib-native","version":"...","n":N,"nq":NQ,"d":D}
//   build        -> {"build_wall_s":..,"build_cpu_s":..,"rss_before_bytes":..,"rss_after_bytes":..}
//   search EF S  -> {"ef":EF,"reps":R,"wall_s":..,"cpu_s":..,"ids":[nq*k ids, -1 = none]}
//                   the whole query set is searched one query after another on
//                   one thread, repeated until S seconds have passed (R reps);
//                   ids are from the first rep.
//   quit
// hnswlib is header-only (Debian libhnswlib-dev 0.6.2); its level RNG is seeded with 42.
#include <hnswlib/hnswlib.h>

// HNSWLIB_FLAGS: the compiler flags, recorded in the startup version
// (the harness passes -DHNSWLIB_FLAGS="g++ -O3 -march=...").
#ifndef HNSWLIB_FLAGS
#define HNSWLIB_FLAGS "g++ -O3"
#endif
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
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

int main(int argc, char** argv) {
    if (argc != 7) {
        std::fprintf(stderr, "usage: %s BASE.fvecs QUERIES.fvecs l2|ip M EFC K\n", argv[0]);
        return 2;
    }
    int d, dq;
    size_t n, nq;
    std::vector<float> base = read_fvecs(argv[1], &d, &n);
    std::vector<float> qs = read_fvecs(argv[2], &dq, &nq);
    if (d != dq) { std::fprintf(stderr, "dimension mismatch\n"); return 1; }
    std::string metric = argv[3];
    if (metric != "l2" && metric != "ip") { std::fprintf(stderr, "metric must be l2 or ip\n"); return 2; }
    int M = std::atoi(argv[4]), efc = std::atoi(argv[5]), k = std::atoi(argv[6]);
    std::printf("{\"engine\":\"hnswlib-native\",\"version\":\"0.6.2 (header-only, " HNSWLIB_FLAGS ")\",\"n\":%zu,\"nq\":%zu,\"d\":%d}\n", n, nq, d);
    std::fflush(stdout);

    hnswlib::SpaceInterface<float>* space = nullptr;
    hnswlib::HierarchicalNSW<float>* index = nullptr;
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string cmd;
        in >> cmd;
        if (cmd == "quit") break;
        if (cmd == "build") {
            long r0 = rss_bytes();
            double t0 = now(), c0 = cpu_seconds();
            if (metric == "l2") space = new hnswlib::L2Space(d);
            else space = new hnswlib::InnerProductSpace(d);
            index = new hnswlib::HierarchicalNSW<float>(space, n, M, efc, 42);
            for (size_t i = 0; i < n; i++) index->addPoint(&base[i * d], i);
            double w = now() - t0, c = cpu_seconds() - c0;
            std::printf("{\"build_wall_s\":%.6f,\"build_cpu_s\":%.6f,\"rss_before_bytes\":%ld,\"rss_after_bytes\":%ld}\n", w, c, r0, rss_bytes());
        } else if (cmd == "search") {
            int ef = 0;
            double minsec = 0;
            in >> ef >> minsec;
            if (!index) { std::printf("{\"error\":\"search before build\"}\n"); std::fflush(stdout); continue; }
            index->setEf(ef);
            std::vector<long> ids(nq * k, -1);
            size_t reps = 0;
            double t0 = now(), c0 = cpu_seconds(), el = 0;
            do {
                for (size_t q = 0; q < nq; q++) {
                    auto res = index->searchKnn(&qs[q * d], k);
                    if (reps == 0) {
                        // the priority queue pops worst first
                        size_t m = res.size();
                        while (!res.empty()) { m--; ids[q * k + m] = (long)res.top().second; res.pop(); }
                    }
                }
                reps++;
                el = now() - t0;
            } while (el < minsec);
            double c = cpu_seconds() - c0;
            std::string s;
            s.reserve(nq * k * 7);
            for (size_t i = 0; i < ids.size(); i++) { if (i) s += ','; s += std::to_string(ids[i]); }
            std::printf("{\"ef\":%d,\"reps\":%zu,\"wall_s\":%.6f,\"cpu_s\":%.6f,\"ids\":[%s]}\n", ef, reps, el, c, s.c_str());
        } else {
            std::printf("{\"error\":\"unknown command\"}\n");
        }
        std::fflush(stdout);
    }
    delete index;
    delete space;
    return 0;
}
