/* SQLite FTS5 peer driver for Strata's lexical benchmark (issue 6,
 * bench/lexical), through the SQLite C API (no interpreter in between).
 *
 *   driver index DBFILE CORPUS TOKENIZER
 *       Creates a contentless FTS5 table t(body) with tokenize=TOKENIZER
 *       ("unicode61" or "porter unicode61") in a new DBFILE, inserts line i
 *       (0-based) of CORPUS with rowid i in one transaction, then runs
 *       FTS5's 'optimize' (merges the b-tree segments into one).
 *       -> {"engine","version","docs","index_wall_s","index_cpu_s","index_bytes"}
 *   driver query DBFILE QUERIES TOKENIZER OP K PASSES
 *       Each query line is split into runs of [A-Za-z0-9] and bytes >= 0x80
 *       (what unicode61 keeps for ASCII text); the runs are quoted and
 *       joined with OR / AND (OP "phrase": one quoted FTS5 phrase of all
 *       the runs), and run as
 *         SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT K
 *       (rank = bm25(), FTS5's built-in BM25 with k1 = 1.2, b = 0.75).
 *       One untimed warm-up pass, then PASSES timed passes, single thread.
 *       -> same JSON as the Xapian driver (results are rowids = ordinals).
 *
 * Build: gcc -O2 -o fts5_driver driver.c -lsqlite3
 */
#include <sqlite3.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_wall(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *msg, const char *detail) {
    printf("{\"error\":\"fts5 driver: %s", msg);
    if (detail) {
        printf(": ");
        for (const char *p = detail; *p; p++) {
            if (*p == '"' || *p == '\\') putchar('\\');
            if (*p == '\n') { printf("\\n"); continue; }
            putchar(*p);
        }
    }
    printf("\"}\n");
    exit(1);
}

/* read_lines returns the lines of path (newline stripped), *n set. */
static char **read_lines(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open", path);
    size_t cap = 1024, cnt = 0;
    char **out = malloc(cap * sizeof *out);
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    while ((len = getline(&line, &lcap, f)) >= 0) {
        if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
        if (cnt == cap) { cap *= 2; out = realloc(out, cap * sizeof *out); }
        out[cnt++] = strdup(line);
    }
    free(line);
    fclose(f);
    *n = cnt;
    return out;
}

static void exec_sql(sqlite3 *db, const char *sql) {
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) die(sql, err);
}

static int is_tok(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

/* match_expr builds the FTS5 expression for one query line; "" if no token.
 * conj 0: OR of quoted tokens; 1: AND; 2: one quoted phrase of all tokens. */
static char *match_expr(const char *q, int conj) {
    size_t n = strlen(q);
    char *out = malloc(n * 8 + 16);
    size_t o = 0;
    int first = 1;
    for (size_t i = 0; i < n;) {
        while (i < n && !is_tok((unsigned char)q[i])) i++;
        size_t j = i;
        while (j < n && is_tok((unsigned char)q[j])) j++;
        if (j > i && conj == 2) {
            if (first) out[o++] = '"'; else out[o++] = ' ';
            memcpy(out + o, q + i, j - i);
            o += j - i;
            first = 0;
        } else if (j > i) {
            if (!first) { const char *op = conj ? " AND " : " OR "; memcpy(out + o, op, strlen(op)); o += strlen(op); }
            out[o++] = '"';
            memcpy(out + o, q + i, j - i);
            o += j - i;
            out[o++] = '"';
            first = 0;
        }
        i = j;
    }
    if (conj == 2 && !first) out[o++] = '"';
    out[o] = 0;
    return out;
}

static int cmd_index(const char *dbfile, const char *corpus, const char *tok) {
    size_t n;
    char **docs = read_lines(corpus, &n);
    remove(dbfile);
    double w0 = now_wall(), c0 = now_cpu();
    sqlite3 *db;
    if (sqlite3_open(dbfile, &db) != SQLITE_OK) die("open", sqlite3_errmsg(db));
    exec_sql(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;");
    char sql[256];
    snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE t USING fts5(body, content='', tokenize='%s')", tok);
    exec_sql(db, sql);
    exec_sql(db, "BEGIN");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "INSERT INTO t(rowid, body) VALUES(?, ?)", -1, &st, NULL) != SQLITE_OK)
        die("prepare", sqlite3_errmsg(db));
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)i);
        sqlite3_bind_text(st, 2, docs[i], -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) die("insert", sqlite3_errmsg(db));
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    exec_sql(db, "COMMIT");
    exec_sql(db, "INSERT INTO t(t) VALUES('optimize')");
    exec_sql(db, "VACUUM");
    sqlite3_close(db);
    double wall = now_wall() - w0, cpu = now_cpu() - c0;
    struct stat sb;
    long long bytes = stat(dbfile, &sb) == 0 ? (long long)sb.st_size : -1;
    printf("{\"engine\":\"fts5\",\"version\":\"%s\",\"docs\":%zu,\"index_wall_s\":%.6f,"
           "\"index_cpu_s\":%.6f,\"index_bytes\":%lld}\n",
           sqlite3_libversion(), n, wall, cpu, bytes);
    return 0;
}

static int cmd_query(const char *dbfile, const char *qpath, int conj, int k, int passes) {
    size_t n;
    char **lines = read_lines(qpath, &n);
    char **exprs = malloc((n + 1) * sizeof *exprs);
    for (size_t i = 0; i < n; i++) exprs[i] = match_expr(lines[i], conj);
    sqlite3 *db;
    if (sqlite3_open_v2(dbfile, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) die("open", sqlite3_errmsg(db));
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?", -1, &st, NULL) !=
        SQLITE_OK)
        die("prepare", sqlite3_errmsg(db));
    long long **res = calloc(n + 1, sizeof *res);
    int *nres = calloc(n + 1, sizeof *nres);
    double *walls = calloc(passes, sizeof *walls), *cpus = calloc(passes, sizeof *cpus);
    long hits = 0;
    for (int pass = 0; pass <= passes; pass++) {
        double w0 = now_wall(), c0 = now_cpu();
        for (size_t i = 0; i < n; i++) {
            if (pass == 0) res[i] = malloc(sizeof(long long) * k);
            if (!exprs[i][0]) continue;
            sqlite3_bind_text(st, 1, exprs[i], -1, SQLITE_STATIC);
            sqlite3_bind_int(st, 2, k);
            int rc, got = 0;
            while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                long long id = sqlite3_column_int64(st, 0);
                if (pass == 0 && got < k) res[i][got] = id;
                got++;
            }
            if (rc != SQLITE_DONE) die("query", sqlite3_errmsg(db));
            sqlite3_reset(st);
            if (pass == 0) { nres[i] = got; hits += got; }
        }
        double wall = now_wall() - w0, cpu = now_cpu() - c0;
        if (pass > 0) { walls[pass - 1] = wall; cpus[pass - 1] = cpu; }
    }
    double bw = walls[0], bc = cpus[0];
    for (int i = 1; i < passes; i++) {
        if (walls[i] < bw) bw = walls[i];
        if (cpus[i] < bc) bc = cpus[i];
    }
    printf("{\"engine\":\"fts5\",\"version\":\"%s\",\"op\":\"%s\",\"k\":%d,\"passes\":%d,\"wall_s\":%.9f,"
           "\"cpu_s\":%.9f,\"wall_s_all\":[",
           sqlite3_libversion(), conj == 2 ? "phrase" : conj ? "and" : "or", k, passes, bw, bc);
    for (int i = 0; i < passes; i++) printf("%s%.9f", i ? "," : "", walls[i]);
    printf("],\"cpu_s_all\":[");
    for (int i = 0; i < passes; i++) printf("%s%.9f", i ? "," : "", cpus[i]);
    printf("],\"hits\":%ld,\"results\":[", hits);
    for (size_t i = 0; i < n; i++) {
        printf(i ? ",[" : "[");
        for (int j = 0; j < nres[i]; j++) printf(j ? ",%lld" : "%lld", res[i][j]);
        printf("]");
    }
    printf("]}\n");
    sqlite3_finalize(st);
    sqlite3_close(db);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "index") == 0) return cmd_index(argv[2], argv[3], argv[4]);
    if (argc == 8 && strcmp(argv[1], "query") == 0) {
        int k = atoi(argv[6]), passes = atoi(argv[7]);
        if (k < 1 || passes < 1) die("K and PASSES must be >= 1", NULL);
        int conj = strcmp(argv[5], "phrase") == 0 ? 2 : strcmp(argv[5], "and") == 0;
        return cmd_query(argv[2], argv[3], conj, k, passes);
    }
    die("usage: driver index DBFILE CORPUS TOKENIZER | driver query DBFILE QUERIES TOKENIZER or|and|phrase K PASSES",
        NULL);
    return 1;
}
