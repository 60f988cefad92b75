/*
 * price.c: what a run costs to rent.  A price table (models/prices.csv, or a user's own file
 * through prices=PATH) lists on-demand offers: provider, instance, gpu, gpus per instance,
 * price per hour of the instance, currency, region, date and source.  A job on n GPUs over
 * `nodes` machines rents `nodes` instances of the cheapest offer for its GPU that holds the
 * n / nodes GPUs of one machine (a 1-GPU job on an offer sold only as 8 GPUs pays for 8);
 * price_per_gpu_hour=X overrides the table (n x X per hour, in the table's currency: USD for
 * models/prices.csv and without a table); provider=NAME keeps that
 * provider's offers.  Nothing here predicts time: predict.c multiplies the epoch and run
 * times by the hourly price.  Read through table.c (libcsv), errors name file:line:column.
 */
#include "catalog/price.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct price_row {
    char *provider, *instance, *region, *date, *source;
    size_t gpu;              /* registry index (ctx->gpus) */
    size_t next_same_gpu;    /* the next row of the same GPU, in table order; n: none */
    int gpus;                /* GPUs in one instance */
    double price_per_hour;   /* one instance, in the table's currency */
} price_row;

struct eci_prices {
    char path[EC_PATH_MAX];
    char currency[16];
    price_row *rows;
    size_t n, capacity;      /* rows read, rows allocated */
    /* first[g]: the first row of GPU g (registry index), n when none; a quote walks only its
     * GPU's rows through next_same_gpu (a sweep quotes on every prediction) */
    size_t *first, n_first;
    /* The last offers' texts: a sweep quotes the same few offers again and again (formatting
     * them is most of a quote's cost); replaced round-robin. */
    struct {
        const price_row *row;
        int nodes;
        char offer[sizeof ((eci_quote *)0)->offer];
    } memo[16];
    unsigned memo_next;
};

static void prices_free(ec_ctx *ctx, eci_prices *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n; i++) {
        eci_strfree(ctx, p->rows[i].provider);
        eci_strfree(ctx, p->rows[i].instance);
        eci_strfree(ctx, p->rows[i].region);
        eci_strfree(ctx, p->rows[i].date);
        eci_strfree(ctx, p->rows[i].source);
    }
    eci_free(ctx, p->rows, p->capacity * sizeof *p->rows);
    eci_free(ctx, p->first, p->n_first * sizeof *p->first);
    eci_free(ctx, p, sizeof *p);
}

void eci_price_ctx_free(ec_ctx *ctx)
{
    prices_free(ctx, ctx->prices);
    prices_free(ctx, ctx->user_prices);
    ctx->prices = ctx->user_prices = NULL;
}

/* YYYY-MM-DD, month 01-12, day 01-31. */
static int is_date(const char *s)
{
    if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
        return 0;
    for (int i = 0; i < 10; i++)
        if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9'))
            return 0;
    int month = (s[5] - '0') * 10 + (s[6] - '0'), day = (s[8] - '0') * 10 + (s[9] - '0');
    return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

static int cell_dup(ec_ctx *ctx, const eci_table *t, size_t r, int col, char **out)
{
    *out = eci_strdup(ctx, col >= 0 ? eci_table_cell(t, r, col) : "");
    return *out != NULL ? EC_OK : EC_ENOMEM;
}

static int located(ec_ctx *ctx, const char *path, const eci_table *t, size_t r, int col, const char *what,
                   const char *value)
{
    return eci_error(ctx, EC_EPARSE, "%s:%zu:%d: column '%s': %s", path, eci_table_line(t, r), col + 1, what, value);
}

/* Read and check one row; the row's strings are owned by *row even on failure. */
static int read_row(ec_ctx *ctx, const char *path, const eci_table *t, size_t r, const int *col, price_row *row,
                    char *currency, size_t currency_size)
{
    enum { C_PROVIDER, C_INSTANCE, C_GPU, C_GPUS, C_PRICE, C_CURRENCY, C_DATE, C_SOURCE, C_REGION };
    int rc;
    if ((rc = cell_dup(ctx, t, r, col[C_PROVIDER], &row->provider)) != EC_OK ||
        (rc = cell_dup(ctx, t, r, col[C_INSTANCE], &row->instance)) != EC_OK ||
        (rc = cell_dup(ctx, t, r, col[C_REGION], &row->region)) != EC_OK ||
        (rc = cell_dup(ctx, t, r, col[C_DATE], &row->date)) != EC_OK ||
        (rc = cell_dup(ctx, t, r, col[C_SOURCE], &row->source)) != EC_OK)
        return rc;
    if (row->provider[0] == '\0')
        return located(ctx, path, t, r, col[C_PROVIDER], "provider", "is empty");
    if (row->instance[0] == '\0')
        return located(ctx, path, t, r, col[C_INSTANCE], "instance", "is empty");
    if (row->source[0] == '\0')
        return located(ctx, path, t, r, col[C_SOURCE], "source", "is empty: say where the price comes from");
    if (!is_date(row->date))
        return located(ctx, path, t, r, col[C_DATE], "date", "is not a date YYYY-MM-DD");
    const char *gpu = eci_table_cell(t, r, col[C_GPU]);
    const eci_gpu *g = gpu[0] != '\0' ? eci_hw_find(ctx, gpu) : NULL;
    if (g == NULL) {
        char msg[EC_ERRMSG_MAX];
        eci_strlcpy(msg, gpu[0] != '\0' ? ec_ctx_errmsg(ctx) : "is empty", sizeof msg);
        return located(ctx, path, t, r, col[C_GPU], "gpu", msg);
    }
    row->gpu = (size_t)(g - ctx->gpus);
    long gpus;
    if ((rc = eci_table_int(ctx, t, r, col[C_GPUS], 1, 1024, &gpus)) != EC_OK)
        return rc;
    row->gpus = (int)gpus;
    if ((rc = eci_table_number(ctx, t, r, col[C_PRICE], 1e-6, 1e7, &row->price_per_hour)) != EC_OK)
        return rc;
    const char *cur = eci_table_cell(t, r, col[C_CURRENCY]);
    if (cur[0] == '\0' || strlen(cur) >= currency_size)
        return located(ctx, path, t, r, col[C_CURRENCY], "currency", "must be a currency code such as USD");
    if (currency[0] == '\0')
        eci_strlcpy(currency, cur, currency_size);
    else if (strcmp(currency, cur) != 0)
        return eci_error(ctx, EC_EPARSE, "%s:%zu:%d: column 'currency': '%s' differs from '%s' of the rows above "
                         "(one table, one currency)", path, eci_table_line(t, r), col[C_CURRENCY] + 1, cur, currency);
    return EC_OK;
}

/* The per-GPU chains of rows (first, next_same_gpu), in table order. */
static int link_gpus(ec_ctx *ctx, eci_prices *p)
{
    if ((p->first = eci_calloc(ctx, ctx->n_gpus > 0 ? ctx->n_gpus : 1, sizeof *p->first)) == NULL)
        return EC_ENOMEM;
    p->n_first = ctx->n_gpus > 0 ? ctx->n_gpus : 1;
    for (size_t g = 0; g < p->n_first; g++)
        p->first[g] = p->n;
    for (size_t i = p->n; i-- > 0;) { /* backwards: each row is put in front of the later ones */
        p->rows[i].next_same_gpu = p->first[p->rows[i].gpu];
        p->first[p->rows[i].gpu] = i;
    }
    return EC_OK;
}

static int prices_load(ec_ctx *ctx, const char *path, eci_prices **out)
{
    static const char *const required[] = {"provider", "instance", "gpu", "gpus", "price_per_hour",
                                           "currency", "date", "source"};
    enum { N_REQUIRED = sizeof required / sizeof required[0] };
    *out = NULL;
    eci_table *t = NULL;
    int rc = eci_table_load(ctx, path, &t);
    if (rc != EC_OK)
        return rc;
    int col[N_REQUIRED + 1];
    for (size_t c = 0; c < N_REQUIRED && rc == EC_OK; c++)
        rc = eci_table_require(ctx, t, required[c], &col[c]);
    col[N_REQUIRED] = eci_table_col(t, "region"); /* optional */
    eci_prices *p = NULL;
    if (rc == EC_OK && eci_table_rows(t) == 0)
        rc = eci_error(ctx, EC_EPARSE, "%s: no data rows", path);
    if (rc == EC_OK && (p = eci_calloc(ctx, 1, sizeof *p)) == NULL)
        rc = EC_ENOMEM;
    if (rc == EC_OK && (p->rows = eci_calloc(ctx, eci_table_rows(t), sizeof *p->rows)) == NULL)
        rc = EC_ENOMEM;
    if (rc == EC_OK)
        p->capacity = eci_table_rows(t);
    for (size_t r = 0; rc == EC_OK && r < eci_table_rows(t); r++) {
        p->n = r + 1; /* so that prices_free frees a partly read row */
        rc = read_row(ctx, path, t, r, col, &p->rows[r], p->currency, sizeof p->currency);
    }
    eci_table_free(t);
    if (rc == EC_OK)
        rc = link_gpus(ctx, p);
    if (rc != EC_OK) {
        if (p != NULL && p->rows == NULL)
            p->n = 0;
        prices_free(ctx, p);
        return rc;
    }
    eci_strlcpy(p->path, path, sizeof p->path);
    *out = p;
    return EC_OK;
}

int eci_price_load_default(ec_ctx *ctx, const char *path)
{
    eci_prices *p;
    int rc = eci_ctx_on_free(ctx, eci_price_ctx_free);
    if (rc == EC_OK && (rc = prices_load(ctx, path, &p)) == EC_OK)
        ctx->prices = p;
    return rc;
}

/* The table a config prices with: its prices= file (read once per path), else the models/
 * folder's; *table is NULL when there is none. */
static int table_for(ec_ctx *ctx, const ec_config *cfg, eci_prices **table)
{
    *table = ctx->prices;
    if (cfg->prices[0] == '\0')
        return EC_OK;
    if (ctx->user_prices == NULL || strcmp(ctx->user_prices->path, cfg->prices) != 0) {
        eci_prices *p;
        char msg[EC_ERRMSG_MAX];
        int rc = eci_ctx_on_free(ctx, eci_price_ctx_free);
        if (rc != EC_OK || (rc = prices_load(ctx, cfg->prices, &p)) != EC_OK) {
            eci_strlcpy(msg, ec_ctx_errmsg(ctx), sizeof msg);
            return eci_error(ctx, rc, "key 'prices': %s", msg);
        }
        prices_free(ctx, ctx->user_prices);
        ctx->user_prices = p;
    }
    *table = ctx->user_prices;
    return EC_OK;
}

int eci_price_quote(ec_ctx *ctx, const ec_config *cfg, const eci_gpu *gpu, int nodes, eci_quote *q)
{
    memset(q, 0, sizeof *q);
    int n = cfg->num_gpus;
    eci_prices *table;
    int rc = table_for(ctx, cfg, &table);
    if (rc != EC_OK)
        return rc;
    if (cfg->price_per_gpu_hour > 0) { /* in the table's currency: USD without one */
        q->per_hour = n * cfg->price_per_gpu_hour;
        eci_strlcpy(q->currency, table != NULL ? table->currency : "USD", sizeof q->currency);
        snprintf(q->offer, sizeof q->offer, "price_per_gpu_hour %s %g x %d GPU%s", q->currency,
                 cfg->price_per_gpu_hour, n, n > 1 ? "s" : "");
        return EC_OK;
    }
    if (table == NULL)
        return EC_OK;
    size_t gpu_index = (size_t)(gpu - ctx->gpus);
    int per_node = (n + nodes - 1) / nodes;
    int known_provider = cfg->provider[0] == '\0';
    const price_row *best = NULL;
    for (size_t i = 0; cfg->provider[0] != '\0' && !known_provider && i < table->n; i++)
        known_provider = eci_name_eq(table->rows[i].provider, cfg->provider);
    /* the cheapest row of this GPU (of the provider) with enough GPUs per instance; the first
     * of equal prices in table order */
    size_t r = gpu_index < table->n_first ? table->first[gpu_index] : table->n;
    for (; r < table->n; r = table->rows[r].next_same_gpu) {
        const price_row *row = &table->rows[r];
        if (row->gpus < per_node || (cfg->provider[0] != '\0' && !eci_name_eq(row->provider, cfg->provider)))
            continue;
        if (best == NULL || row->price_per_hour < best->price_per_hour)
            best = row;
    }
    if (!known_provider) {
        enum { MAXN = 64 };
        const char *names[MAXN];
        size_t k = 0;
        for (size_t i = 0; i < table->n && k < MAXN; i++)
            names[k++] = table->rows[i].provider;
        return eci_error(ctx, EC_ENOTFOUND, "key 'provider': no offer from '%s' in %s (did you mean '%s'?)",
                         cfg->provider, table->path, eci_nearest(cfg->provider, names, k));
    }
    if (best == NULL)
        return EC_OK; /* no offer for this GPU at this size: cost unknown */
    q->per_hour = nodes * best->price_per_hour;
    const size_t n_memo = sizeof table->memo / sizeof table->memo[0];
    size_t m = 0;
    while (m < n_memo && !(table->memo[m].row == best && table->memo[m].nodes == nodes))
        m++;
    if (m == n_memo) {
        m = table->memo_next++ % n_memo;
        char *o = table->memo[m].offer;
        size_t size = sizeof table->memo[m].offer;
        snprintf(o, size, "%s %s%s%s (%d x %s, %s %.4g/h, %s)", best->provider, best->instance,
                 best->region[0] ? " " : "", best->region, best->gpus, ctx->gpus[best->gpu].id, table->currency,
                 best->price_per_hour, best->date);
        if (nodes > 1) {
            size_t len = strlen(o);
            snprintf(o + len, size - len, " x %d", nodes);
        }
        table->memo[m].row = best;
        table->memo[m].nodes = nodes;
    }
    memcpy(q->offer, table->memo[m].offer, sizeof q->offer);
    eci_strlcpy(q->currency, table->currency, sizeof q->currency);
    return EC_OK;
}
