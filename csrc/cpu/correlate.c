/* Correlation on the CPU (see gp_correlate_args): the driver around the register-blocked loops of
 * kernels.h, with the CUDA backend's results.  Integers wrap around in their width (the low bits of
 * NumPy's and SciPy's sums), bool is the OR of ANDs, floats accumulate in their own type (float16
 * in float32, rounded once), every output's terms added in mask order from 0.
 *
 * Each output row is cut into blocks of BLOCK outputs, the threads' tasks.  A block's outputs whose
 * window lies inside the image read the image rows in place; the others (the edges, and every
 * float16 block, converted to float32) read segments built with the boundary rule: the run inside
 * the image copied, the rest mapped (wrap, symm) or filled.  Rows outside the image under the fill
 * rule read a segment of fill values.  A small image run by one thread is instead padded whole
 * first, with the same segments (SMALL_PADDED_BYTES): then every output reads in place, one kernel
 * call per output row, where the edges of a short row would cost three calls and a segment per
 * mask row each.  Since every output is computed alone and the same way, neither the cut nor the
 * padding changes a result. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_backend.h"
#include "cpu/kernels.h"
#include "cpu/parallel.h"

enum { BLOCK = 512 };                 /* outputs per task */
enum { STACK_SCRATCH = 32 * 1024 };   /* a part's scratch up to this size lives on the stack */
/* One-thread images whose padded copy fits this are padded first (the public convolve2d call,
 * 'same', 5 x 5 mask, float32, on the 2-core host: 8 x 8 16.9 -> 11.1 us, 64 x 64 70 -> 16.8 us). */
enum { SMALL_PADDED_BYTES = 256 * 1024 };

typedef struct {
    const gp_correlate_args *d;
    const char *image;
    char *out;
    gp_correlate_rows_fn kernel;
    int is_half;            /* float16: computed in float32 */
    int64_t size, csize;    /* the dtype's and the computation's element sizes */
    const void *mask;       /* in the computation's type */
    uint64_t fill;          /* the fill value in the computation's type (its first csize bytes) */
    int64_t first_inside, last_inside; /* outputs [first, last) whose window's columns are in the image */
    int64_t blocks, tasks;
    int parts;
    size_t scratch_bytes;
} correlate_job;

/* A part's scratch: the kernel's row pointers, a segment of fill values, one segment per mask row,
 * and float16's float32 outputs. */
typedef struct {
    const void **rows;
    char *fill_segment; /* written when first needed */
    int fill_ready;
    char *segments;
    float *half_out;
} scratch;

static int64_t segment_length(const correlate_job *job) { return BLOCK + job->d->mask_cols - 1; }

static size_t scratch_size(const correlate_job *job)
{
    const size_t rows = (size_t)job->d->mask_rows, segment = (size_t)(segment_length(job) * job->csize);
    return rows * sizeof(void *) + (rows + 1) * segment + BLOCK * sizeof(float) + 64;
}

static scratch carve(const correlate_job *job, void *memory)
{
    const size_t rows = (size_t)job->d->mask_rows, segment = (size_t)(segment_length(job) * job->csize);
    char *at = memory;
    scratch s;
    s.rows = (const void **)at;
    at += rows * sizeof(void *);
    s.half_out = (float *)at;
    at += BLOCK * sizeof(float);
    s.fill_segment = at;
    at += segment;
    s.segments = at;
    s.fill_ready = 0;
    return s;
}

/* count elements of the image's row `row` (< 0: the fill rule's outside) from column `first` on, in
 * the computation's type, into dst. */
static void build_segment(const correlate_job *job, int64_t row, int64_t first, int64_t count, char *dst)
{
    const gp_correlate_args *d = job->d;
    const char *line = job->image + (row < 0 ? 0 : row) * d->cols * job->size;
    for (int64_t k = 0; k < count;) {
        const int64_t col = first + k;
        char *at = dst + k * job->csize;
        if (row >= 0 && col >= 0 && col < d->cols) { /* the run inside the image */
            const int64_t run = count - k < d->cols - col ? count - k : d->cols - col;
            if (job->is_half) gp_cpu_half_to_float((const gp_half *)line + col, run, (float *)at);
            else memcpy(at, line + col * job->size, (size_t)(run * job->size));
            k += run;
            continue;
        }
        const int64_t source = row < 0 ? -1 : gp_boundary_index(col, d->cols, d->boundary);
        if (source < 0) memcpy(at, &job->fill, (size_t)job->csize);
        else if (job->is_half) gp_cpu_half_to_float((const gp_half *)line + source, 1, (float *)at);
        else memcpy(at, line + source * job->size, (size_t)job->size);
        ++k;
    }
}

/* Outputs [j0, j1) of output row i, all inside or all outside the columns' interior. */
static void run_range(const correlate_job *job, scratch *s, int64_t i, int64_t j0, int64_t j1)
{
    const gp_correlate_args *d = job->d;
    const int64_t width = j1 - j0, first = j0 + d->col_offset, length = width + d->mask_cols - 1;
    const int inside = !job->is_half && j0 >= job->first_inside && j1 <= job->last_inside;
    for (int64_t p = 0; p < d->mask_rows; ++p) {
        const int64_t row = gp_boundary_index(i + d->row_offset + p, d->rows, d->boundary);
        if (row < 0 && !job->is_half) {
            if (!s->fill_ready) build_segment(job, -1, 0, segment_length(job), s->fill_segment);
            s->fill_ready = 1;
            s->rows[p] = s->fill_segment;
        } else if (inside) {
            s->rows[p] = job->image + (row * d->cols + first) * job->size;
        } else {
            char *segment = s->segments + p * segment_length(job) * job->csize;
            build_segment(job, row, first, length, segment);
            s->rows[p] = segment;
        }
    }
    char *out = job->out + (i * d->out_cols + j0) * job->size;
    if (!job->is_half) {
        job->kernel(out, width, s->rows, job->mask, d->mask_rows, d->mask_cols);
        return;
    }
    job->kernel(s->half_out, width, s->rows, job->mask, d->mask_rows, d->mask_cols);
    gp_cpu_half_from_float(s->half_out, width, (gp_half *)out);
}

/* Task t: block t % blocks of output row t / blocks, cut where the interior starts and ends. */
static void run_task(const correlate_job *job, scratch *s, int64_t task)
{
    const int64_t i = task / job->blocks, j0 = task % job->blocks * BLOCK;
    const int64_t j1 = job->d->out_cols - j0 < BLOCK ? job->d->out_cols : j0 + BLOCK;
    int64_t cuts[4] = {j0, job->first_inside, job->last_inside, j1};
    for (int c = 1; c < 3; ++c) cuts[c] = cuts[c] < j0 ? j0 : cuts[c] > j1 ? j1 : cuts[c];
    if (cuts[2] < cuts[1]) cuts[2] = cuts[1]; /* an empty interior */
    for (int c = 0; c < 3; ++c)
        if (cuts[c + 1] > cuts[c]) run_range(job, s, i, cuts[c], cuts[c + 1]);
}

/* Runs tasks [first, last) with a scratch: on the stack when small, else allocated. */
static int run_part_tasks(const correlate_job *job, int64_t first, int64_t last)
{
    _Alignas(64) char stack[STACK_SCRATCH];
    void *memory = job->scratch_bytes <= sizeof stack ? stack : malloc(job->scratch_bytes);
    if (memory == NULL) return -1;
    scratch s = carve(job, (void *)(((uintptr_t)memory + 63) & ~(uintptr_t)63));
    for (int64_t task = first; task < last; ++task) run_task(job, &s, task);
    if (memory != stack) free(memory);
    return 0;
}

typedef struct {
    const correlate_job *job;
    atomic_int failed;
} parallel_run;

static void run_range_of_tasks(void *ctx, int64_t first, int64_t last)
{
    parallel_run *run = ctx;
    if (run_part_tasks(run->job, first, last)) atomic_store(&run->failed, 1);
}

/* The job's outputs all read in place from `padded`: the image with the boundary rule applied
 * around it, one row of out_cols + mask_cols - 1 elements per row that the outputs read (the fill
 * rule's outside rows as fill values), built as run_range's segments are.  `args` receives the
 * padded image's description (no offsets), which the job then points at. */
static void pad_image(correlate_job *job, gp_correlate_args *args, char *padded)
{
    const gp_correlate_args *d = job->d;
    *args = *d;
    args->rows = d->out_rows + d->mask_rows - 1;
    args->cols = d->out_cols + d->mask_cols - 1;
    args->row_offset = args->col_offset = 0;
    for (int64_t r = 0; r < args->rows; ++r)
        build_segment(job, gp_boundary_index(r + d->row_offset, d->rows, d->boundary), d->col_offset, args->cols,
                      padded + r * args->cols * job->size);
    job->d = args;
    job->image = padded;
    job->first_inside = 0;
    job->last_inside = d->out_cols;
}

int gp_cpu_correlate(const gp_call *call, gp_error *err)
{
    const gp_correlate_args *d = &call->correlate;
    correlate_job job = {.d = d, .image = call->in, .out = call->out, .fill = 0};
    job.kernel = gp_cpu_kernels_get()->correlate[d->dtype];
    job.is_half = d->dtype == GP_FLOAT16;
    job.size = gp_dtype_size(d->dtype);
    job.csize = job.is_half ? 4 : job.size;
    const int64_t taps = d->mask_rows * d->mask_cols;
    float *half_mask = NULL;
    if (job.is_half) {
        half_mask = malloc((size_t)taps * sizeof(float));
        if (half_mask == NULL) return gp_fail(err, GP_ERR_NOMEM, "out of host memory in the CPU backend");
        gp_cpu_half_to_float(d->mask, taps, half_mask);
        float fill;
        gp_cpu_half_to_float(d->fill, 1, &fill);
        memcpy(&job.fill, &fill, sizeof fill);
        job.mask = half_mask;
    } else {
        memcpy(&job.fill, d->fill, (size_t)job.size);
        job.mask = d->mask;
    }
    /* Output j reads columns j + col_offset .. j + col_offset + mask_cols - 1. */
    job.first_inside = -d->col_offset > 0 ? -d->col_offset : 0;
    job.last_inside = d->cols - d->col_offset - d->mask_cols + 1;
    if (job.last_inside > d->out_cols) job.last_inside = d->out_cols;
    if (job.last_inside < job.first_inside) job.last_inside = job.first_inside;
    job.blocks = (d->out_cols + BLOCK - 1) / BLOCK;
    job.tasks = d->out_rows * job.blocks;
    job.scratch_bytes = scratch_size(&job);
    /* Parts by multiply-adds: a part has at least GP_CPU_PART_BYTES * 2 of them. */
    job.parts = gp_cpu_parts((double)d->out_rows * (double)d->out_cols * (double)taps / 2.0, job.tasks);
    int failed = 0;
    const double padded_bytes = (double)(d->out_rows + d->mask_rows - 1) * (double)(d->out_cols + d->mask_cols - 1) *
                                (double)job.size;
    if (job.parts == 1 && job.tasks > 0 && !job.is_half && padded_bytes <= SMALL_PADDED_BYTES) {
        char *padded = malloc((size_t)padded_bytes);
        gp_correlate_args padded_args;
        failed = padded == NULL;
        if (!failed) {
            pad_image(&job, &padded_args, padded);
            failed = run_part_tasks(&job, 0, job.tasks);
        }
        free(padded);
    } else if (job.parts == 1) {
        failed = run_part_tasks(&job, 0, job.tasks);
    } else {
        parallel_run run = {.job = &job};
        atomic_init(&run.failed, 0);
        const double task_macs = (double)BLOCK * (double)taps;
        gp_pool_for(job.parts, job.tasks, gp_cpu_grain(task_macs / 2.0, job.tasks, job.parts), run_range_of_tasks, &run);
        failed = atomic_load(&run.failed);
    }
    free(half_mask);
    return failed ? gp_fail(err, GP_ERR_NOMEM, "out of host memory in the CPU backend") : 0;
}
