/* The CPU backend's reductions (gp_reduce_args): the driver around the typed loops of kernels.h.
 *
 * Along a contiguous axis (inner == 1) each row is cut into pieces of GP_CPU_PIECE elements; a
 * loop reduces each piece to a partial result and the partials are combined in piece order:
 * pairwise for float sums, in sequence for the rest.  The pieces are the unit of the threads' work,
 * so the result is the same for any number of threads.  Along another axis the loops fold rows of
 * contiguous columns into an accumulator row, column tiles being the threads' unit: every column
 * is reduced in row order whatever the tiling.  A call below the parallel threshold runs on the
 * calling thread with no allocation. */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_backend.h"
#include "cpu/kernels.h"
#include "cpu/parallel.h"

/* The widest column tile: its accumulator row lives on the stack. */
enum { MAX_TILE = 1024 };

typedef struct {
    const gp_reduce_args *desc;
    const char *in;
    char *out;
    gp_acc_kind acc;
    gp_reduce_run_fn run;
    gp_reduce_columns_fn columns;
    int64_t in_size, out_size;
    int64_t pieces;        /* pieces per row (inner == 1) */
    gp_partial *partials;  /* outer * pieces partials, when rows have several pieces and threads share them */
    int64_t tile, tiles;   /* column tile width, tiles per outer index (inner > 1) */
    int64_t tasks;
    int parts;
} reduce_job;

/* ---- combining partials in piece order ------------------------------------------------------------ */

enum { MINMAX_BUFFER = 256 };

typedef struct {
    gp_partial total; /* WORD, F64 products: the running result; SAME: the first NaN (total.nan) */
    double level[64]; /* float sums: a binary counter of partial sums (pairwise over the pieces) */
    uint64_t count;
    uint64_t buffer[MINMAX_BUFFER]; /* min/max: values not folded yet, as the input's type */
    int buffered;
} combiner;

static void combiner_start(const reduce_job *job, combiner *c)
{
    c->count = 0;
    c->buffered = 0;
    c->total.nan = 0;
    c->total.u = job->desc->op == GP_PROD ? 1 : 0;
    c->total.f = job->desc->op == GP_PROD ? 1.0 : -0.0;
}

/* min/max: folds the buffered values into one (the loop over them as a row) */
static void fold_buffer(const reduce_job *job, combiner *c)
{
    gp_partial folded;
    job->run(c->buffer, c->buffered, &folded);
    memcpy(c->buffer, &folded.u, (size_t)job->in_size);
    c->buffered = 1;
}

static void combiner_push(const reduce_job *job, combiner *c, const gp_partial *p)
{
    switch (job->acc) {
    case GP_ACC_SAME:
        if (c->total.nan) return;
        if (p->nan) {
            c->total = *p;
            return;
        }
        if (c->buffered == MINMAX_BUFFER) fold_buffer(job, c);
        memcpy((char *)c->buffer + c->buffered++ * job->in_size, &p->u, (size_t)job->in_size);
        return;
    case GP_ACC_WORD:
        c->total.u = job->desc->op == GP_PROD ? c->total.u * p->u : c->total.u + p->u;
        return;
    default:
        if (job->desc->op == GP_PROD) {
            c->total.f *= p->f;
            return;
        }
        double v = p->f;
        int level = 0;
        for (; (c->count >> level) & 1; ++level) v = c->level[level] + v;
        c->level[level] = v;
        ++c->count;
    }
}

static gp_partial combiner_result(const reduce_job *job, combiner *c)
{
    if (job->acc == GP_ACC_SAME && !c->total.nan) {
        fold_buffer(job, c);
        c->total.u = 0;
        memcpy(&c->total.u, c->buffer, (size_t)job->in_size);
    } else if ((job->acc == GP_ACC_F64 || job->acc == GP_ACC_F32) && job->desc->op == GP_SUM) {
        double total = -0.0;
        for (int level = 0; c->count >> level; ++level)
            if ((c->count >> level) & 1) total = c->level[level] + total;
        c->total.f = total;
    }
    return c->total;
}

/* Writes result `index` of the output. */
static void store_result(const reduce_job *job, int64_t index, const gp_partial *p)
{
    char *dst = job->out + index * job->out_size;
    if (job->acc == GP_ACC_F64 || job->acc == GP_ACC_F32) gp_cpu_store_doubles(job->desc->out_dtype, &p->f, 1, dst);
    else memcpy(dst, &p->u, (size_t)job->out_size); /* SAME: the input's type; WORD: 64-bit results */
}

/* ---- rows: inner == 1 ----------------------------------------------------------------------------- */

static const char *piece_start(const reduce_job *job, int64_t row, int64_t piece, int64_t *count)
{
    const int64_t n = job->desc->n, first = piece * GP_CPU_PIECE;
    *count = n - first < GP_CPU_PIECE ? n - first : GP_CPU_PIECE;
    return job->in + (row * n + first) * job->in_size;
}

/* Reduces row `row` whole and stores its result. */
static void reduce_row(const reduce_job *job, int64_t row)
{
    int64_t count;
    gp_partial p;
    if (job->pieces == 1) {
        const char *at = piece_start(job, row, 0, &count);
        job->run(at, count, &p);
    } else {
        combiner c;
        combiner_start(job, &c);
        for (int64_t piece = 0; piece < job->pieces; ++piece) {
            gp_partial piece_result;
            const char *at = piece_start(job, row, piece, &count);
            job->run(at, count, &piece_result);
            combiner_push(job, &c, &piece_result);
        }
        p = combiner_result(job, &c);
    }
    store_result(job, row, &p);
}

/* Tasks of a parallel row reduction: whole rows, or (with partials) pieces. */
static void rows_range(void *ctx, int64_t first, int64_t last)
{
    const reduce_job *job = ctx;
    for (int64_t task = first; task < last; ++task) {
        if (job->partials == NULL) {
            reduce_row(job, task);
            continue;
        }
        int64_t count;
        const char *at = piece_start(job, task / job->pieces, task % job->pieces, &count);
        job->run(at, count, &job->partials[task]);
    }
}

static int reduce_rows(reduce_job *job)
{
    const gp_reduce_args *d = job->desc;
    job->pieces = (d->n + GP_CPU_PIECE - 1) / GP_CPU_PIECE;
    const double bytes = (double)d->outer * (double)d->n * (double)job->in_size;
    job->tasks = d->outer * job->pieces;
    job->parts = gp_cpu_parts(bytes, job->tasks);
    job->partials = NULL;
    if (job->parts > 1 && job->pieces > 1) {
        job->partials = malloc((size_t)job->tasks * sizeof *job->partials);
        if (job->partials == NULL) job->parts = 1; /* no memory to share: one thread needs none */
    }
    if (job->partials == NULL) job->tasks = d->outer; /* tasks are whole rows */
    if (job->parts == 1) {
        for (int64_t row = 0; row < d->outer; ++row) reduce_row(job, row);
        return 0;
    }
    const double task_bytes = (double)(job->partials ? (d->n < GP_CPU_PIECE ? d->n : GP_CPU_PIECE) : d->n) * job->in_size;
    gp_pool_for(job->parts, job->tasks, gp_cpu_grain(task_bytes, job->tasks, job->parts), rows_range, job);
    if (job->partials != NULL) {
        for (int64_t row = 0; row < d->outer; ++row) {
            combiner c;
            combiner_start(job, &c);
            for (int64_t piece = 0; piece < job->pieces; ++piece)
                combiner_push(job, &c, &job->partials[row * job->pieces + piece]);
            const gp_partial p = combiner_result(job, &c);
            store_result(job, row, &p);
        }
        free(job->partials);
    }
    return 0;
}

/* ---- columns: inner > 1 --------------------------------------------------------------------------- */

static void reduce_tile(const reduce_job *job, int64_t task)
{
    const gp_reduce_args *d = job->desc;
    const int64_t outer = task / job->tiles, first = task % job->tiles * job->tile;
    const int64_t width = d->inner - first < job->tile ? d->inner - first : job->tile;
    uint64_t acc[MAX_TILE]; /* the kind's accumulators: the input's type, uint64_t or double */
    job->columns(job->in + (outer * d->n * d->inner + first) * job->in_size, d->n, d->inner, width, acc, 1);
    char *dst = job->out + (outer * d->inner + first) * job->out_size;
    if (job->acc == GP_ACC_F64 || job->acc == GP_ACC_F32)
        gp_cpu_store_doubles(d->out_dtype, (const double *)acc, width, dst);
    else
        memcpy(dst, acc, (size_t)(width * job->out_size));
}

static void tiles_range(void *ctx, int64_t first, int64_t last)
{
    for (int64_t task = first; task < last; ++task) reduce_tile(ctx, task);
}

static int reduce_columns(reduce_job *job)
{
    const gp_reduce_args *d = job->desc;
    const double bytes = (double)d->outer * (double)d->n * (double)d->inner * (double)job->in_size;
    const int threads = gp_cpu_parts(bytes, INT64_MAX);
    /* Tiles narrow enough for two per thread, from MAX_TILE columns down to 64: the tiling changes
     * which thread reduces a column, never how. */
    job->tile = MAX_TILE;
    while (job->tile > 64 && d->outer * ((d->inner + job->tile - 1) / job->tile) < 2 * threads) job->tile /= 2;
    job->tiles = (d->inner + job->tile - 1) / job->tile;
    job->tasks = d->outer * job->tiles;
    job->parts = gp_cpu_parts(bytes, job->tasks);
    if (job->parts == 1) {
        for (int64_t task = 0; task < job->tasks; ++task) reduce_tile(job, task);
        return 0;
    }
    gp_pool_for(job->parts, job->tasks, gp_cpu_grain((double)d->n * (double)job->tile * (double)job->in_size, job->tasks, job->parts),
                tiles_range, job);
    return 0;
}

int gp_cpu_reduce(const gp_call *call, gp_error *err)
{
    const gp_reduce_args *d = &call->reduce;
    const gp_cpu_kernels *kernels = gp_cpu_kernels_get();
    reduce_job job = {.desc = d, .in = call->in, .out = call->out};
    job.acc = gp_reduce_acc(d->op, d->in_dtype, d->out_dtype);
    job.run = kernels->reduce_run[d->op][job.acc][d->in_dtype];
    job.columns = kernels->reduce_columns[d->op][job.acc][d->in_dtype];
    job.in_size = gp_dtype_size(d->in_dtype);
    job.out_size = gp_dtype_size(d->out_dtype);
    if (job.run == NULL || job.columns == NULL)
        return gp_fail(err, GP_ERR_INVALID, "reduce: no CPU loop for this operation and dtype pair");
    return d->inner == 1 ? reduce_rows(&job) : reduce_columns(&job);
}
