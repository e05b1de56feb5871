/* The CPU backend's scans (gp_scan_args: sums, products, min and max, NaN-skipping sums and
 * products): the driver around the typed loops of kernels.h, one loop per operator.
 *
 * Along a contiguous axis (inner == 1) each row is cut into pieces of GP_CPU_PIECE elements.  A
 * piece's outputs are its in-register scan combined with an offset: the row's initial value
 * (gp_scan_args.initial, or the identity) combined with the pieces' totals before it (each total
 * computed by one loop, in double for floats).  One thread scans the pieces in turn, carrying the
 * offset; several threads first compute the totals of their pieces, then (after the offsets are
 * combined in piece order) scan them.  Both give the same bits.
 *
 * Along another axis each column carries its running value (from its initial value) from row to
 * row, column tiles being the threads' unit.  Columns narrower than GP_CPU_NARROW_COLUMNS would
 * leave the column loop's vectors mostly empty: there the narrow loop reads a whole row a vector,
 * in blocks of GP_CPU_NARROW_ROWS rows that are cut as rows' pieces are (each column's offsets
 * from the blocks' totals, in the same two ways). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_backend.h"
#include "cpu/kernels.h"
#include "cpu/parallel.h"

/* Column tiles: the widest keeps its running sums on the stack; the narrowest keeps each row's
 * piece long enough to stream (cumsum of 256 x 256 along axis 0 on the 16-core H200 host: tiles of
 * 64, four threads, 40 us for int32 and float64, 0.19x NumPy; see scan_columns for 128). */
enum { MAX_TILE = 1024, MIN_TILE = 128 };

typedef struct {
    const gp_scan_args *desc;
    const char *in;
    const gp_copy_args *view; /* the input's strided view, read a piece at a time, or NULL */
    char *out;
    gp_acc_kind acc;
    int rule; /* how min and max compare: gp_minmax_rule */
    gp_scan_run_fn run;
    gp_scan_total_fn total;
    gp_scan_columns_fn columns;
    gp_scan_narrow_fn narrow;
    int64_t in_size, out_size;
    int64_t pieces;       /* per row (inner == 1), or per column (narrow columns: blocks) */
    gp_partial *offsets;  /* per piece, when threads share a row's pieces: totals, then offsets */
    int totals_pass;      /* pieces_range computes the totals (1) or scans the pieces (0) */
    int64_t tile, tiles;  /* column tiles (inner > 1) */
    int64_t tasks;
    int parts;
    atomic_int out_of_memory; /* a thread found no memory to gather its pieces into */
    atomic_int non_finite;    /* a float sum or product wrote an inf or NaN (gp_scan_args.non_finite) */
} scan_job;

/* The offset of a row's first piece: the row's initial value when the call gives one, else the
 * operator's identity (for an exclusive sum +0, its first output, rather than -0.0, which leaves an
 * inclusive sum's first output the first element). */
static gp_partial first_offset(const scan_job *job, int64_t row)
{
    gp_partial offset = gp_scan_identity(job->desc->op, job->rule);
    if (job->desc->initial != NULL) {
        if (job->acc == GP_ACC_WORD) offset.u = ((const uint64_t *)job->desc->initial)[row];
        else offset.f = ((const double *)job->desc->initial)[row];
    } else if (job->desc->op == GP_SUM && job->desc->exclusive) {
        offset.f = 0.0;
    }
    return offset;
}

static void add_total(const scan_job *job, gp_partial *offset, const gp_partial *total)
{
    gp_scan_combine(job->acc, job->desc->op, job->rule, offset, total);
}

/* The pieces' totals of `rows` rows (offsets[row * pieces + piece]) replaced by their offsets: each
 * row's first offset combined with the totals before the piece, in piece order. */
static void offsets_from_totals(scan_job *job, int64_t rows)
{
    for (int64_t row = 0; row < rows; ++row) {
        gp_partial offset = first_offset(job, row);
        for (int64_t piece = 0; piece < job->pieces; ++piece) {
            gp_partial *slot = &job->offsets[row * job->pieces + piece];
            const gp_partial total = *slot;
            *slot = offset;
            add_total(job, &offset, &total);
        }
    }
}

/* ---- rows: inner == 1 ----------------------------------------------------------------------------- */

static int64_t piece_count(const scan_job *job, int64_t piece)
{
    const int64_t left = job->desc->n - piece * GP_CPU_PIECE;
    return left < GP_CPU_PIECE ? left : GP_CPU_PIECE;
}

/* A piece's elements: where they lie, or for a strided view gathered into `buffer` (room for
 * GP_CPU_PIECE elements; NULL when the input is contiguous). */
static const char *piece_in(const scan_job *job, int64_t row, int64_t piece, char *buffer)
{
    const int64_t first = row * job->desc->n + piece * GP_CPU_PIECE;
    if (job->view == NULL) return job->in + first * job->in_size;
    gp_cpu_gather(job->view, job->in, first, piece_count(job, piece), buffer);
    return buffer;
}

static char *piece_out(const scan_job *job, int64_t row, int64_t piece)
{
    return job->out + (row * job->desc->n + piece * GP_CPU_PIECE) * job->out_size;
}

/* One thread's row: each piece's total (none after the last) carried into the next one's offset. */
static void scan_row(const scan_job *job, int64_t row, char *buffer, int *non_finite)
{
    gp_partial offset = first_offset(job, row), total;
    for (int64_t piece = 0; piece < job->pieces; ++piece) {
        const int last = piece == job->pieces - 1;
        job->run(piece_in(job, row, piece, buffer), piece_count(job, piece), piece_out(job, row, piece),
                 job->desc->exclusive, (int)job->out_size, &offset, last ? NULL : &total, non_finite);
        if (!last) add_total(job, &offset, &total);
    }
}

/* A thread's finding of non-finite outputs, made the job's. */
static void note_non_finite(scan_job *job, int non_finite)
{
    if (non_finite) atomic_store(&job->non_finite, 1);
}

static void rows_range(void *ctx, int64_t first, int64_t last)
{
    scan_job *job = ctx;
    char *buffer = gp_cpu_piece_buffer(job->view, &job->out_of_memory);
    if (job->view != NULL && buffer == NULL) return;
    int non_finite = 0;
    for (int64_t row = first; row < last; ++row) scan_row(job, row, buffer, &non_finite);
    note_non_finite(job, non_finite);
    free(buffer);
}

/* The two passes over a shared row's pieces: each piece's total into offsets[], then (the totals
 * combined into offsets) each piece scanned from its offset. */
static void pieces_range(void *ctx, int64_t first, int64_t last)
{
    scan_job *job = ctx;
    char *buffer = gp_cpu_piece_buffer(job->view, &job->out_of_memory);
    if (job->view != NULL && buffer == NULL) return;
    int non_finite = 0;
    for (int64_t task = first; task < last; ++task) {
        const int64_t row = task / job->pieces, piece = task % job->pieces;
        const char *in = piece_in(job, row, piece, buffer);
        if (job->totals_pass) {
            job->total(in, piece_count(job, piece), &job->offsets[task]);
        } else {
            job->run(in, piece_count(job, piece), piece_out(job, row, piece), job->desc->exclusive,
                     (int)job->out_size, &job->offsets[task], NULL, &non_finite);
        }
    }
    note_non_finite(job, non_finite);
    free(buffer);
}

/* The parts of a scan whose lines are cut into `pieces` blocks: with more than one, the threads make
 * two passes (totals, then outputs), each a hand-out and a wait, so a part takes twice the bytes
 * of a one-pass job.  16-core H200 host, cumsum along axis 0 of 16384 x 4 int32 (768 KiB moved),
 * µs by threads (best / median of 9): 1 16.8/17.6, 4 15.1/16.5, 8 13.7/14.7, 12 parts (one per
 * 64 KiB) 16.4/16.7; 16384 x 4 float64 (1 MiB): 4 20.5/21.8, 8 17.6/18.4, 16 20.7/21.8. */
static int scan_parts(double bytes, int64_t tasks, int64_t pieces)
{
    return gp_cpu_parts(pieces > 1 ? bytes / 2.0 : bytes, tasks);
}

/* 0, or -1 when there was no memory to gather a strided view's pieces into. */
static int scan_rows(scan_job *job)
{
    const gp_scan_args *d = job->desc;
    job->pieces = (d->n + GP_CPU_PIECE - 1) / GP_CPU_PIECE;
    const double bytes = (double)d->outer * (double)d->n * (double)(job->in_size + job->out_size);
    job->parts = scan_parts(bytes, d->outer * job->pieces, job->pieces);
    job->offsets = NULL;
    if (job->parts > 1 && job->pieces > 1) {
        job->offsets = malloc((size_t)(d->outer * job->pieces) * sizeof *job->offsets);
        if (job->offsets == NULL) job->parts = 1; /* one thread needs no memory */
    }
    if (job->offsets == NULL) {
        job->tasks = d->outer;
        const double row_bytes = (double)d->n * (double)(job->in_size + job->out_size);
        if (job->parts > 1) gp_pool_for(job->parts, job->tasks, gp_cpu_grain(row_bytes, job->tasks, job->parts), rows_range, job);
        else rows_range(job, 0, job->tasks);
        return atomic_load(&job->out_of_memory) ? -1 : 0;
    }
    job->tasks = d->outer * job->pieces;
    const int64_t grain = gp_cpu_grain((double)GP_CPU_PIECE * (double)(job->in_size + job->out_size), job->tasks, job->parts);
    job->totals_pass = 1;
    gp_pool_for(job->parts, job->tasks, grain, pieces_range, job);
    offsets_from_totals(job, d->outer);
    job->totals_pass = 0;
    if (!atomic_load(&job->out_of_memory)) gp_pool_for(job->parts, job->tasks, grain, pieces_range, job);
    free(job->offsets);
    return atomic_load(&job->out_of_memory) ? -1 : 0;
}

/* ---- columns: inner > 1 --------------------------------------------------------------------------- */

/* A column tile's running values set to the call's initial values of its `width` rows from `row`,
 * in the kind's type (GP_ACC_F32 runs its columns in float). */
static void start_columns(const scan_job *job, int64_t row, int64_t width, void *acc)
{
    const char *initial = (const char *)job->desc->initial + row * 8;
    if (job->acc != GP_ACC_F32) {
        memcpy(acc, initial, (size_t)width * 8); /* uint64_t or double, as given */
        return;
    }
    for (int64_t j = 0; j < width; ++j) {
        double value;
        memcpy(&value, initial + j * 8, sizeof value);
        const float narrow = (float)value;
        memcpy((char *)acc + j * (int64_t)sizeof narrow, &narrow, sizeof narrow);
    }
}

static void scan_tile(const scan_job *job, int64_t task, int *non_finite)
{
    const gp_scan_args *d = job->desc;
    const int64_t outer = task / job->tiles, first = task % job->tiles * job->tile;
    const int64_t width = d->inner - first < job->tile ? d->inner - first : job->tile;
    const int64_t at = outer * d->n * d->inner + first;
    _Alignas(64) uint64_t acc[MAX_TILE]; /* running values: uint64_t, double or float; a vector per cache line */
    if (d->initial != NULL) start_columns(job, outer * d->inner + first, width, acc);
    job->columns(job->in + at * job->in_size, d->n, d->inner, job->out + at * job->out_size, width, acc,
                 d->initial == NULL, d->exclusive, (int)job->out_size, non_finite);
}

static void tiles_range(void *ctx, int64_t first, int64_t last)
{
    int non_finite = 0;
    for (int64_t task = first; task < last; ++task) scan_tile(ctx, task, &non_finite);
    note_non_finite(ctx, non_finite);
}

static void scan_columns(scan_job *job)
{
    const gp_scan_args *d = job->desc;
    const double bytes = (double)d->outer * (double)d->n * (double)d->inner * (double)(job->in_size + job->out_size);
    const int threads = gp_cpu_parts(bytes, INT64_MAX);
    /* Narrower tiles for more threads (a column's sums do not change), but one per thread at the
     * least, not two: every tile walks all n rows, so narrow tiles cost locality.  2 threads, cumsum
     * of 256 x 256 float32 along axis 0: tiles of 64 (two a thread) 44 us, of 128 17 us, one
     * thread 26 us (2-core Zen 4 host). */
    job->tile = MAX_TILE;
    while (job->tile > MIN_TILE && d->outer * ((d->inner + job->tile - 1) / job->tile) < threads) job->tile /= 2;
    job->tiles = (d->inner + job->tile - 1) / job->tile;
    job->tasks = d->outer * job->tiles;
    job->parts = gp_cpu_parts(bytes, job->tasks);
    const double tile_bytes = (double)d->n * (double)job->tile * (double)(job->in_size + job->out_size);
    if (job->parts > 1) gp_pool_for(job->parts, job->tasks, gp_cpu_grain(tile_bytes, job->tasks, job->parts), tiles_range, job);
    else tiles_range(job, 0, job->tasks);
}

/* ---- narrow columns: 1 < inner < GP_CPU_NARROW_COLUMNS ----------------------------------------- */

/* The narrow loop on block `block` (GP_CPU_NARROW_ROWS rows, fewer at the end) of outer index
 * `outer`: into the output from offsets[] (to_out), and the columns' totals into totals[] where it is
 * not NULL. */
static void narrow_block(const scan_job *job, int64_t outer, int64_t block, int to_out, const gp_partial *offsets,
                         gp_partial *totals, int *non_finite)
{
    const gp_scan_args *d = job->desc;
    const int64_t first = block * GP_CPU_NARROW_ROWS;
    const int64_t rows = d->n - first < GP_CPU_NARROW_ROWS ? d->n - first : GP_CPU_NARROW_ROWS;
    const int64_t at = (outer * d->n + first) * d->inner;
    char *out = to_out ? job->out + at * job->out_size : NULL;
    job->narrow(job->in + at * job->in_size, rows, d->inner, out, d->exclusive, (int)job->out_size, offsets, totals,
                non_finite);
}

/* Scans the blocks of outer index `outer` in turn, each column's total (none after the last block)
 * carried into its offset. */
static void scan_narrow_outer(const scan_job *job, int64_t outer, int *non_finite)
{
    const int64_t inner = job->desc->inner;
    gp_partial offset[GP_CPU_NARROW_COLUMNS], total[GP_CPU_NARROW_COLUMNS];
    for (int64_t column = 0; column < inner; ++column) offset[column] = first_offset(job, outer * inner + column);
    for (int64_t block = 0; block < job->pieces; ++block) {
        const int last = block == job->pieces - 1;
        narrow_block(job, outer, block, 1, offset, last ? NULL : total, non_finite);
        if (!last)
            for (int64_t column = 0; column < inner; ++column) add_total(job, &offset[column], &total[column]);
    }
}

static void narrow_outer_range(void *ctx, int64_t first, int64_t last)
{
    int non_finite = 0;
    for (int64_t outer = first; outer < last; ++outer) scan_narrow_outer(ctx, outer, &non_finite);
    note_non_finite(ctx, non_finite);
}

/* The two passes over blocks (task: block task % pieces of outer index task / pieces): the columns'
 * totals into offsets[], then (the totals combined into offsets) the columns scanned from them.  The
 * totals pass writes nothing, so its flags are not looked at: a total that overflows makes the next
 * block's outputs inf, which its pass finds. */
static void narrow_blocks_range(void *ctx, int64_t first, int64_t last)
{
    scan_job *job = ctx;
    const int64_t inner = job->desc->inner;
    gp_partial columns[GP_CPU_NARROW_COLUMNS];
    int non_finite = 0, totals_flagged = 0;
    for (int64_t task = first; task < last; ++task) {
        const int64_t outer = task / job->pieces, block = task % job->pieces;
        gp_partial *slots = &job->offsets[outer * inner * job->pieces + block]; /* column c's at c * pieces */
        if (job->totals_pass) {
            narrow_block(job, outer, block, 0, NULL, columns, &totals_flagged);
            for (int64_t column = 0; column < inner; ++column) slots[column * job->pieces] = columns[column];
        } else {
            for (int64_t column = 0; column < inner; ++column) columns[column] = slots[column * job->pieces];
            narrow_block(job, outer, block, 1, columns, NULL, &non_finite);
        }
    }
    note_non_finite(job, non_finite);
}

static void scan_narrow_columns(scan_job *job)
{
    const gp_scan_args *d = job->desc;
    job->pieces = (d->n + GP_CPU_NARROW_ROWS - 1) / GP_CPU_NARROW_ROWS;
    const double bytes = (double)d->outer * (double)d->n * (double)d->inner * (double)(job->in_size + job->out_size);
    job->parts = scan_parts(bytes, d->outer * job->pieces, job->pieces);
    job->offsets = NULL;
    if (job->parts > 1 && job->pieces > 1) {
        job->offsets = malloc((size_t)(d->outer * d->inner * job->pieces) * sizeof *job->offsets);
        if (job->offsets == NULL) job->parts = 1; /* one thread needs no memory */
    }
    const double block_bytes = (double)GP_CPU_NARROW_ROWS * (double)d->inner * (double)(job->in_size + job->out_size);
    if (job->offsets == NULL) {
        job->tasks = d->outer;
        if (job->parts > 1)
            gp_pool_for(job->parts, job->tasks, gp_cpu_grain(block_bytes * (double)job->pieces, job->tasks, job->parts),
                        narrow_outer_range, job);
        else narrow_outer_range(job, 0, job->tasks);
        return;
    }
    job->tasks = d->outer * job->pieces;
    const int64_t grain = gp_cpu_grain(block_bytes, job->tasks, job->parts);
    job->totals_pass = 1;
    gp_pool_for(job->parts, job->tasks, grain, narrow_blocks_range, job);
    offsets_from_totals(job, d->outer * d->inner);
    job->totals_pass = 0;
    gp_pool_for(job->parts, job->tasks, grain, narrow_blocks_range, job);
    free(job->offsets);
}

int gp_cpu_scan(const gp_call *call, gp_error *err)
{
    const gp_scan_args *d = &call->scan;
    const gp_cpu_kernels *kernels = gp_cpu_kernels_get();
    scan_job job = {.desc = d, .in = call->in, .view = call->in_view, .out = call->out};
    job.acc = gp_scan_acc(d->op, d->in_dtype, d->out_dtype);
    job.rule = gp_minmax_rule(d->in_dtype);
    const int skip_nan = d->skip_nan && gp_dtype_is_float(d->in_dtype); /* as the CUDA backend: no NaN in integers */
    job.run = kernels->scan_run[d->op][skip_nan][job.acc][d->in_dtype];
    job.total = kernels->scan_total[d->op][skip_nan][job.acc][d->in_dtype];
    job.columns = kernels->scan_columns[d->op][skip_nan][job.acc][d->in_dtype];
    job.narrow = kernels->scan_narrow[d->op][skip_nan][job.acc][d->in_dtype];
    job.in_size = gp_dtype_size(d->in_dtype);
    job.out_size = gp_dtype_size(d->out_dtype);
    if (job.run == NULL || job.total == NULL || job.columns == NULL || job.narrow == NULL)
        return gp_fail(err, GP_ERR_INVALID, "scan: no CPU loop for this operator and dtype pair");
    if (d->inner > 1 && job.view != NULL) return gp_fail(err, GP_ERR_INVALID, "scan: a strided input along columns");
    int failed = 0;
    if (d->inner >= GP_CPU_NARROW_COLUMNS) scan_columns(&job);
    else if (d->inner > 1) scan_narrow_columns(&job);
    else failed = scan_rows(&job);
    if (failed) return gp_fail(err, GP_ERR_NOMEM, "scan: out of host memory");
    if (d->non_finite != NULL) *d->non_finite = atomic_load(&job.non_finite);
    return 0;
}
