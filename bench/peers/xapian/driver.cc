// Xapian peer driver for Strata's lexical benchmark (issue 6, bench/lexical).
//
// Drives Xapian 1.4 natively (no interpreter between the harness and the
// engine). Two commands, each printing one JSON object on stdout:
//
//   driver index DBDIR CORPUS STEM MODE
//       Builds a new database in DBDIR from CORPUS (one document per line;
//       line i, 0-based, is the document with docid i+1) in one
//       transaction, then compacts it (Database::compact, FULL,
//       NO_RENUMBER) and replaces it with the compacted copy; the index
//       time includes the compaction.
//       -> {"engine","version","docs","index_wall_s","index_cpu_s","index_bytes",
//           "uncompacted_bytes","compact_wall_s"}
//   driver query DBDIR QUERIES STEM MODE OP K PASSES
//       Runs every query of QUERIES (one per line) top-K, single thread,
//       one untimed warm-up pass then PASSES timed passes over the batch.
//       -> {"engine","version","op","k","passes","wall_s","cpu_s",
//           "wall_s_all":[..],"cpu_s_all":[..],"hits","results":[[ordinal,..],..]}
//       wall_s / cpu_s are the best (smallest) pass; results are ordinals
//       (docid-1), best first, from the warm-up pass.
//
// STEM is "none" or "english" (Xapian::Stem("english") with STEM_SOME at
// index and query time). MODE is "raw" (TermGenerator over the text,
// QueryParser over the query, default op OP) or "pretok" (the text is
// already tokens separated by single spaces: each token is one term at the
// next position; a query is OP over its tokens). OP is "or", "and" or
// "phrase" (OP_PHRASE over the tokens with window = their count; raw mode:
// the query line in double quotes through QueryParser with FLAG_PHRASE).
// Weighting: BM25Weight(k1=1.2, k2=0, k3=1, b=0.75, min_normlen=0.5), i.e.
// Xapian's defaults apart from k1 and b. Two of them make it differ from
// textbook BM25 (and from Strata's): the IDF is ln(r), r = (N-n+0.5)/(n+0.5),
// replaced by ln(r/2+1) when r < 2, and |D|/avgdl is clamped from below at
// min_normlen. k3 has no effect here: QueryParser and OP_OR give every query
// word, repeated or not, its own leaf with wqf 1, and the leaves' weights
// add (k3 = 0, 1 and 10 give identical runs). engine/bm25's
// TestXapianWeightingExplainsGap reproduces this driver's Vaswani quality
// figures from those two rules alone.
//
// Build: g++ -O2 -std=c++17 -o xapian_driver driver.cc -lxapian
#include <xapian.h>

#include <sys/stat.h>
#include <time.h>
#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

static double now_wall() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now_cpu() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long long dir_bytes(const std::string& dir) {
    long long total = 0;
    DIR* d = opendir(dir.c_str());
    if (!d) return -1;
    while (dirent* e = readdir(d)) {
        if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
        std::string p = dir + "/" + e->d_name;
        struct stat st;
        if (stat(p.c_str(), &st) == 0) {
            if (S_ISDIR(st.st_mode)) total += dir_bytes(p);
            else total += st.st_size;
        }
    }
    closedir(d);
    return total;
}

static void die(const std::string& msg) {
    std::string m;
    for (char c : msg) {
        if (c == '"' || c == '\\') m += '\\';
        if (c == '\n') { m += "\\n"; continue; }
        m += c;
    }
    std::printf("{\"error\":\"xapian driver: %s\"}\n", m.c_str());
    std::exit(1);
}

static std::vector<std::string> read_lines(const char* path) {
    std::ifstream f(path);
    if (!f) die(std::string("cannot open ") + path);
    std::vector<std::string> out;
    std::string line;
    while (std::getline(f, line)) out.push_back(line);
    return out;
}

static std::vector<std::string> split_spaces(const std::string& s) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && s[i] == ' ') i++;
        size_t j = i;
        while (j < s.size() && s[j] != ' ') j++;
        if (j > i) out.push_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

static Xapian::BM25Weight weighting() { return Xapian::BM25Weight(1.2, 0, 1, 0.75, 0.5); }

static int cmd_index(const std::string& dbdir, const char* corpus, bool stem, bool pretok) {
    std::vector<std::string> docs = read_lines(corpus);
    double w0 = now_wall(), c0 = now_cpu();
    {
        Xapian::WritableDatabase db(dbdir, Xapian::DB_CREATE_OR_OVERWRITE);
        Xapian::TermGenerator tg;
        if (stem) {
            tg.set_stemmer(Xapian::Stem("english"));
            tg.set_stemming_strategy(Xapian::TermGenerator::STEM_SOME);
        }
        db.begin_transaction(false);
        for (const std::string& text : docs) {
            Xapian::Document doc;
            if (pretok) {
                Xapian::termpos pos = 0;
                size_t i = 0;
                while (i < text.size()) {
                    size_t j = text.find(' ', i);
                    if (j == std::string::npos) j = text.size();
                    if (j > i) doc.add_posting(text.substr(i, j - i), ++pos);
                    i = j + 1;
                }
            } else {
                tg.set_document(doc);
                tg.index_text(text);
            }
            db.add_document(doc);
        }
        db.commit_transaction();
        db.close();
    }
    // Compact into a fresh database (full, so blocks are packed), as a
    // static index would be shipped; it replaces the original.
    long long uncompacted = dir_bytes(dbdir);
    double cw0 = now_wall();
    std::string tmp = dbdir + ".compact";
    {
        Xapian::Database src(dbdir);
        src.compact(tmp, Xapian::DBCOMPACT_NO_RENUMBER | Xapian::Compactor::FULL);
    }
    std::string cmd = "rm -rf '" + dbdir + "' && mv '" + tmp + "' '" + dbdir + "'";
    if (std::system(cmd.c_str()) != 0) die("replacing the database with its compacted copy failed");
    double compact_wall = now_wall() - cw0;
    double wall = now_wall() - w0, cpu = now_cpu() - c0;
    std::printf("{\"engine\":\"xapian\",\"version\":\"%s\",\"docs\":%zu,\"index_wall_s\":%.6f,"
                "\"index_cpu_s\":%.6f,\"index_bytes\":%lld,\"uncompacted_bytes\":%lld,\"compact_wall_s\":%.6f}\n",
                Xapian::version_string(), docs.size(), wall, cpu, dir_bytes(dbdir), uncompacted, compact_wall);
    return 0;
}

static int cmd_query(const std::string& dbdir, const char* qpath, bool stem, bool pretok, bool conj,
                     bool phrase, int k, int passes) {
    std::vector<std::string> lines = read_lines(qpath);
    Xapian::Database db(dbdir);
    Xapian::Enquire enq(db);
    enq.set_weighting_scheme(weighting());
    Xapian::QueryParser qp;
    qp.set_database(db);
    qp.set_default_op(conj ? Xapian::Query::OP_AND : Xapian::Query::OP_OR);
    if (stem) {
        qp.set_stemmer(Xapian::Stem("english"));
        qp.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
    }
    std::vector<std::vector<std::string>> toks;
    if (pretok)
        for (const std::string& l : lines) toks.push_back(split_spaces(l));
    std::vector<std::vector<long>> results(lines.size());
    std::vector<double> walls, cpus;
    long hits = 0;
    for (int pass = 0; pass <= passes; pass++) {
        double w0 = now_wall(), c0 = now_cpu();
        for (size_t i = 0; i < lines.size(); i++) {
            Xapian::Query q;
            if (pretok && phrase) {
                q = Xapian::Query(Xapian::Query::OP_PHRASE, toks[i].begin(), toks[i].end(), toks[i].size());
            } else if (pretok) {
                q = Xapian::Query(conj ? Xapian::Query::OP_AND : Xapian::Query::OP_OR, toks[i].begin(),
                                  toks[i].end());
            } else if (phrase) {
                q = qp.parse_query("\"" + lines[i] + "\"", Xapian::QueryParser::FLAG_PHRASE);
            } else {
                q = qp.parse_query(lines[i]);
            }
            enq.set_query(q);
            Xapian::MSet m = enq.get_mset(0, k);
            if (pass == 0) {
                for (Xapian::MSetIterator it = m.begin(); it != m.end(); ++it) results[i].push_back(long(*it) - 1);
                hits += m.size();
            }
        }
        double wall = now_wall() - w0, cpu = now_cpu() - c0;
        if (pass > 0) {
            walls.push_back(wall);
            cpus.push_back(cpu);
        }
    }
    double bw = 0, bc = 0;
    for (size_t i = 0; i < walls.size(); i++) {
        if (i == 0 || walls[i] < bw) bw = walls[i];
        if (i == 0 || cpus[i] < bc) bc = cpus[i];
    }
    std::ostringstream o;
    o.precision(9);
    o << "{\"engine\":\"xapian\",\"version\":\"" << Xapian::version_string() << "\",\"op\":\""
      << (phrase ? "phrase" : conj ? "and" : "or") << "\",\"k\":" << k << ",\"passes\":" << passes << ",\"wall_s\":" << bw
      << ",\"cpu_s\":" << bc << ",\"wall_s_all\":[";
    for (size_t i = 0; i < walls.size(); i++) o << (i ? "," : "") << walls[i];
    o << "],\"cpu_s_all\":[";
    for (size_t i = 0; i < cpus.size(); i++) o << (i ? "," : "") << cpus[i];
    o << "],\"hits\":" << hits << ",\"results\":[";
    for (size_t i = 0; i < results.size(); i++) {
        o << (i ? ",[" : "[");
        for (size_t j = 0; j < results[i].size(); j++) o << (j ? "," : "") << results[i][j];
        o << "]";
    }
    o << "]}\n";
    std::cout << o.str();
    return 0;
}

int main(int argc, char** argv) {
    try {
        if (argc == 6 && std::strcmp(argv[1], "index") == 0) {
            return cmd_index(argv[2], argv[3], std::strcmp(argv[4], "english") == 0,
                             std::strcmp(argv[5], "pretok") == 0);
        }
        if (argc == 9 && std::strcmp(argv[1], "query") == 0) {
            int k = std::atoi(argv[7]), passes = std::atoi(argv[8]);
            if (k < 1 || passes < 1) die("K and PASSES must be >= 1");
            return cmd_query(argv[2], argv[3], std::strcmp(argv[4], "english") == 0,
                             std::strcmp(argv[5], "pretok") == 0, std::strcmp(argv[6], "and") == 0,
                             std::strcmp(argv[6], "phrase") == 0, k, passes);
        }
        die("usage: driver index DBDIR CORPUS none|english raw|pretok | "
            "driver query DBDIR QUERIES none|english raw|pretok or|and|phrase K PASSES");
    } catch (const Xapian::Error& e) {
        die(e.get_description());
    } catch (const std::exception& e) {
        die(e.what());
    }
    return 1;
}
