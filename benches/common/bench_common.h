/* Shared by the three plain reference programs (benches/cuda, benches/opencl, benches/vulkan):
 * options, the frame and its CPU reference, verification, statistics, the CSV and the table.
 *
 * Plain C that also compiles as C++ (nvcc compiles grayscale_bench.cu as C++): every function
 * is static, casts from void * are explicit, and nothing here needs more than libc and libm.
 *
 * The three disciplines, named as in the issue (blocksweep's --timing names in brackets):
 *   A [batch]  warm-ups, then N dispatches back to back between one pair of device stamps;
 *              mean = interval / N (the seed's, and blocksweep's default).
 *   B [each]   N dispatches back to back with a device stamp between consecutive ones
 *              (N + 1 stamps), one host wait at the end; mean of the N intervals.
 *   C [synced] a stamp pair around each dispatch and a host wait after each; mean of the N.
 */
#ifndef BLOCKSWEEP_BENCH_COMMON_H
#define BLOCKSWEEP_BENCH_COMMON_H

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The seed's thirteen block sizes, as blocksweep sweeps them by default. */
static const unsigned bench_default_blocks[] = {16,  32,  64,  96,  100, 128, 160,
                                                192, 256, 384, 512, 768, 1024};
#define BENCH_DEFAULT_BLOCK_COUNT 13
#define BENCH_MAX_ROWS 256
/* |out - ref| <= 1e-6, as blocksweep_core::verify::TOLERANCE. */
#define BENCH_TOLERANCE 1e-6f
/* Rec. 601 luma, the literals of kernels/grayscale.{cu,cl} and shaders/grayscale.comp. */
#define BENCH_WR 0.299f
#define BENCH_WG 0.587f
#define BENCH_WB 0.114f
/* blocksweep_core::verify::POISON_BITS: a quiet NaN written over the output before each
 * timed discipline, so a pixel that no dispatch wrote cannot pass the check. */
#define BENCH_POISON_BITS 0x7FC00000u

enum bench_grid_mode { GRID_WAVE, GRID_DATA, GRID_LIST };

struct bench_row_spec {
    unsigned block;
    unsigned long long grid; /* 0: computed from the grid mode */
};

struct bench_options {
    const char *prog;
    const char *api;      /* "cuda", "opencl", "vulkan": the CSV's api column */
    unsigned long long width, height;
    unsigned reps;        /* N: timed dispatches per discipline per row */
    unsigned warmups;     /* untimed back-to-back dispatches before each timed batch */
    const char *device;   /* index or name substring; NULL: first GPU, else first device */
    enum bench_grid_mode grid_mode;
    struct bench_row_spec rows[BENCH_MAX_ROWS];
    unsigned row_count;
    const char *csv_path; /* NULL: no CSV file; "-": CSV on stdout, table on stderr */
    const char *root;     /* repository root (kernels/, shaders/); NULL: found from argv[0] */
    int run_a, run_b, run_c;
    int copy;
};

static FILE *bench_table_out; /* where the human-readable table goes */

__attribute__((noreturn, format(printf, 1, 2))) static inline void bench_die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(EXIT_FAILURE);
}

__attribute__((noreturn)) static inline void bench_usage(const struct bench_options *o, int code) {
    FILE *f = code == 0 ? stdout : stderr;
    fprintf(f,
            "usage: %s [options] [WIDTH HEIGHT [N]]\n"
            "  -s, --size WxH       frame size (default 3840x2160)\n"
            "  -n, --reps N         timed dispatches per discipline and row (default 200)\n"
            "  -w, --warmups N      untimed back-to-back dispatches before each timed batch (default 3)\n"
            "  -b, --blocks LIST    block sizes, comma-separated (default the seed's 13)\n"
            "  -g, --grids SPEC     'wave' (default), 'data', or exact launches block:grid,block:grid,...\n"
            "                       (e.g. the grids of a blocksweep CSV; then --blocks is ignored)\n"
            "  -d, --device S       device index or name substring (default: first GPU, else first)\n"
            "  -o, --csv FILE       write the CSV there ('-': stdout, and the table goes to stderr)\n"
            "  -D, --disciplines S  any of A, B, C (default ABC)\n"
            "      --no-copy        skip the same-traffic copy ceiling\n"
            "  -r, --root DIR       repository root holding kernels/ and shaders/ (default: found\n"
            "                       from the program's own path, else the current directory)\n"
            "Disciplines: A = one device interval around N back-to-back dispatches (mean = interval/N);\n"
            "B = a device stamp between consecutive back-to-back dispatches, one wait at the end;\n"
            "C = a stamp pair around each dispatch and a host wait after each.\n",
            o->prog);
    exit(code);
}

static inline unsigned long long bench_parse_u64(const char *s, const char *what) {
    char *end = NULL;
    errno = 0;
    if (s == NULL || *s == '\0' || *s == '-') bench_die("%s: '%s' is not a positive number", what, s ? s : "");
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v == 0)
        bench_die("%s: '%s' is not a positive number", what, s);
    return v;
}

static inline void bench_parse_size(struct bench_options *o, const char *s) {
    const char *x = strchr(s, 'x');
    if (x == NULL) bench_die("--size: '%s' is not WIDTHxHEIGHT", s);
    char w[64];
    size_t len = (size_t)(x - s);
    if (len == 0 || len >= sizeof w) bench_die("--size: '%s' is not WIDTHxHEIGHT", s);
    memcpy(w, s, len);
    w[len] = '\0';
    o->width = bench_parse_u64(w, "--size width");
    o->height = bench_parse_u64(x + 1, "--size height");
}

/* "16,32,64" or "16:4224,32:4224": blocks, with grids when `with_grids`. */
static inline void bench_parse_rows(struct bench_options *o, const char *s, int with_grids) {
    char *copy = strdup(s);
    if (copy == NULL) bench_die("out of memory");
    o->row_count = 0;
    for (char *tok = strtok(copy, ", "); tok != NULL; tok = strtok(NULL, ", ")) {
        if (o->row_count == BENCH_MAX_ROWS) bench_die("at most %d rows", BENCH_MAX_ROWS);
        struct bench_row_spec r;
        char *colon = strchr(tok, ':');
        if (with_grids) {
            if (colon == NULL) bench_die("--grids: '%s' is not block:grid", tok);
            *colon = '\0';
            r.grid = bench_parse_u64(colon + 1, "--grids grid");
        } else {
            if (colon != NULL) bench_die("--blocks: '%s': grids go in --grids block:grid", tok);
            r.grid = 0;
        }
        unsigned long long b = bench_parse_u64(tok, with_grids ? "--grids block" : "--blocks");
        if (b > 1u << 20) bench_die("block %llu is too large", b);
        r.block = (unsigned)b;
        o->rows[o->row_count++] = r;
    }
    free(copy);
    if (o->row_count == 0) bench_die("no rows in '%s'", s);
}

static inline void bench_parse_args(struct bench_options *o, const char *api, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    o->prog = argv[0];
    o->api = api;
    o->width = 3840;
    o->height = 2160;
    o->reps = 200;
    o->warmups = 3;
    o->grid_mode = GRID_WAVE;
    o->run_a = o->run_b = o->run_c = 1;
    o->copy = 1;
    for (unsigned i = 0; i < BENCH_DEFAULT_BLOCK_COUNT; ++i) {
        o->rows[i].block = bench_default_blocks[i];
        o->rows[i].grid = 0;
    }
    o->row_count = BENCH_DEFAULT_BLOCK_COUNT;
    const char *positional[3];
    int npos = 0;
    const char *blocks = NULL, *grids = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
#define BENCH_VALUE() (i + 1 < argc ? argv[++i] : (bench_die("%s needs a value", a), ""))
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) bench_usage(o, 0);
        else if (!strcmp(a, "-s") || !strcmp(a, "--size")) bench_parse_size(o, BENCH_VALUE());
        else if (!strcmp(a, "-n") || !strcmp(a, "--reps")) {
            unsigned long long n = bench_parse_u64(BENCH_VALUE(), "--reps");
            if (n > 1000000) bench_die("--reps: at most 1000000");
            o->reps = (unsigned)n;
        } else if (!strcmp(a, "-w") || !strcmp(a, "--warmups")) {
            const char *v = BENCH_VALUE();
            o->warmups = strcmp(v, "0") == 0 ? 0 : (unsigned)bench_parse_u64(v, "--warmups");
        } else if (!strcmp(a, "-b") || !strcmp(a, "--blocks")) blocks = BENCH_VALUE();
        else if (!strcmp(a, "-g") || !strcmp(a, "--grids")) grids = BENCH_VALUE();
        else if (!strcmp(a, "-d") || !strcmp(a, "--device")) o->device = BENCH_VALUE();
        else if (!strcmp(a, "-o") || !strcmp(a, "--csv")) o->csv_path = BENCH_VALUE();
        else if (!strcmp(a, "-r") || !strcmp(a, "--root")) o->root = BENCH_VALUE();
        else if (!strcmp(a, "--no-copy")) o->copy = 0;
        else if (!strcmp(a, "-D") || !strcmp(a, "--disciplines")) {
            const char *v = BENCH_VALUE();
            o->run_a = strchr(v, 'A') != NULL || strchr(v, 'a') != NULL;
            o->run_b = strchr(v, 'B') != NULL || strchr(v, 'b') != NULL;
            o->run_c = strchr(v, 'C') != NULL || strchr(v, 'c') != NULL;
            if (!(o->run_a || o->run_b || o->run_c)) bench_die("--disciplines: none of A, B, C in '%s'", v);
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "%s: unknown option '%s'\n", o->prog, a);
            bench_usage(o, 2);
        } else if (npos < 3) positional[npos++] = a;
        else bench_usage(o, 2);
#undef BENCH_VALUE
    }
    /* The old positional form: WIDTH HEIGHT [N]. */
    if (npos == 1) bench_usage(o, 2);
    if (npos >= 2) {
        o->width = bench_parse_u64(positional[0], "width");
        o->height = bench_parse_u64(positional[1], "height");
    }
    if (npos == 3) {
        unsigned long long n = bench_parse_u64(positional[2], "N");
        if (n > 1000000) bench_die("N: at most 1000000");
        o->reps = (unsigned)n;
    }
    if (blocks != NULL) bench_parse_rows(o, blocks, 0);
    if (grids != NULL) {
        if (!strcmp(grids, "wave")) o->grid_mode = GRID_WAVE;
        else if (!strcmp(grids, "data")) o->grid_mode = GRID_DATA;
        else {
            o->grid_mode = GRID_LIST;
            bench_parse_rows(o, grids, 1);
        }
    }
    if (o->width > (1ull << 20) || o->height > (1ull << 20)) bench_die("frame too large");
    bench_table_out = (o->csv_path != NULL && !strcmp(o->csv_path, "-")) ? stderr : stdout;
}

/* ceil(n / t) */
static inline unsigned long long bench_blocks_to_cover(unsigned long long n, unsigned t) {
    return (n + t - 1) / t;
}

/* The wave grid: resident blocks per multiprocessor x multiprocessors, capped at ceil(n / T),
 * at least 1 (blocksweep's GridPolicy::Wave). */
static inline unsigned long long bench_wave(unsigned long long per_mp, unsigned long long mps,
                                     unsigned long long n, unsigned t) {
    unsigned long long g = per_mp * mps, need = bench_blocks_to_cover(n, t);
    if (g > need) g = need;
    return g < 1 ? 1 : g;
}

/* Resident blocks of `t` threads on one SM from NVIDIA's per-SM limits (warp slots and
 * block slots; the 16-register kernel is never register-limited), as blocksweep's model. */
static inline unsigned long long bench_nv_blocks_per_sm(unsigned t, unsigned max_warps, unsigned max_blocks) {
    unsigned warps = (t + 31) / 32;
    unsigned long long b = warps ? max_warps / warps : 0;
    return b < max_blocks ? b : max_blocks;
}

/* Per-SM (warps, blocks) of an NVIDIA compute capability (blocksweep_core::grid::nvidia_sm_limits). */
static inline int bench_nv_sm_limits(unsigned major, unsigned minor, unsigned *warps, unsigned *blocks) {
    if (major == 5 || major == 6 || (major == 7 && (minor == 0 || minor == 2)) || (major == 8 && minor == 0) ||
        major == 9 || major == 10) {
        *warps = 64; *blocks = 32;
    } else if (major == 7 && minor == 5) {
        *warps = 32; *blocks = 16;
    } else if (major == 8 && (minor == 6 || minor == 7)) {
        *warps = 48; *blocks = 16;
    } else if (major == 8 && minor == 9) {
        *warps = 48; *blocks = 24;
    } else if (major == 12) {
        *warps = 48; *blocks = 32;
    } else {
        return 0;
    }
    return 1;
}

/* ---- the frame ---------------------------------------------------------------------------- */

struct bench_frame {
    size_t n;
    float *r, *g, *b, *ref, *out;
};

static inline float *bench_alloc_floats(size_t n) {
    float *p = (float *)malloc(n * sizeof(float));
    if (p == NULL) bench_die("out of host memory (%zu floats)", n);
    return p;
}

/* Any values in [0, 1) do (only timings are compared with blocksweep, whose frame comes from
 * its own seeded generator); these need no random generator. */
static inline void bench_frame_init(struct bench_frame *f, unsigned long long width, unsigned long long height) {
    f->n = (size_t)(width * height);
    f->r = bench_alloc_floats(f->n);
    f->g = bench_alloc_floats(f->n);
    f->b = bench_alloc_floats(f->n);
    f->ref = bench_alloc_floats(f->n);
    f->out = bench_alloc_floats(f->n);
    for (size_t i = 0; i < f->n; ++i) {
        f->r[i] = (float)(i % 251) / 251.0f;
        f->g[i] = (float)((i * 7) % 241) / 241.0f;
        f->b[i] = (float)((i * 13) % 239) / 239.0f;
        f->ref[i] = BENCH_WR * f->r[i] + BENCH_WG * f->g[i] + BENCH_WB * f->b[i];
    }
}

static inline void bench_frame_free(struct bench_frame *f) {
    free(f->r); free(f->g); free(f->b); free(f->ref); free(f->out);
}

/* Index of the first pixel of f->out off the reference by more than the tolerance (a NaN
 * fails too), or -1 when all match. */
static inline long long bench_first_bad(const struct bench_frame *f) {
    for (size_t i = 0; i < f->n; ++i)
        if (!(fabsf(f->out[i] - f->ref[i]) <= BENCH_TOLERANCE)) return (long long)i;
    return -1;
}

/* Exits with the row and the first bad pixel, like blocksweep's verification failure. */
static inline void bench_verify(const struct bench_frame *f, const char *api, char discipline, unsigned block,
                         unsigned long long grid) {
    long long bad = bench_first_bad(f);
    if (bad >= 0)
        bench_die("%s: discipline %c block %u grid %llu: pixel %lld is %g, expected %g (verification failed)",
                  api, discipline, block, grid, bad, (double)f->out[bad], (double)f->ref[bad]);
}

/* ---- statistics, CSV and table ------------------------------------------------------------- */

struct bench_stat {
    int valid;
    unsigned reps;
    double mean, min, max; /* ms; min/max NAN under A (no per-dispatch times) */
    /* Host clock per dispatch, microseconds: under A the timed batch (enqueued, one wait) over
     * its dispatches, under C the median of each dispatch-and-wait; NAN under B. */
    double host_us;
};

/* The host's monotonic clock, microseconds. */
static inline double bench_host_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of `n` values (sorted in place). */
static inline double bench_median(double *v, unsigned n) {
    if (n == 0) return NAN;
    qsort(v, n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A: one interval over `reps` dispatches. */
static inline struct bench_stat bench_stat_batch(double interval_ms, unsigned reps) {
    struct bench_stat s;
    s.valid = 1;
    s.reps = reps;
    s.mean = interval_ms / reps;
    s.min = s.max = NAN;
    s.host_us = NAN;
    return s;
}

/* B, C: per-dispatch times. */
static inline struct bench_stat bench_stat_each(const double *ms, unsigned reps) {
    struct bench_stat s;
    double sum = 0.0, lo = INFINITY, hi = -INFINITY;
    for (unsigned i = 0; i < reps; ++i) {
        sum += ms[i];
        if (ms[i] < lo) lo = ms[i];
        if (ms[i] > hi) hi = ms[i];
    }
    s.valid = 1;
    s.reps = reps;
    s.host_us = NAN;
    s.mean = sum / reps;
    s.min = lo;
    s.max = hi;
    return s;
}

struct bench_row {
    unsigned block;          /* 0 for a copy row */
    const char *label;       /* "copy", "copy_transfer" for copy rows; NULL for kernel rows */
    unsigned long long grid; /* 0 where the API picks it (cudaMemcpyAsync, clEnqueueCopyBuffer) */
    double bytes;            /* moved per dispatch, read + written */
    struct bench_stat st[3]; /* A, B, C */
    const char *skipped;     /* why the row did not run, or NULL */
};

struct bench_report {
    const struct bench_options *o;
    char device[256];
    struct bench_row rows[BENCH_MAX_ROWS + 4];
    unsigned count;
};

static inline double bench_gbps(double bytes, double ms) { return bytes / (ms * 1e6); }

static inline void bench_csv_field_ms(FILE *f, double v) {
    if (isnan(v)) fputs(",", f);
    else fprintf(f, ",%.6f", v);
}

static inline void bench_write_csv(const struct bench_report *r) {
    const struct bench_options *o = r->o;
    if (o->csv_path == NULL) return;
    FILE *f = strcmp(o->csv_path, "-") ? fopen(o->csv_path, "w") : stdout;
    if (f == NULL) bench_die("%s: %s", o->csv_path, strerror(errno));
    fputs("api,discipline,block,grid,reps,ms_mean,gbps,ms_min,ms_max,width,height,device,host_us\n", f);
    for (unsigned i = 0; i < r->count; ++i) {
        const struct bench_row *row = &r->rows[i];
        for (int d = 0; d < 3; ++d) {
            const struct bench_stat *s = &row->st[d];
            if (!s->valid) continue;
            fprintf(f, "%s,%c,", o->api, "ABC"[d]);
            if (row->label) fputs(row->label, f);
            else fprintf(f, "%u", row->block);
            fprintf(f, ",%llu,%u,%.6f,%.2f", row->grid, s->reps, s->mean, bench_gbps(row->bytes, s->mean));
            bench_csv_field_ms(f, s->min);
            bench_csv_field_ms(f, s->max);
            /* Device names may hold commas (PoCL's do not, llvmpipe's do): quoted, "" escaped. */
            fprintf(f, ",%llu,%llu,\"", o->width, o->height);
            for (const char *c = r->device; *c; ++c) {
                if (*c == '"') fputc('"', f);
                fputc(*c, f);
            }
            fputc('"', f);
            if (isnan(s->host_us)) fputs(",\n", f);
            else fprintf(f, ",%.3f\n", s->host_us);
        }
    }
    if (f != stdout) {
        if (fclose(f) != 0) bench_die("%s: %s", o->csv_path, strerror(errno));
    } else {
        fflush(f);
    }
}

static inline void bench_table_cell(FILE *t, const struct bench_stat *s, double bytes) {
    if (s->valid) fprintf(t, " | %8.4f %8.1f", s->mean, bench_gbps(bytes, s->mean));
    else fprintf(t, " | %8s %8s", "-", "-");
}

/* The human table: per row, each discipline's mean ms and GB/s, then the best rows. */
static inline void bench_print_table(const struct bench_report *r) {
    FILE *t = bench_table_out;
    const struct bench_options *o = r->o;
    fprintf(t, "%-13s %9s | %8s %8s | %8s %8s | %8s %8s\n", "block", "grid", "A ms", "A GB/s", "B ms",
            "B GB/s", "C ms", "C GB/s");
    for (unsigned i = 0; i < r->count; ++i) {
        const struct bench_row *row = &r->rows[i];
        if (row->label) fprintf(t, "%-13s", row->label);
        else fprintf(t, "%-13u", row->block);
        fprintf(t, " %9llu", row->grid);
        if (row->skipped) {
            fprintf(t, " | skipped: %s\n", row->skipped);
            continue;
        }
        for (int d = 0; d < 3; ++d) bench_table_cell(t, &row->st[d], row->bytes);
        fputc('\n', t);
    }
    for (int d = 0; d < 3; ++d) {
        const struct bench_row *best = NULL;
        for (unsigned i = 0; i < r->count; ++i) {
            const struct bench_row *row = &r->rows[i];
            if (row->label || row->skipped || !row->st[d].valid) continue;
            if (best == NULL || row->st[d].mean < best->st[d].mean) best = row;
        }
        if (best)
            fprintf(t, "best %c: block %u grid %llu, %.4f ms, %.1f GB/s (N = %u)\n", "ABC"[d], best->block,
                    best->grid, best->st[d].mean, bench_gbps(best->bytes, best->st[d].mean), best->st[d].reps);
    }
    (void)o;
    fflush(t);
}

/* ---- files ---------------------------------------------------------------------------------- */

/* Reads a whole file; NULL when it cannot be opened. */
static inline unsigned char *bench_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = (unsigned char *)malloc(cap + 1);
    if (buf == NULL) bench_die("out of memory");
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        cap *= 2;
        buf = (unsigned char *)realloc(buf, cap + 1);
        if (buf == NULL) bench_die("out of memory");
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Reads `rel` (e.g. "kernels/grayscale.cl") from the repository root: --root if given, else
 * two folders above the program (benches/bin/ or benches/<api>/), else the current directory.
 * Exits when none has it. The path found goes into `found` (size `cap`). */
static inline unsigned char *bench_read_repo_file(const struct bench_options *o, const char *rel, size_t *len,
                                           char *found, size_t cap) {
    char exe[PATH_MAX];
    char candidates[3][PATH_MAX + 64];
    int nc = 0;
    if (o->root != NULL) {
        snprintf(candidates[nc++], sizeof candidates[0], "%s/%s", o->root, rel);
    } else {
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (k > 0) {
            exe[k] = '\0';
            char *slash = strrchr(exe, '/');
            if (slash) *slash = '\0';
            snprintf(candidates[nc++], sizeof candidates[0], "%s/../../%s", exe, rel);
        }
        snprintf(candidates[nc++], sizeof candidates[0], "%s", rel);
    }
    for (int i = 0; i < nc; ++i) {
        unsigned char *data = bench_read_file(candidates[i], len);
        if (data != NULL) {
            char real[PATH_MAX];
            const char *shown = realpath(candidates[i], real) != NULL ? real : candidates[i];
            size_t l = strnlen(shown, cap - 1);
            memcpy(found, shown, l);
            found[l] = '\0';
            return data;
        }
    }
    bench_die("cannot read %s (tried %s%s%s); pass --root <repository root>", rel, candidates[0],
              nc > 1 ? " and " : "", nc > 1 ? candidates[1] : "");
    return NULL;
}

/* Case-insensitive substring test. */
static inline int bench_contains_ci(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (const char *h = hay; *h; ++h) {
        size_t i = 0;
        while (i < n && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i])) ++i;
        if (i == n) return 1;
    }
    return n == 0;
}

/* Whether `s` is a plain non-negative decimal index. */
static inline int bench_is_index(const char *s, unsigned long *out) {
    if (s == NULL || *s == '\0') return 0;
    for (const char *c = s; *c; ++c)
        if (*c < '0' || *c > '9') return 0;
    *out = strtoul(s, NULL, 10);
    return 1;
}

#endif
