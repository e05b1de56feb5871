/* The CPU backend's reductions (gp_reduce_args): the driver around the typed loops of kernels.h.
 *
 * Along a contiguous axis (inner == 1) each row is cut into pieces of GP_CPU_PIECE elements; a
 * loop reduces each piece to a partial result and the partials are combined in piece order:
 * pairwise for float sums, in sequence for the rest.  The pieces are the unit of the threads' work,
 * so the result is the same for any number of threads.  Along another axis the loops fold rows of
 * contiguous columns into an accumulator row, column tiles being the threads' unit: every column
 * is reduced in row order whatever the tiling.  Columns narrower than GP_CPU_NARROW_COLUMNS are
 * reduced as rows instead (the column loops' vectors would be mostly empty): each column's pieces,
 * from blocks of GP_CPU_NARROW_ROWS rows transposed so that each column's part is contiguous,
 * reduced by the row loops and combined in order (a column of one block stored from it; the
 * blocks of argmin/argmax hold a piece, GP_CPU_PIECE rows, to be searched while in cache).  Many
 * rows of at most SHORT_ROW_BYTES go the other way: blocks of them transposed, the column loops
 * reduce a row per lane.  A call below the parallel threshold runs on the calling thread with no
 * allocation.
 *
 * argmin/argmax reduce a row's pieces to their best values (min/max's loops and combination), then
 * find the first index of the best in the first piece that holds it; a row of one piece of 4- or
 * 8-byte elements goes through their one-pass loop first, which gives up on a NaN.  That loop also
 * searches columns in place, a lane per column, where their count divides its lanes (then each
 * piece's best rows are combined by the same loop).  Along other columns their own loop keeps each
 * column's best and its row.  any, all and count_nonzero count 64-bit words: 0/1 per piece or'ed
 * (any) or and'ed (all), counts added; along columns they count, and any and all are the counts
 * compared with 0 and n.  var, std and mean reduce pieces to (count, mean, M2), combined in piece
 * order by Chan, Golub and LeVeque's formula; along columns to shifted sums.
 *
 * skip_nan (float inputs) picks the NaN-skipping loops: a piece of NaNs is a NaN partial for
 * min/max, which the combination passes by unless every piece is one; argmin/argmax then give -1;
 * the moments' loops count only numbers (a count of 0 gives NaN). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_backend.h"
#include "cpu/kernels.h"
#include "cpu/parallel.h"

enum { MAX_TILE = GP_CPU_COLUMN_TILE };

typedef struct {
    const gp_reduce_args *desc;
    const char *in;
    const gp_copy_args *view;       /* the input's strided view, read a piece at a time, or NULL */
    gp_copy_args columns_view;      /* narrow columns: the input's columns as rows (view points here) */
    gp_reduce_args lines;           /* narrow columns: the call as a reduction of those rows (desc points here) */
    int64_t width;                  /* narrow columns: the call's inner extent */
    int64_t block_rows;             /* narrow columns: the rows of a transposed block */
    int64_t slabs;                  /* short rows: the outer indices of a transposed block */
    char *out;
    gp_acc_kind acc;
    gp_reduce_run_fn run;
    gp_reduce_columns_fn columns;
    gp_find_fn find;                /* argmin/argmax: the first index of the best value */
    gp_arg_columns_fn arg_columns;  /* argmin/argmax along columns, else NULL */
    gp_arg_run_fn arg_run;          /* argmin/argmax of a whole row in one pass, or NULL */
    int arg;                        /* argmin/argmax: rows store the index of their result */
    int skip_nan;                   /* NaN elements left out (float inputs) */
    int64_t in_size, out_size;
    int64_t pieces;        /* pieces per row (inner == 1) */
    gp_partial *partials;  /* outer * pieces partials, when rows have several pieces and threads share them */
    int64_t tile, tiles;   /* column tile width, tiles per outer index (inner > 1) */
    int64_t tasks;
    int parts;
    atomic_int out_of_memory; /* a thread found no memory to gather its pieces into */
    int64_t *candidates;      /* interleaved columns of several pieces: each piece's best row per column */
    atomic_int gave_up;       /* interleaved columns: a NaN, left to the other paths */
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
    c->total.u = job->desc->op == GP_PROD || job->desc->op == GP_ALL ? 1 : 0;
    c->total.f = job->desc->op == GP_PROD ? 1.0 : -0.0;
    c->total.m2 = 0.0;
}

/* var/std: Chan, Golub and LeVeque's combination of the moments of two disjoint parts. */
static void combine_moments(gp_partial *a, const gp_partial *b)
{
    if (b->u == 0) return;
    if (a->u == 0) {
        *a = *b;
        return;
    }
    const double count = (double)(a->u + b->u), b_share = (double)b->u / count, delta = b->f - a->f;
    a->m2 = a->m2 + b->m2 + delta * delta * ((double)a->u * b_share);
    a->f += delta * b_share;
    a->u += b->u;
}

/* x rounded to float dtype t, as a double. */
static double rounded_to(gp_dtype t, double x)
{
    if (t == GP_FLOAT32) return (float)x;
    if (t != GP_FLOAT16) return x;
    gp_half h;
    float f;
    gp_cpu_store_doubles(t, &x, 1, &h);
    gp_cpu_half_to_float(&h, 1, &f);
    return f;
}

/* A float sum as NumPy's, which starts from +0.0: the loops start from -0.0 (the identity of IEEE
 * addition), so a sum of negative zeros alone is -0.0 until +0.0 is added. */
static double as_numpy_sum(double sum) { return sum + 0.0; }

/* var/std's result from the moments (NaN where count - ddof is not positive); std is the square
 * root of the variance rounded to the result dtype, as NumPy's (whose float16 variance may
 * overflow to inf); mean's the mean (NaN for a count of 0). */
static double moments_result(const gp_reduce_args *d, double count, double mean, double m2)
{
    if (d->op == GP_MEAN) return count > 0.0 ? as_numpy_sum(mean) : NAN;
    const double dof = count - d->ddof, var = dof > 0.0 ? m2 / dof : NAN;
    return d->op == GP_STD ? sqrt(rounded_to(d->out_dtype, var)) : var;
}

static uint64_t combine_words(gp_op op, uint64_t a, uint64_t b)
{
    switch (op) {
    case GP_PROD: return a * b;
    case GP_ANY: return a | b;
    case GP_ALL: return a & b;
    default: return a + b;
    }
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
        if (c->total.nan && !job->skip_nan) return; /* NaN wins */
        if (p->nan) {
            if (!job->skip_nan || c->buffered == 0) c->total = *p; /* skip_nan: NaNs only so far */
            return;
        }
        c->total.nan = 0;
        if (c->buffered == MINMAX_BUFFER) fold_buffer(job, c);
        memcpy((char *)c->buffer + c->buffered++ * job->in_size, &p->u, (size_t)job->in_size);
        return;
    case GP_ACC_WORD:
        c->total.u = combine_words(job->desc->op, c->total.u, p->u);
        return;
    case GP_ACC_MOMENTS:
        combine_moments(&c->total, p);
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

/* ---- rows: inner == 1 ----------------------------------------------------------------------------- */

/* The elements of a piece: where they lie, or for a strided view gathered into `buffer` (room for
 * GP_CPU_PIECE elements; NULL when the input is contiguous). */
static const char *piece_start(const reduce_job *job, int64_t row, int64_t piece, int64_t *count, char *buffer)
{
    const int64_t n = job->desc->n, first = piece * GP_CPU_PIECE;
    *count = n - first < GP_CPU_PIECE ? n - first : GP_CPU_PIECE;
    if (job->view == NULL) return job->in + (row * n + first) * job->in_size;
    gp_cpu_gather(job->view, job->in, row * n + first, *count, buffer);
    return buffer;
}

/* argmin/argmax: whether a piece's best value is the row's best (a NaN: the piece has one). */
static int piece_holds(const reduce_job *job, const gp_partial *piece, const gp_partial *best)
{
    if (best->nan) return piece->nan;
    return !piece->nan && job->find(&piece->u, 1, &best->u, GP_FIND_EQUAL) == 0;
}

/* nanargmin/nanargmax: whether the best number is the key NumPy gives NaN (+inf, -inf for argmax). */
static int nan_key(const reduce_job *job, const gp_partial *best)
{
    double value;
    if (job->desc->in_dtype == GP_FLOAT16) {
        float f;
        gp_cpu_half_to_float((const gp_half *)&best->u, 1, &f);
        value = f;
    } else if (job->desc->in_dtype == GP_FLOAT32) {
        float f;
        memcpy(&f, &best->u, sizeof f);
        value = f;
    } else {
        memcpy(&value, &best->u, sizeof value);
    }
    return isinf(value) && (value > 0) == (job->desc->op == GP_ARGMIN);
}

/* argmin/argmax: what marks a row's first best element, given its best value (not a NaN row of
 * nanargmin/nanargmax).  nanargmin/nanargmax's +inf (-inf) ties with NaN, as NumPy reads NaN. */
static gp_find_mode best_mode(const reduce_job *job, const gp_partial *best)
{
    if (best->nan) return GP_FIND_NAN;
    return job->skip_nan && nan_key(job, best) ? GP_FIND_EQUAL_OR_NAN : GP_FIND_EQUAL;
}

/* argmin/argmax: the index of the first best element of a row of count elements held at `at`.
 * nanargmin/nanargmax: -1 for a row of NaNs. */
static int64_t index_in_row(const reduce_job *job, const char *at, int64_t count, const gp_partial *best)
{
    return job->skip_nan && best->nan ? -1 : job->find(at, count, &best->u, best_mode(job, best));
}

/* argmin/argmax: the index in row `row` of the first element equal to its best value (or of its
 * first NaN), searched in the first piece that holds it (pieces: the row's piece results, NULL for
 * a row of one piece).  nanargmin/nanargmax: -1 for a row of NaNs. */
static int64_t first_index(const reduce_job *job, int64_t row, const gp_partial *best, const gp_partial *pieces,
                           char *buffer)
{
    if (job->skip_nan && best->nan) return -1;
    const gp_find_mode mode = best_mode(job, best);
    int64_t piece = 0, count;
    if (mode == GP_FIND_EQUAL_OR_NAN) /* the first of either, in any piece */
        for (;; ++piece) {
            const char *at = piece_start(job, row, piece, &count, buffer);
            const int64_t found = job->find(at, count, &best->u, mode);
            if (found >= 0) return piece * GP_CPU_PIECE + found;
        }
    if (pieces != NULL)
        while (piece + 1 < job->pieces && !piece_holds(job, &pieces[piece], best)) ++piece;
    const char *at = piece_start(job, row, piece, &count, buffer);
    return piece * GP_CPU_PIECE + index_in_row(job, at, count, best);
}

/* Writes result `index` of the output. */
static void store_result(const reduce_job *job, int64_t index, const gp_partial *p)
{
    char *dst = job->out + index * job->out_size;
    if (job->acc == GP_ACC_MOMENTS) {
        const double result = moments_result(job->desc, (double)p->u, p->f, p->m2);
        gp_cpu_store_doubles(job->desc->out_dtype, &result, 1, dst);
    } else if (job->acc == GP_ACC_F64 || job->acc == GP_ACC_F32) {
        const double result = job->desc->op == GP_SUM ? as_numpy_sum(p->f) : p->f;
        gp_cpu_store_doubles(job->desc->out_dtype, &result, 1, dst);
    } else {
        memcpy(dst, &p->u, (size_t)job->out_size); /* SAME: the input's type; WORD: 64-bit results */
    }
}

/* Stores row `row`'s result p: the value, or for argmin/argmax its index (pieces and buffer as
 * first_index's). */
static void store_row(const reduce_job *job, int64_t row, const gp_partial *p, const gp_partial *pieces, char *buffer)
{
    if (!job->arg) {
        store_result(job, row, p);
        return;
    }
    const int64_t index = first_index(job, row, p, pieces, buffer);
    memcpy(job->out + row * job->out_size, &index, sizeof index);
}

/* Reduces line `line`, a row of count elements held whole at `at`, and stores its result. */
static void reduce_whole_row(const reduce_job *job, int64_t line, const char *at, int64_t count)
{
    int64_t index;
    if (job->arg_run == NULL || job->arg_run(at, count, 1, &index) != 0) {
        gp_partial p;
        job->run(at, count, &p);
        if (!job->arg) {
            store_result(job, line, &p);
            return;
        }
        index = index_in_row(job, at, count, &p);
    }
    memcpy(job->out + line * job->out_size, &index, sizeof index);
}

/* Reduces row `row` whole and stores its result (buffer as piece_start's). */
static void reduce_row(const reduce_job *job, int64_t row, char *buffer)
{
    int64_t count;
    if (job->pieces == 1) {
        const char *at = piece_start(job, row, 0, &count, buffer);
        reduce_whole_row(job, row, at, count);
        return;
    }
    combiner c;
    combiner_start(job, &c);
    for (int64_t piece = 0; piece < job->pieces; ++piece) {
        gp_partial piece_result;
        const char *at = piece_start(job, row, piece, &count, buffer);
        job->run(at, count, &piece_result);
        combiner_push(job, &c, &piece_result);
    }
    const gp_partial p = combiner_result(job, &c);
    store_row(job, row, &p, NULL, buffer);
}

/* Every row's result from its pieces' partials, combined in piece order. */
static void store_rows(reduce_job *job)
{
    /* first_index reads pieces again */
    char *buffer = job->arg ? gp_cpu_piece_buffer(job->view, &job->out_of_memory) : NULL;
    if (!atomic_load(&job->out_of_memory)) {
        for (int64_t row = 0; row < job->desc->outer; ++row) {
            combiner c;
            combiner_start(job, &c);
            for (int64_t piece = 0; piece < job->pieces; ++piece)
                combiner_push(job, &c, &job->partials[row * job->pieces + piece]);
            const gp_partial p = combiner_result(job, &c);
            store_row(job, row, &p, &job->partials[row * job->pieces], buffer);
        }
    }
    free(buffer);
}

/* Tasks of a parallel row reduction: whole rows, or (with partials) pieces. */
static void rows_range(void *ctx, int64_t first, int64_t last)
{
    reduce_job *job = ctx;
    char *buffer = gp_cpu_piece_buffer(job->view, &job->out_of_memory);
    if (job->view != NULL && buffer == NULL) return;
    for (int64_t task = first; task < last; ++task) {
        if (job->partials == NULL) {
            reduce_row(job, task, buffer);
            continue;
        }
        int64_t count;
        const char *at = piece_start(job, task / job->pieces, task % job->pieces, &count, buffer);
        job->run(at, count, &job->partials[task]);
    }
    free(buffer);
}

static int reduce_rows(reduce_job *job)
{
    const gp_reduce_args *d = job->desc;
    job->pieces = (d->n + GP_CPU_PIECE - 1) / GP_CPU_PIECE;
    const double bytes = (double)d->outer * (double)d->n * (double)job->in_size;
    job->tasks = d->outer * job->pieces;
    job->parts = gp_cpu_parts(bytes, job->tasks);
    job->partials = NULL;
    /* Rows of several pieces keep their pieces' results when threads share them, and for
     * argmin/argmax, which look for the piece that holds the best. */
    if ((job->parts > 1 || job->arg) && job->pieces > 1) {
        job->partials = malloc((size_t)job->tasks * sizeof *job->partials);
        if (job->partials == NULL && job->arg) return -1;
        if (job->partials == NULL) job->parts = 1; /* no memory to share: one thread needs none */
    }
    if (job->partials == NULL) job->tasks = d->outer; /* tasks are whole rows */
    if (job->parts == 1) {
        rows_range(job, 0, job->tasks);
    } else {
        const int64_t task_elements = job->partials != NULL && d->n > GP_CPU_PIECE ? GP_CPU_PIECE : d->n;
        const double task_bytes = (double)task_elements * (double)job->in_size;
        gp_pool_for(job->parts, job->tasks, gp_cpu_grain(task_bytes, job->tasks, job->parts), rows_range, job);
    }
    if (job->partials != NULL) store_rows(job);
    free(job->partials);
    return atomic_load(&job->out_of_memory) ? -1 : 0;
}

/* ---- columns: inner > 1 --------------------------------------------------------------------------- */

/* The results of `width` (up to MAX_TILE) columns of n rows, `stride` elements apart, from src,
 * stored at dst. */
static void reduce_column_block(const reduce_job *job, const char *src, int64_t stride, int64_t width, char *dst)
{
    const gp_reduce_args *d = job->desc;
    uint64_t acc[4 * MAX_TILE]; /* the kind's accumulators: the input's type, uint64_t or double (4 for the moments) */
    if (job->arg) {
        int64_t index[MAX_TILE];
        job->arg_columns(src, d->n, stride, width, acc, index);
        memcpy(dst, index, (size_t)width * sizeof *index);
        return;
    }
    job->columns(src, d->n, stride, width, acc, 1);
    if (job->acc == GP_ACC_MOMENTS) {
        const double *shift = (const double *)acc, *s1 = shift + width, *s2 = s1 + width, *counted = s2 + width;
        double results[MAX_TILE];
        for (int64_t j = 0; j < width; ++j) {
            const double count = job->skip_nan ? counted[j] : (double)d->n;
            const double m2 = s2[j] - s1[j] * (s1[j] / count);
            results[j] = moments_result(d, count, shift[j] + s1[j] / count, m2 < 0.0 ? 0.0 : m2);
        }
        gp_cpu_store_doubles(d->out_dtype, results, width, dst);
    } else if (job->acc == GP_ACC_F64 || job->acc == GP_ACC_F32) {
        double *results = (double *)acc;
        if (d->op == GP_SUM)
            for (int64_t j = 0; j < width; ++j) results[j] = as_numpy_sum(results[j]);
        gp_cpu_store_doubles(d->out_dtype, results, width, dst);
    }
    else if (d->op == GP_ANY || d->op == GP_ALL) /* from the columns' counts */
        for (int64_t j = 0; j < width; ++j) dst[j] = d->op == GP_ANY ? acc[j] != 0 : acc[j] == (uint64_t)d->n;
    else
        memcpy(dst, acc, (size_t)(width * job->out_size));
}

static void reduce_tile(const reduce_job *job, int64_t task)
{
    const gp_reduce_args *d = job->desc;
    const int64_t outer = task / job->tiles, first = task % job->tiles * job->tile;
    const int64_t width = d->inner - first < job->tile ? d->inner - first : job->tile;
    reduce_column_block(job, job->in + (outer * d->n * d->inner + first) * job->in_size, d->inner, width,
                        job->out + (outer * d->inner + first) * job->out_size);
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
    const double tile_bytes = (double)d->n * (double)job->tile * (double)job->in_size;
    gp_pool_for(job->parts, job->tasks, gp_cpu_grain(tile_bytes, job->tasks, job->parts), tiles_range, job);
    return 0;
}

/* ---- narrow columns: 1 < inner < GP_CPU_NARROW_COLUMNS ----------------------------------------- */

/* argmin/argmax searched a column's best again through the strided view, and from 8 columns up
 * their column loop was faster (float32 (2^21 / n / 12, n, 12) along n, 2-core host: 2.3-3.6 ms
 * against 2.2-9.5 for n = 32 to 8192; at 2 and 4 columns 1.0-3.8 against 1.8-8.7).  Their blocks
 * now hold a whole piece, searched while in cache; 8 to 15 columns of up to 512 rows then measured
 * the same either way (float32 (8192, 64, 8), (16384, 40, 10), (8192, 32, 12): within the noise). */
enum { NARROW_ARG_COLUMNS = 8 };

/* Task `task`: piece task % pieces of the columns of outer index task / pieces, each column's part
 * of every block in it reduced by the row loop, the results combined in order into its partial. */
static void narrow_pieces_range(void *ctx, int64_t first, int64_t last)
{
    reduce_job *job = ctx;
    const int64_t n = job->desc->n, width = job->width;
    const int64_t block_rows = job->block_rows;
    char *block = malloc((size_t)(width * block_rows * job->in_size));
    if (block == NULL) {
        atomic_store(&job->out_of_memory, 1);
        return;
    }
    const gp_transpose_fn transpose = gp_cpu_kernels_get()->transpose[gp_transpose_index(job->in_size)];
    combiner columns[GP_CPU_NARROW_COLUMNS];
    for (int64_t task = first; task < last; ++task) {
        const int64_t outer = task / job->pieces, piece = task % job->pieces;
        const int64_t end = n - piece * GP_CPU_PIECE < GP_CPU_PIECE ? n : (piece + 1) * GP_CPU_PIECE;
        if (job->partials != NULL)
            for (int64_t column = 0; column < width; ++column) combiner_start(job, &columns[column]);
        for (int64_t row = piece * GP_CPU_PIECE; row < end; row += block_rows) {
            const int64_t rows = end - row < block_rows ? end - row : block_rows;
            const char *in = job->in + (outer * n + row) * width * job->in_size;
            transpose(in, block, width, rows, width, block_rows);
            for (int64_t column = 0; column < width; ++column) {
                const char *line = block + column * block_rows * job->in_size;
                if (job->partials == NULL) {
                    reduce_whole_row(job, outer * width + column, line, rows);
                    continue;
                }
                gp_partial part;
                job->run(line, rows, &part);
                combiner_push(job, &columns[column], &part);
            }
        }
        for (int64_t column = 0; column < width && job->partials != NULL; ++column)
            job->partials[(outer * width + column) * job->pieces + piece] = combiner_result(job, &columns[column]);
    }
    free(block);
}

/* 0, or -1 when there was no memory for the partials or a thread's block.  The call becomes a
 * reduction of rows: its (outer, n, inner) input read as the view (outer, inner, n), through which
 * argmin/argmax search the piece that holds a column's best. */
static int reduce_narrow_columns(reduce_job *job)
{
    const gp_reduce_args *d = job->desc;
    job->width = d->inner;
    job->lines = *d;
    job->lines.outer = d->outer * d->inner;
    job->lines.inner = 1;
    job->desc = &job->lines;
    job->pieces = (d->n + GP_CPU_PIECE - 1) / GP_CPU_PIECE;
    /* Columns that fit one block are stored from it, argmin/argmax searching it while it is in cache
     * (so their blocks hold a whole piece); longer ones keep their pieces' results for store_rows
     * to combine (and search through the view). */
    job->block_rows = job->arg ? (d->n < GP_CPU_PIECE ? d->n : GP_CPU_PIECE) : GP_CPU_NARROW_ROWS;
    const int whole_in_block = d->n <= job->block_rows;
    job->partials = NULL;
    if (!whole_in_block) {
        gp_copy_args *view = &job->columns_view;
        view->ndim = 3;
        view->elem_size = job->in_size;
        view->shape[0] = d->outer, view->shape[1] = d->inner, view->shape[2] = d->n;
        view->strides[0] = d->n * d->inner, view->strides[1] = 1, view->strides[2] = d->inner;
        job->view = view;
        job->partials = malloc((size_t)(job->lines.outer * job->pieces) * sizeof *job->partials);
        if (job->partials == NULL) return -1;
    }
    job->tasks = d->outer * job->pieces;
    job->parts = gp_cpu_parts((double)d->outer * (double)d->n * (double)d->inner * (double)job->in_size, job->tasks);
    if (job->parts == 1) narrow_pieces_range(job, 0, job->tasks);
    else gp_pool_for(job->parts, job->tasks, 1, narrow_pieces_range, job);
    if (!whole_in_block && !atomic_load(&job->out_of_memory)) store_rows(job);
    free(job->partials);
    return atomic_load(&job->out_of_memory) ? -1 : 0;
}

/* ---- argmin/argmax of up to 8 or 16 columns in the one-pass loop's lanes ------------------------ */

/* The most columns of one pass: 64-byte vectors of 4-byte elements. */
enum { INTERLEAVED_MAX_COLUMNS = 16 };

/* Task `task`: piece task % pieces (GP_CPU_PIECE rows) of the (n, inner) slab of outer index
 * task / pieces, searched in place, a lane per column: each column's best row, to the result when
 * the slab is one piece, else to its candidates.  A NaN stops every task (gave_up). */
static void interleaved_range(void *ctx, int64_t first, int64_t last)
{
    reduce_job *job = ctx;
    const gp_reduce_args *d = job->desc;
    for (int64_t task = first; task < last && !atomic_load(&job->gave_up); ++task) {
        const int64_t outer = task / job->pieces, row = task % job->pieces * GP_CPU_PIECE;
        const int64_t rows = d->n - row < GP_CPU_PIECE ? d->n - row : GP_CPU_PIECE;
        int64_t index[INTERLEAVED_MAX_COLUMNS];
        if (job->arg_run(job->in + (outer * d->n + row) * d->inner * job->in_size, rows, d->inner, index) != 0) {
            atomic_store(&job->gave_up, 1);
            return;
        }
        for (int64_t column = 0; column < d->inner; ++column) index[column] += row;
        if (job->pieces == 1) memcpy(job->out + outer * d->inner * job->out_size, index, (size_t)d->inner * sizeof *index);
        else memcpy(job->candidates + task * d->inner, index, (size_t)d->inner * sizeof *index);
    }
}

/* argmin/argmax along columns that the one-pass loop takes (arg_run, gp_arg_run_takes), read
 * in place: no transpose.  A column of several pieces then takes the first best of its pieces'
 * candidates, their values gathered and searched by the same loop.  0, -1 when there was no
 * memory, 1 when the input holds a NaN: the transposing and column paths then apply the NaN rules. */
static int reduce_interleaved(reduce_job *job)
{
    const gp_reduce_args *d = job->desc;
    job->pieces = (d->n + GP_CPU_PIECE - 1) / GP_CPU_PIECE;
    job->tasks = d->outer * job->pieces;
    job->candidates = NULL;
    char *values = NULL;
    if (job->pieces > 1) {
        job->candidates = malloc((size_t)(job->tasks * d->inner) * sizeof *job->candidates);
        values = malloc((size_t)(job->pieces * job->in_size));
        if (job->candidates == NULL || values == NULL) {
            free(job->candidates);
            free(values);
            return -1;
        }
    }
    const double piece_bytes = (double)(d->n < GP_CPU_PIECE ? d->n : GP_CPU_PIECE) * (double)(d->inner * job->in_size);
    job->parts = gp_cpu_parts(piece_bytes * (double)job->tasks, job->tasks);
    if (job->parts == 1) interleaved_range(job, 0, job->tasks);
    else gp_pool_for(job->parts, job->tasks, gp_cpu_grain(piece_bytes, job->tasks, job->parts), interleaved_range, job);
    for (int64_t line = 0; job->pieces > 1 && !atomic_load(&job->gave_up) && line < d->outer * d->inner; ++line) {
        const int64_t outer = line / d->inner, column = line % d->inner;
        const int64_t *candidates = job->candidates + outer * job->pieces * d->inner + column;
        for (int64_t piece = 0; piece < job->pieces; ++piece) {
            const int64_t row = candidates[piece * d->inner];
            memcpy(values + piece * job->in_size, job->in + ((outer * d->n + row) * d->inner + column) * job->in_size,
                   (size_t)job->in_size);
        }
        int64_t best_piece = 0;
        job->arg_run(values, job->pieces, 1, &best_piece); /* no NaN: every element was searched */
        memcpy(job->out + line * job->out_size, &candidates[best_piece * d->inner], sizeof best_piece);
    }
    free(job->candidates);
    free(values);
    return atomic_load(&job->gave_up);
}

/* ---- short rows: n of at most SHORT_ROW_BYTES, along the last axis or narrow columns ----------- */

/* Rows this short cost the row loops more in their setup than in their elements, so blocks of
 * SHORT_ROWS_BLOCK rows are transposed and the column loops reduce a row in each lane.  The rows
 * are then reduced in element order, as columns are (float32 and float16 sums in blocks of 8 in
 * float32, then in double).  Measured on the 2-core host, 2^21 elements as (2^21 / n, n), one
 * call in ms, row loops -> transposed blocks (NumPy):
 *
 *                   n = 4                16                   32                   64
 *   float32 sum     5.59 -> 1.27 (10.9)  2.55 -> 0.72 (3.29)  2.73 -> 0.92 (1.83)  1.73 -> 1.05 (1.13)
 *   float32 max     9.00 -> 0.63 (24.1)  2.42 -> 0.59 (6.55)  2.34 -> 0.73 (3.27)  0.59 -> 1.01 (1.77)
 *   float32 argmax  18.6 -> 2.77 (9.05)  4.85 -> 2.47 (6.12)  4.32 -> 2.39 (2.08)  1.50 -> 2.72 (1.14)
 *   float64 max     9.73 -> 2.49 (23.3)  2.47 -> 1.45 (6.25)  1.76 -> 2.45 (3.27)  1.48 -> 3.04 (1.97)
 *
 * so rows of up to 128 bytes (32 float32, 16 float64) take the blocks.  Narrow columns (1 < inner <
 * GP_CPU_NARROW_COLUMNS) this short are rows too: a block then holds SHORT_ROWS_BLOCK / inner outer
 * indices, each (n, inner) slab transposed with its `inner` elements as one. */
enum { SHORT_ROW_BYTES = 128, SHORT_ROWS_BLOCK = 256 };

/* The block of task `task` (its rows' elements k at block[k * stride + row]): the task's slabs of
 * (n, inner) elements, outer index by outer index, with `inner` contiguous elements as one. */
static void short_rows_block(const reduce_job *job, int64_t task, char *block, char *gathered)
{
    const gp_reduce_args *d = job->desc;
    const int64_t slabs = job->slabs;
    const int64_t first = task * slabs, count = d->outer - first < slabs ? d->outer - first : slabs;
    const int64_t unit = d->inner * job->in_size; /* bytes of one of a slab's rows */
    const char *in = job->in + first * d->n * unit;
    if (job->view != NULL) { /* rows of a strided view (inner is 1): gathered first */
        gp_cpu_gather(job->view, job->in, first * d->n, count * d->n, gathered);
        in = gathered;
    }
    if (unit <= 8 && (unit & (unit - 1)) == 0) {
        gp_cpu_kernels_get()->transpose[gp_transpose_index(unit)](in, block, d->n, count, d->n, slabs);
        return;
    }
    for (int64_t k = 0; k < d->n; ++k)
        for (int64_t slab = 0; slab < count; ++slab)
            memcpy(block + (k * slabs + slab) * unit, in + (slab * d->n + k) * unit, (size_t)unit);
}

/* Tasks of short rows: SHORT_ROWS_BLOCK / inner outer indices each. */
static void short_rows_range(void *ctx, int64_t first, int64_t last)
{
    reduce_job *job = ctx;
    const gp_reduce_args *d = job->desc;
    const int64_t stride = job->slabs * d->inner;
    const int64_t block_size = d->n * stride * job->in_size;
    /* the block, and for a strided view the rows gathered first (a view gives its contiguous copy's bits) */
    char *block = malloc((size_t)(job->view != NULL ? 2 * block_size : block_size));
    if (block == NULL) {
        atomic_store(&job->out_of_memory, 1);
        return;
    }
    for (int64_t task = first; task < last; ++task) {
        const int64_t row = task * stride, lines = d->outer * d->inner;
        const int64_t rows = lines - row < stride ? lines - row : stride;
        short_rows_block(job, task, block, block + block_size);
        reduce_column_block(job, block, stride, rows, job->out + row * job->out_size);
    }
    free(block);
}

/* 0, or -1 when a thread had no memory for its block. */
static int reduce_short_rows(reduce_job *job)
{
    const gp_reduce_args *d = job->desc;
    job->slabs = SHORT_ROWS_BLOCK / d->inner;
    job->tasks = (d->outer + job->slabs - 1) / job->slabs;
    const double block_bytes = (double)(job->slabs * d->inner) * (double)d->n * (double)job->in_size;
    job->parts = gp_cpu_parts(block_bytes * (double)job->tasks, job->tasks);
    if (job->parts == 1) short_rows_range(job, 0, job->tasks);
    else gp_pool_for(job->parts, job->tasks, gp_cpu_grain(block_bytes, job->tasks, job->parts), short_rows_range, job);
    return atomic_load(&job->out_of_memory) ? -1 : 0;
}

int gp_cpu_reduce(const gp_call *call, gp_error *err)
{
    const gp_reduce_args *d = &call->reduce;
    const gp_cpu_kernels *kernels = gp_cpu_kernels_get();
    reduce_job job = {.desc = d, .in = call->in, .view = call->in_view, .out = call->out};
    job.acc = gp_reduce_acc(d->op, d->in_dtype, d->out_dtype);
    job.skip_nan = d->skip_nan && gp_dtype_is_float(d->in_dtype); /* as the CUDA backend: no NaN in integers */
    job.run = kernels->reduce_run[d->op][job.skip_nan][job.acc][d->in_dtype];
    job.columns = kernels->reduce_columns[d->op][job.skip_nan][job.acc][d->in_dtype];
    job.arg = d->op == GP_ARGMIN || d->op == GP_ARGMAX;
    if (job.arg) {
        job.find = kernels->find[d->in_dtype];
        job.arg_columns = kernels->arg_columns[job.skip_nan][d->op == GP_ARGMAX][d->in_dtype];
        job.arg_run = kernels->arg_run[d->op == GP_ARGMAX][d->in_dtype];
    }
    job.in_size = gp_dtype_size(d->in_dtype);
    job.out_size = gp_dtype_size(d->out_dtype);
    if (job.run == NULL || (job.arg ? job.find == NULL || job.arg_columns == NULL : job.columns == NULL))
        return gp_fail(err, GP_ERR_INVALID, "reduce: no CPU loop for this operation and dtype pair");
    if (d->inner > 1 && job.view != NULL) return gp_fail(err, GP_ERR_INVALID, "reduce: a strided input along columns");
    const int short_rows = d->n * job.in_size <= SHORT_ROW_BYTES && d->outer * d->inner > 1;
    if (job.arg_run != NULL && d->inner > 1 && d->inner <= INTERLEAVED_MAX_COLUMNS && d->outer * d->n > 0 && !short_rows
        && gp_arg_run_takes(d->inner, kernels->vector_bytes / job.in_size)) {
        const int result = reduce_interleaved(&job);
        if (result < 0) return gp_fail(err, GP_ERR_NOMEM, "reduce: out of host memory");
        if (result == 0) return 0;
    }
    if (d->inner >= (job.arg ? NARROW_ARG_COLUMNS : GP_CPU_NARROW_COLUMNS) || (d->inner > 1 && d->outer * d->n == 0))
        return reduce_columns(&job);
    const int failed = short_rows ? reduce_short_rows(&job)
                       : d->inner > 1 ? reduce_narrow_columns(&job)
                                      : reduce_rows(&job);
    return failed ? gp_fail(err, GP_ERR_NOMEM, "reduce: out of host memory") : 0;
}
