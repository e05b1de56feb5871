/* The CPU backend's accumulating primitives: reduce and scan.
 *
 * Elements are converted block by block into one of three accumulator kinds, and every operation is
 * written once per kind:
 *   ACC_U64  integer sum/prod (two's complement wrap-around, as NumPy) and unsigned/bool min/max;
 *   ACC_I64  signed integer min/max;
 *   ACC_F64  every float result: float16/float32/float64 inputs and float outputs accumulate in
 *            double, which is at least as accurate as NumPy's float32 pairwise sums and is rounded
 *            once on output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_backend.h"

enum { BLOCK = 1024 };
typedef enum { ACC_U64, ACC_I64, ACC_F64 } acc_kind;

/* A block of accumulator values of one kind. */
typedef union {
    uint64_t u[BLOCK];
    int64_t i[BLOCK];
    double f[BLOCK];
} acc_block;

static acc_kind accumulator_for(gp_op op, gp_dtype in, gp_dtype out)
{
    if (gp_dtype_is_float(out)) return ACC_F64;
    if ((op == GP_MIN || op == GP_MAX) && gp_dtype_is_signed(in)) return ACC_I64;
    return ACC_U64;
}

/* A block of elements of dtype t into the accumulator kind (the integer kinds share their bits). */
static void load_block(gp_dtype t, const void *src, int64_t count, acc_kind kind, acc_block *dst)
{
    gp_cpu_load(t, src, count, kind == ACC_F64 ? dst->f : NULL, dst->u);
}

static void store_block(gp_dtype t, const acc_block *src, acc_kind kind, int64_t count, void *dst)
{
    gp_cpu_store(t, kind == ACC_F64 ? src->f : NULL, src->u, count, dst);
}

/* Integer sum and product go through uint64_t, whose wrap-around is defined behaviour. */
#define ADD(a, b) ((a) + (b))
#define MULTIPLY(a, b) ((a) * (b))
/* NaN wins in min/max, as in numpy.minimum/maximum. */
#define FLOAT_MIN(a, b) ((isnan(a) || (a) < (b)) ? (a) : (b))
#define FLOAT_MAX(a, b) ((isnan(a) || (a) > (b)) ? (a) : (b))
#define SMALLER(a, b) ((a) < (b) ? (a) : (b))
#define LARGER(a, b) ((a) > (b) ? (a) : (b))

/* acc[k] = op(acc[k], x[k]) for k < count. */
static void combine(gp_op op, acc_kind kind, acc_block *acc, const acc_block *x, int64_t count)
{
#define COMBINE(FIELD, OP) for (int64_t k = 0; k < count; ++k) acc->FIELD[k] = OP(acc->FIELD[k], x->FIELD[k])
    if (kind == ACC_F64) {
        if (op == GP_SUM) COMBINE(f, ADD);
        else if (op == GP_PROD) COMBINE(f, MULTIPLY);
        else if (op == GP_MIN) COMBINE(f, FLOAT_MIN);
        else COMBINE(f, FLOAT_MAX);
    } else if (kind == ACC_I64) {
        if (op == GP_MIN) COMBINE(i, SMALLER);
        else COMBINE(i, LARGER);
    } else {
        if (op == GP_SUM) COMBINE(u, ADD);
        else if (op == GP_PROD) COMBINE(u, MULTIPLY);
        else if (op == GP_MIN) COMBINE(u, SMALLER);
        else COMBINE(u, LARGER);
    }
#undef COMBINE
}

/* Folds x[0..count) into acc->?[0].  Eight independent partial results shorten the float rounding
 * chains and the dependency chains alike. */
static void fold(gp_op op, acc_kind kind, acc_block *acc, const acc_block *x, int64_t count)
{
#define FOLD(FIELD, OP)                                                                         \
    do {                                                                                           \
        __typeof__(acc->FIELD[0]) lanes[8];                                                        \
        int64_t k = 0, used = count < 8 ? count : 8;                                               \
        for (; k < used; ++k) lanes[k] = x->FIELD[k];                                              \
        for (; k + 8 <= count; k += 8)                                                             \
            for (int j = 0; j < 8; ++j) lanes[j] = OP(lanes[j], x->FIELD[k + j]);                  \
        for (int j = 0; k < count; ++k, ++j) lanes[j] = OP(lanes[j], x->FIELD[k]);                 \
        for (int j = 0; j < used; ++j) acc->FIELD[0] = OP(acc->FIELD[0], lanes[j]);                \
    } while (0)
    if (kind == ACC_F64) {
        if (op == GP_SUM) FOLD(f, ADD);
        else if (op == GP_PROD) FOLD(f, MULTIPLY);
        else if (op == GP_MIN) FOLD(f, FLOAT_MIN);
        else FOLD(f, FLOAT_MAX);
    } else if (kind == ACC_I64) {
        if (op == GP_MIN) FOLD(i, SMALLER);
        else FOLD(i, LARGER);
    } else {
        if (op == GP_SUM) FOLD(u, ADD);
        else if (op == GP_PROD) FOLD(u, MULTIPLY);
        else if (op == GP_MIN) FOLD(u, SMALLER);
        else FOLD(u, LARGER);
    }
#undef FOLD
}

/* The identity of op in the accumulator kind, or the first element for min/max. */
static void set_identity(gp_op op, acc_kind kind, acc_block *acc, int64_t count)
{
    for (int64_t k = 0; k < count; ++k) {
        if (kind == ACC_F64)
            acc->f[k] = op == GP_SUM ? 0.0 : op == GP_PROD ? 1.0 : op == GP_MIN ? INFINITY : -INFINITY;
        else if (kind == ACC_I64)
            acc->i[k] = op == GP_MIN ? INT64_MAX : INT64_MIN;
        else
            acc->u[k] = op == GP_SUM ? 0 : op == GP_PROD ? 1 : op == GP_MIN ? UINT64_MAX : 0;
    }
}

static int out_of_memory(gp_error *err) { return gp_fail(err, GP_ERR_NOMEM, "out of host memory in the CPU backend"); }

int gp_cpu_reduce(const gp_call *call, gp_error *err)
{
    const gp_reduce_args *desc = &call->reduce;
    const acc_kind kind = accumulator_for(desc->op, desc->in_dtype, desc->out_dtype);
    const int64_t in_size = gp_dtype_size(desc->in_dtype), out_size = gp_dtype_size(desc->out_dtype);
    const int64_t n = desc->n, inner = desc->inner;
    acc_block *acc = malloc(sizeof *acc), *x = malloc(sizeof *x);
    if (!acc || !x) {
        free(acc);
        free(x);
        return out_of_memory(err);
    }
    for (int64_t o = 0; o < desc->outer; ++o) {
        const char *slab = (const char *)call->in + o * n * inner * in_size;
        char *out = (char *)call->out + o * inner * out_size;
        /* inner == 1: fold the row BLOCK elements at a time; else columns in pieces of BLOCK,
         * combining the n rows of each piece. */
        for (int64_t i0 = 0; i0 < inner; i0 += BLOCK) {
            const int64_t width = inner - i0 < BLOCK ? inner - i0 : BLOCK;
            set_identity(desc->op, kind, acc, width);
            if (inner == 1) {
                for (int64_t k0 = 0; k0 < n; k0 += BLOCK) {
                    const int64_t count = n - k0 < BLOCK ? n - k0 : BLOCK;
                    load_block(desc->in_dtype, slab + k0 * in_size, count, kind, x);
                    fold(desc->op, kind, acc, x, count);
                }
            } else {
                for (int64_t k = 0; k < n; ++k) {
                    load_block(desc->in_dtype, slab + (k * inner + i0) * in_size, width, kind, x);
                    combine(desc->op, kind, acc, x, width);
                }
            }
            store_block(desc->out_dtype, acc, kind, width, out + i0 * out_size);
        }
    }
    free(acc);
    free(x);
    return 0;
}

/* running[slot] accumulates x[k] in turn; x[k] becomes the inclusive or exclusive prefix. */
static void scan_values(acc_kind kind, acc_block *running, acc_block *x, int64_t count, int per_slot,
                        int exclusive)
{
#define SCAN(FIELD)                                                                             \
    for (int64_t k = 0; k < count; ++k) {                                                          \
        const int64_t slot = per_slot ? k : 0;                                                     \
        const __typeof__(x->FIELD[0]) before = running->FIELD[slot];                               \
        running->FIELD[slot] = before + x->FIELD[k];                                               \
        x->FIELD[k] = exclusive ? before : running->FIELD[slot];                                   \
    }
    if (kind == ACC_F64) {
        SCAN(f)
    } else {
        SCAN(u)
    }
#undef SCAN
}

int gp_cpu_scan(const gp_call *call, gp_error *err)
{
    const gp_scan_args *desc = &call->scan;
    const acc_kind kind = accumulator_for(GP_SUM, desc->in_dtype, desc->out_dtype);
    const int64_t in_size = gp_dtype_size(desc->in_dtype), out_size = gp_dtype_size(desc->out_dtype);
    const int64_t n = desc->n, inner = desc->inner;
    acc_block *running = malloc(sizeof *running), *x = malloc(sizeof *x);
    if (!running || !x) {
        free(running);
        free(x);
        return out_of_memory(err);
    }
    for (int64_t o = 0; o < desc->outer; ++o) {
        const char *in = (const char *)call->in + o * n * inner * in_size;
        char *out = (char *)call->out + o * n * inner * out_size;
        if (inner == 1) { /* one contiguous row, BLOCK elements at a time */
            set_identity(GP_SUM, kind, running, 1);
            for (int64_t k0 = 0; k0 < n; k0 += BLOCK) {
                const int64_t count = n - k0 < BLOCK ? n - k0 : BLOCK;
                load_block(desc->in_dtype, in + k0 * in_size, count, kind, x);
                scan_values(kind, running, x, count, 0, desc->exclusive);
                store_block(desc->out_dtype, x, kind, count, out + k0 * out_size);
            }
            continue;
        }
        for (int64_t i0 = 0; i0 < inner; i0 += BLOCK) { /* columns in pieces, row by row */
            const int64_t width = inner - i0 < BLOCK ? inner - i0 : BLOCK;
            set_identity(GP_SUM, kind, running, width);
            for (int64_t k = 0; k < n; ++k) {
                const int64_t offset = k * inner + i0;
                load_block(desc->in_dtype, in + offset * in_size, width, kind, x);
                scan_values(kind, running, x, width, 1, desc->exclusive);
                store_block(desc->out_dtype, x, kind, width, out + offset * out_size);
            }
        }
    }
    free(running);
    free(x);
    return 0;
}
