/*
 * base/base.h: what every layer of core/src builds on (base/README.md): the context and its
 * reusable buffers, errors, allocation, progress, text and number helpers, CSV tables read
 * through libcsv and rows of them mapped onto structs, and atomic output files.  Nothing here
 * knows a GPU, a network or a prediction; the context only holds pointers to the state of the
 * layers above, each of which registers its own cleanup (eci_ctx_on_free).
 *
 * Internal non-static functions are eci_<module>_<verb> and hidden (EC_INTERNAL).
 */
#ifndef EC_BASE_H
#define EC_BASE_H

#include "epochcast.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#if defined(__GNUC__)
#define EC_INTERNAL __attribute__((visibility("hidden")))
#define EC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define EC_INTERNAL
#define EC_PRINTF(f, a)
#endif

#define EC_ERRMSG_MAX 1024

/* ---- context ------------------------------------------------------------------- */
/* A module that keeps state on the context (a cache, a loaded table) registers the function
 * that frees it (eci_ctx_on_free) when it first allocates it: ec_ctx_free calls each once,
 * the last registered first.  One per module that keeps state (10 today). */
typedef void (*eci_cleanup_fn)(ec_ctx *ctx);
#define ECI_CLEANUPS_MAX 24
/* Room for the indices of the keys a prediction asks whether they were given (catalog/config.c's
 * eci_key, filled when models are loaded). */
#define ECI_CTX_KEYS 8
/* Work buffers a prediction needs every time (alloc.c): kept on the context and reused, so a
 * sweep allocates nothing after its first point.  One slot per buffer that can be live at once. */
enum {
    ECI_SCRATCH_PREDICT_IN = 0, ECI_SCRATCH_SIM_HIST, ECI_SCRATCH_SIM_TOTALS, ECI_SCRATCH_RUN_LEN,
    ECI_SCRATCH_RUN_CPU, ECI_SCRATCH_RUN_PIN, ECI_SCRATCH_RUN_ENDS, ECI_SCRATCH_RUN_STALL, ECI_SCRATCH_RUN_AVAIL,
    ECI_SCRATCH_RUN_PINQ, ECI_SCRATCH_RUN_COUNTS, ECI_SCRATCH_RUN_WORKERS, ECI_SCRATCH_RUN_BUILT,
    ECI_SCRATCH_RUN_AVAILABLE, ECI_SCRATCH_OP_COSTS, ECI_SCRATCH_FWD_HOST, ECI_SCRATCH_SLOTS
};

/* Input files a context remembers, so that no writer replaces one (outfile.c): every file it
 * has read, kept in a growing array (the models folder alone is about 50). */
typedef struct eci_input_id {
    uint64_t dev, ino;
} eci_input_id;

/* The p90 of a standard normal exactly as GSL computes it, gsl_cdf_ugaussian_Pinv(0.9) =
 * 1.2815515655446006 (one ulp above the tables' ...004): a constant, since every prediction's
 * interval needs it and the call costs more than the rest of the widening; test_calibrate
 * checks it against GSL bit for bit. */
#define ECI_NORMAL_P90 0x1.4813c36e26d33p+0

/* GPU counts whose expected maximum of normal draws (comm.c) a context remembers. */
#define ECI_MAX_NORMAL_CACHED 64

struct ec_ctx {
    ec_alloc_fn alloc;
    void *ud;
    int alloc_threadsafe;             /* ec_ctx_set_alloc_threadsafe: worker contexts allocate through alloc too */
    char errmsg[EC_ERRMSG_MAX];
    int models_loaded;
    struct eci_gpu *gpus; size_t n_gpus;
    size_t gpu_found;                 /* the GPU eci_hw_find found last: a sweep asks for it again */
    size_t net_found;                 /* the network eci_net_find_rc found by its id last (the same) */
    struct eci_host *hosts; size_t n_hosts;
    struct eci_fabric *fabrics; size_t n_fabrics; /* models/interconnects.csv */
    struct eci_nccl_tuner *nccl;      /* NCCL's tuner constants, models/nccl_tuning.csv */
    struct eci_refsys *refsys; size_t n_refsys;   /* models/reference_systems.csv (optional) */
    struct eci_net **nets; size_t n_nets, cap_nets; /* presets first, then defined and config.json networks */
    struct eci_consts *consts;        /* software constants, constants.csv */
    struct eci_sdpa *sdpa;            /* SDPA's backend by release, GPU and dtype, sdpa_backends.csv */
    struct eci_conv_algos *conv_algos; /* cuDNN's algorithm class per convolution pass, conv_algos.csv */
    struct eci_tp_overlaps *tp_overlaps; /* Transformer Engine's userbuffers configurations, tp_overlap.csv */
    struct eci_params *fit;           /* fitted parameters in use (catalog/params.c); NULL: priors */
    char profile_path[EC_PATH_MAX];   /* the profile= file whose values are cached below */
    struct eci_params *profile_fit;
    struct eci_wl_cache *wl_cache;    /* recent workload expansions (workload.c), NULL until used */
    void *scratch[ECI_SCRATCH_SLOTS]; /* reusable work buffers (eci_scratch), grown on demand */
    size_t scratch_bytes[ECI_SCRATCH_SLOTS];
    double max_normal[ECI_MAX_NORMAL_CACHED + 1]; /* eci_expected_max_normal by n, 0 until computed */
    int key_index[ECI_CTX_KEYS];      /* ec_config_key_index of each eci_key (catalog/config.c) */
    struct eci_pipe_rngs *pipe_rngs;  /* the loader simulation's generator and its kept seeds (pipeline.c) */
    struct eci_batch_lengths *len_batch; /* batch sampling table of the last lengths= and batch (lengths.c) */
    struct eci_ramp_cache *comm_ramp; /* NCCL ramp interpolant (comm.c), rebuilt if its points change */
    struct eci_cost_cache *cost_cache; /* op costs of cached workloads per rates (compute.c), NULL until used */
    ec_progress_fn progress;          /* ec_ctx_set_progress: called by long operations, may cancel them */
    void *progress_ud;
    eci_input_id *inputs;             /* files read as inputs (eci_input_note), NULL until one is */
    size_t n_inputs, cap_inputs;
    struct eci_prices *prices;        /* models/prices.csv (price.c), NULL when the folder has none */
    struct eci_prices *user_prices;   /* the last prices= file read, NULL until one is */
    struct eci_ref_cache *ref_cache;  /* one-GPU references of scaling efficiencies (sim/predict.c) */
    char models_dir[EC_PATH_MAX];     /* the folder ec_ctx_load_models read (ec_ctx_load_from reads it again) */
    struct eci_pool *pool;            /* worker contexts kept between sweeps and searches (workers.c) */
    int ddp_every_layer;              /* tests: DDP's backward walks every repeated layer (sim/ddp_layers.c's
                                         reference for its jumps); 0 in every context the API makes */
    int walk_op_by_op;                /* tests: the step model walks every run of ops op by op, without
                                         its run sums (their reference); 0 in every context the API makes */
    struct eci_step_rec *step_rec;    /* a trace's record of the step (sim/steprec.h), set by ec_trace_write
                                         while it runs the step model; NULL otherwise: nothing recorded */
    eci_cleanup_fn cleanups[ECI_CLEANUPS_MAX]; /* what ec_ctx_free calls, last registered first */
    size_t n_cleanups;
};

/* ---- errors (err.c) ------------------------------------------------------------ */
/* Record a detailed message on ctx and return code.  The idiom is
 *   return eci_error(ctx, EC_EINVAL, "batch_per_gpu must be >= 1 (got %d)", b);
 * A breakpoint here catches every error the library reports. */
EC_INTERNAL int eci_error(ec_ctx *ctx, int code, const char *fmt, ...) EC_PRINTF(3, 4);
EC_INTERNAL void eci_error_clear(ec_ctx *ctx);
/* Put "key 'KEY': " before the context's message unless it starts so already; returns code.
 * For failures of a file a key names (profile=, lengths=), so the message says which key. */
EC_INTERNAL int eci_error_key(ec_ctx *ctx, int code, const char *key);
/* The candidate in names[0..n) nearest to word by edit distance (NULL if n == 0). */
EC_INTERNAL const char *eci_nearest(const char *word, const char *const *names, size_t n);
/* The same when it is a plausible misspelling of word (a short identifier within a third of
 * its length in edits), else NULL: for names read from a file that may not be what was asked. */
EC_INTERNAL const char *eci_nearest_close(const char *word, const char *const *names, size_t n);

/* ---- the context's cleanups (ctx.c) --------------------------------------------- */
/* Have ec_ctx_free call fn (once, however often it is registered).  EC_OK, or EC_EMISUSE
 * with a message when ECI_CLEANUPS_MAX functions are registered already. */
EC_INTERNAL int eci_ctx_on_free(ec_ctx *ctx, eci_cleanup_fn fn);

/* 1 when the context's allocator is the host's (which may count or cap it), 0 for the
 * default realloc/free: what only a counting allocator needs (a charge for memory a
 * third-party library allocates itself, hfconfig.c) is skipped for the default. */
EC_INTERNAL int eci_alloc_counts(const ec_ctx *ctx);

/* ---- progress and cancellation (ctx.c) ------------------------------------------ */
/* Hand progress to the context's callback (ec_ctx_set_progress): what has been done of total
 * units of a long operation (total 0: unknown).  EC_ECANCELED, with a message naming what,
 * when the callback asks to stop; EC_OK otherwise and when there is no callback. */
EC_INTERNAL int eci_progress(ec_ctx *ctx, const char *what, double done, double total);

/* ---- output files (outfile.c) --------------------------------------------------- */
/* Remember path's file (device and inode) as an input of this context: no writer of the
 * context will replace it.  Best effort: a path that cannot be stat'ed is not remembered. */
EC_INTERNAL void eci_input_note(ec_ctx *ctx, const char *path);
/* The same for a file already open (fstat's dev and ino): EC_OK or EC_ENOMEM with a message
 * naming path.  Every reader of a file calls one of the two (table.c, hfconfig.c). */
EC_INTERNAL int eci_input_note_id(ec_ctx *ctx, const char *path, uint64_t dev, uint64_t ino);
/* Every input of src is one of dst's too (a worker's context, joined: workers.c). */
EC_INTERNAL int eci_inputs_merge(ec_ctx *dst, const ec_ctx *src);
/* The stdio stream of an open output file, for fprintf-style writers (trace.c, csvout.c). */
EC_INTERNAL FILE *eci_outfile_stream(ec_outfile *f);
/* Before writing about `bytes` bytes through the stream: EC_OK, or the failure of an earlier
 * write (the temporary then removed), or EC_ECANCELED from the progress callback. */
EC_INTERNAL int eci_outfile_check(ec_outfile *f, size_t bytes);
/* A write through the stream failed with errno err: remove the temporary, report EC_EIO
 * naming the target; only commit (which then fails) or abort is left. */
EC_INTERNAL int eci_outfile_fail(ec_outfile *f, int err, const char *what);
/* 1 when s holds a byte below 0x20 or DEL. */
EC_INTERNAL int eci_path_has_control(const char *s);

/* ---- memory (alloc.c) ---------------------------------------------------------- */
EC_INTERNAL void *eci_malloc(ec_ctx *ctx, size_t n);          /* sets EC_ENOMEM message on failure */
EC_INTERNAL void *eci_calloc(ec_ctx *ctx, size_t n, size_t size);
EC_INTERNAL void *eci_realloc(ec_ctx *ctx, void *p, size_t osize, size_t nsize);
EC_INTERNAL void eci_free(ec_ctx *ctx, void *p, size_t size);  /* size may be 0 when unknown */
EC_INTERNAL char *eci_strdup(ec_ctx *ctx, const char *s);
EC_INTERNAL void eci_strfree(ec_ctx *ctx, char *s);
/* Slot `slot`'s buffer of n x size bytes, zeroed (NULL and EC_ENOMEM on failure).  Valid
 * until the next eci_scratch of the same slot or ec_ctx_free; never freed by the caller. */
EC_INTERNAL void *eci_scratch(ec_ctx *ctx, int slot, size_t n, size_t size);
/* The same without zeroing: for a buffer its caller fills before reading. */
EC_INTERNAL void *eci_scratch_raw(ec_ctx *ctx, int slot, size_t n, size_t size);
EC_INTERNAL void eci_scratch_free(ec_ctx *ctx);

/* ---- CSV tables (table.c), read through libcsv ---------------------------------- */
/* A parsed CSV file: a header row and data rows of text cells, all rows with the
 * header's column count.  Cells are NUL-terminated; a UTF-8 BOM and CRLF are accepted;
 * blank trailing lines are ignored.  Errors name "file:line:column". */
typedef struct eci_table eci_table;

EC_INTERNAL int eci_table_load(ec_ctx *ctx, const char *path, eci_table **out);
/* Stream a CSV file: the header (eci_table_cols, eci_table_header) and the first data rows
 * a block holds; eci_table_next drops those and reads the next ones (eci_table_rows is 0 at
 * the end).  Memory stays bounded whatever the file's size.  A FIFO or device is refused. */
EC_INTERNAL int eci_table_open(ec_ctx *ctx, const char *path, eci_table **out);
EC_INTERNAL int eci_table_next(eci_table *t);
/* The share of the file read so far (1 at the end), for progress. */
EC_INTERNAL double eci_table_read_frac(const eci_table *t);
/* Parse from memory; name is used in messages in place of a path. */
EC_INTERNAL int eci_table_parse(ec_ctx *ctx, const char *name, const char *buf, size_t len,
                                eci_table **out);
/* The same, reading chunk bytes at a time (0: the default), for the chunk-size tests. */
EC_INTERNAL int eci_table_parse_chunked(ec_ctx *ctx, const char *name, const char *buf, size_t len,
                                        size_t chunk, eci_table **out);
EC_INTERNAL void eci_table_free(eci_table *t);
EC_INTERNAL const char *eci_table_name(const eci_table *t);
EC_INTERNAL size_t eci_table_rows(const eci_table *t);
EC_INTERNAL size_t eci_table_cols(const eci_table *t);
EC_INTERNAL const char *eci_table_header(const eci_table *t, size_t col);
/* Column index of a header name, or -1 when absent. */
EC_INTERNAL int eci_table_col(const eci_table *t, const char *name);
/* Like eci_table_col but an absent column is an EC_EPARSE error naming the file. */
EC_INTERNAL int eci_table_require(ec_ctx *ctx, const eci_table *t, const char *name, int *col);
/* Cell text ("" for an empty cell).  row is 0-based over data rows. */
EC_INTERNAL const char *eci_table_cell(const eci_table *t, size_t row, int col);
/* 1-based line in the file where data row `row` starts. */
EC_INTERNAL size_t eci_table_line(const eci_table *t, size_t row);
/* Parse a cell as a finite number in [lo, hi]; EC_EPARSE "file:line:col: column 'x': ..." otherwise. */
EC_INTERNAL int eci_table_number(ec_ctx *ctx, const eci_table *t, size_t row, int col,
                                 double lo, double hi, double *out);
/* Same for an integer. */
EC_INTERNAL int eci_table_int(ec_ctx *ctx, const eci_table *t, size_t row, int col,
                              long lo, long hi, long *out);

/* A cell read as a software release (eci_parse_release): its key in *out. */
EC_INTERNAL int eci_table_release(ec_ctx *ctx, const eci_table *t, size_t row, int col, int *out);

/* ---- struct rows from a CSV (registry.c) ------------------------------------------ */
/* One column of a data table mapped onto a struct field: registry.c reads every row of
 * a table into an array of structs from a list of these, with located errors. */
typedef enum {
    ECI_F_STR, ECI_F_DOUBLE, ECI_F_INT,
    ECI_F_DOUBLE_OPT, /* a number in [lo, hi], or an empty cell: -1 (not known) */
    ECI_F_LINE        /* no cell (column NULL): the 1-based line the row starts on, a size_t, for the
                         messages of checks made after reading */
} eci_field_kind;
typedef struct eci_field {
    const char *column;
    eci_field_kind kind;
    size_t offset;
    double lo, hi;          /* valid range for numbers */
} eci_field;

/* Read every row of path into a new array of n structs of `size` bytes.  The first field
 * must be the unique string id.  Strings are owned by the rows (free with eci_rows_free). */
EC_INTERNAL int eci_rows_load(ec_ctx *ctx, const char *path, const eci_field *fields, size_t nf,
                              size_t size, void **rows, size_t *n);
EC_INTERNAL void eci_rows_free(ec_ctx *ctx, const eci_field *fields, size_t nf, size_t size,
                               void *rows, size_t n);
/* ---- text helpers (text.c) ------------------------------------------------------ */
/* Text read from a file that may be hostile, fit to quote in a message: src itself when it is
 * a short plain name (1 to ECI_ECHO_MAX of [A-Za-z0-9_.+-]), else "(N bytes, not shown)".
 * Returns dst (n >= 40). */
#define ECI_ECHO_MAX 32
EC_INTERNAL const char *eci_echo(char *dst, size_t n, const char *src);
/* The offset of s's first control character (a byte below 0x20, DEL, or a C1 control
 * U+0080..U+009F in UTF-8), -1 when it has none: for names that reach listings and CSV cells. */
EC_INTERNAL long eci_control_at(const char *s);
/* Copy with truncation, always NUL-terminated; returns strlen(src). */
EC_INTERNAL size_t eci_strlcpy(char *dst, const char *src, size_t n);
/* The decimal text of v at buf (22 bytes suffice), NUL-terminated; returns its length (numfmt.c). */
EC_INTERNAL size_t eci_format_int(long long v, char *buf);
/* The shortest text of v / scale that reads back (x scale) to exactly v, whole numbers without an
 * exponent ("87599"), into buf (numfmt.c): a config value in its key's unit. */
EC_INTERNAL void eci_format_scaled(double v, double scale, char *buf, size_t n);
/* x with two decimals ("%.2f", ties rounded up) for 0 <= x < 1e15, else as snprintf's "%.2f"
 * cut to 31 characters; NUL-terminated in buf (32 bytes); returns its length (numfmt.c).  Warnings print
 * GiB this way: a printf of a float costs about a thousand instructions per prediction. */
EC_INTERNAL size_t eci_format_fixed2(double x, char *buf);
/* The same with `decimals` (0..6) decimals ("%.*f"), for 0 <= x < 1e15 / 10^(decimals - 2). */
EC_INTERNAL size_t eci_format_fixed(double x, int decimals, char *buf);
/* The folder of path into dir: "." for a bare name, "/" for one in the root; -1 when it does
 * not fit in n bytes. */
EC_INTERNAL int eci_dirname(const char *path, char *dir, size_t n);
/* Case-insensitive compare ignoring spaces, '-' and '_' ("Tesla T4" ~ "tesla-t4"). */
EC_INTERNAL int eci_name_eq(const char *a, const char *b);
/* 1 when name starts with prefix under the same forgiving comparison ("A100" ~ "a100-sxm4-80gb"). */
EC_INTERNAL int eci_name_prefix(const char *name, const char *prefix);
/* Plain decimal syntax, the one number format of every file and key: [+-]digits[.digits]
 * [e[+-]digits] (integer: no point, no exponent); no hex, inf, nan or spaces. */
#define ECI_NUMBER_MAX 128
EC_INTERNAL int eci_decimal_syntax(const char *s, int integer);
/* strtod of a string that passed eci_decimal_syntax (at most ECI_NUMBER_MAX characters),
 * independent of the C locale; *overflow is set when it does not fit in a double. */
EC_INTERNAL double eci_strtod_c(const char *s, int *overflow);
/* Parse a finite double / integer from a whole string in that syntax; 0 on success. */
EC_INTERNAL int eci_parse_double(const char *s, double *out);
EC_INTERNAL int eci_parse_long(const char *s, long *out);
/* An unsigned 64-bit integer, decimal or 0x hexadecimal, digits only (no sign or blanks); *overflow
 * is set when it does not fit.  0 on success. */
EC_INTERNAL int eci_parse_u64(const char *s, uint64_t *out, int *overflow);
/* A software release ("2.10", "9.13.1") as EC_RELEASE(major, minor), which orders as the
 * releases do (2.9 < 2.10 < 2.13); 0 on success, -1 when s is not of that form. */
EC_INTERNAL int eci_parse_release(const char *s, int *key);
/* "major.minor" of a release key into buf; returns buf. */
EC_INTERNAL char *eci_release_text(int key, char *buf, size_t n);

/* ---- checked arithmetic (checked.c) --------------------------------------------------- */
/* One factor of a product of counts: the config key it comes from and its value (>= 0). */
typedef struct eci_factor {
    const char *key;
    int64_t value;
} eci_factor;
/* The product of n factors into *out when it is at most limit; otherwise EC_EINVAL with a
 * message naming every key and value and what the product counts, e.g. "batch_per_gpu x
 * num_gpus = 32768 x 65536 = 2147483648 samples per micro-step is more than 2147483647".
 * Never overflows, whatever the values. */
EC_INTERNAL int eci_product(ec_ctx *ctx, const eci_factor *f, size_t n, int64_t limit, const char *what,
                            int64_t *out);

#endif /* EC_BASE_H */
