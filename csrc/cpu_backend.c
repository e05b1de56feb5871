/* The CPU backend.
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

#include "cpu_backend.h"

enum { BLOCK = 1024 };
typedef enum { ACC_U64, ACC_I64, ACC_F64 } acc_kind;

/* A block of accumulator values of one kind. */
typedef union {
    uint64_t u[BLOCK];
    int64_t i[BLOCK];
    double f[BLOCK];
} acc_block;

static float half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h >> 15) << 31, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    if (exponent == 0x1f) return sign ? -(mantissa ? NAN : INFINITY) : (mantissa ? NAN : INFINITY);
    float magnitude = exponent ? ldexpf((float)(mantissa | 0x400), (int)exponent - 25)
                               : ldexpf((float)mantissa, -24);
    return sign ? -magnitude : magnitude;
}

/* Correctly rounded (to nearest even) double -> float16, without double rounding through float. */
static uint16_t half_from_double(double x)
{
    const uint16_t sign = signbit(x) ? 0x8000 : 0;
    const double magnitude = fabs(x);
    if (isnan(x)) return 0x7e00;
    if (magnitude >= 65520.0) return sign | 0x7c00; /* rounds to infinity */
    int e;
    frexp(magnitude, &e); /* magnitude = m * 2^e, m in [0.5, 1) */
    int exponent = e - 1; /* magnitude = 1.f * 2^exponent */
    if (magnitude == 0.0 || exponent < -14) exponent = -14;
    const double units = nearbyint(ldexp(magnitude, 10 - exponent)); /* exact scaling */
    if (units < 1024.0) return sign | (uint16_t)units;                 /* subnormal (or zero) */
    uint32_t bits = ((uint32_t)(exponent + 15) << 10) + ((uint32_t)units - 1024);
    return sign | (uint16_t)bits; /* units == 2048 carries into the exponent, up to infinity */
}

static int is_signed_integer(gp_dtype t) { return t >= GP_INT8 && t <= GP_INT64; }

static acc_kind accumulator_for(gp_op op, gp_dtype in, gp_dtype out)
{
    if (gp_dtype_is_float(out)) return ACC_F64;
    if ((op == GP_MIN || op == GP_MAX) && is_signed_integer(in)) return ACC_I64;
    return ACC_U64;
}

/* The dtype dispatch table of the CPU backend: X(dtype, C storage type, conversion to double). */
#define GP_CPU_DTYPES(X)                                                                           \
    X(GP_BOOL, uint8_t, (double))                                                                   \
    X(GP_INT8, int8_t, (double))                                                                    \
    X(GP_INT16, int16_t, (double))                                                                  \
    X(GP_INT32, int32_t, (double))                                                                  \
    X(GP_INT64, int64_t, (double))                                                                  \
    X(GP_UINT8, uint8_t, (double))                                                                  \
    X(GP_UINT16, uint16_t, (double))                                                                \
    X(GP_UINT32, uint32_t, (double))                                                                \
    X(GP_UINT64, uint64_t, (double))                                                                \
    X(GP_FLOAT16, uint16_t, (double)half_to_float)                                                  \
    X(GP_FLOAT32, float, (double))                                                                  \
    X(GP_FLOAT64, double, (double))

void gp_cpu_load(gp_dtype t, const void *src, int64_t count, double *f, uint64_t *u)
{
    switch (t) {
#define GP_LOAD_CASE(DTYPE, TYPE, TO_DOUBLE)                                                       \
    case DTYPE: {                                                                                  \
        const TYPE *s = (const TYPE *)src;                                                         \
        if (f)                                                                                     \
            for (int64_t k = 0; k < count; ++k) f[k] = TO_DOUBLE(s[k]);                            \
        else                                                                                       \
            for (int64_t k = 0; k < count; ++k) u[k] = (uint64_t)(int64_t)s[k];                    \
        break;                                                                                     \
    }
        GP_CPU_DTYPES(GP_LOAD_CASE)
#undef GP_LOAD_CASE
    default: break;
    }
}

void gp_cpu_store(gp_dtype t, const double *f, const uint64_t *u, int64_t count, void *dst)
{
    if (t == GP_FLOAT16) {
        uint16_t *d = (uint16_t *)dst;
        for (int64_t k = 0; k < count; ++k) d[k] = half_from_double(f[k]);
        return;
    }
    switch (t) {
#define GP_STORE_CASE(DTYPE, TYPE, TO_DOUBLE)                                                      \
    case DTYPE: {                                                                                  \
        TYPE *d = (TYPE *)dst;                                                                     \
        if (f)                                                                                     \
            for (int64_t k = 0; k < count; ++k) d[k] = (TYPE)f[k];                                 \
        else                                                                                       \
            for (int64_t k = 0; k < count; ++k) d[k] = (TYPE)u[k];                                 \
        break;                                                                                     \
    }
        GP_CPU_DTYPES(GP_STORE_CASE)
#undef GP_STORE_CASE
    default: break;
    }
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
#define GP_SUM(a, b) ((a) + (b))
#define GP_PROD(a, b) ((a) * (b))
#define GP_LESS(a, b) ((a) < (b))
#define GP_GREATER(a, b) ((a) > (b))
/* NaN wins in min/max, as in numpy.minimum/maximum. */
#define GP_FMIN(a, b) ((isnan(a) || (a) < (b)) ? (a) : (b))
#define GP_FMAX(a, b) ((isnan(a) || (a) > (b)) ? (a) : (b))
#define GP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GP_MAX(a, b) ((a) > (b) ? (a) : (b))

/* acc[k] = op(acc[k], x[k]) for k < count. */
static void combine(gp_op op, acc_kind kind, acc_block *acc, const acc_block *x, int64_t count)
{
#define GP_COMBINE(FIELD, OP) for (int64_t k = 0; k < count; ++k) acc->FIELD[k] = OP(acc->FIELD[k], x->FIELD[k])
    if (kind == ACC_F64) {
        if (op == GP_SUM) GP_COMBINE(f, GP_SUM);
        else if (op == GP_PROD) GP_COMBINE(f, GP_PROD);
        else if (op == GP_MIN) GP_COMBINE(f, GP_FMIN);
        else GP_COMBINE(f, GP_FMAX);
    } else if (kind == ACC_I64) {
        if (op == GP_MIN) GP_COMBINE(i, GP_MIN);
        else GP_COMBINE(i, GP_MAX);
    } else {
        if (op == GP_SUM) GP_COMBINE(u, GP_SUM);
        else if (op == GP_PROD) GP_COMBINE(u, GP_PROD);
        else if (op == GP_MIN) GP_COMBINE(u, GP_MIN);
        else GP_COMBINE(u, GP_MAX);
    }
#undef GP_COMBINE
}

/* Folds x[0..count) into acc->?[0].  Eight independent partial results shorten the float rounding
 * chains and the dependency chains alike. */
static void fold(gp_op op, acc_kind kind, acc_block *acc, const acc_block *x, int64_t count)
{
#define GP_FOLD(FIELD, OP)                                                                         \
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
        if (op == GP_SUM) GP_FOLD(f, GP_SUM);
        else if (op == GP_PROD) GP_FOLD(f, GP_PROD);
        else if (op == GP_MIN) GP_FOLD(f, GP_FMIN);
        else GP_FOLD(f, GP_FMAX);
    } else if (kind == ACC_I64) {
        if (op == GP_MIN) GP_FOLD(i, GP_MIN);
        else GP_FOLD(i, GP_MAX);
    } else {
        if (op == GP_SUM) GP_FOLD(u, GP_SUM);
        else if (op == GP_PROD) GP_FOLD(u, GP_PROD);
        else if (op == GP_MIN) GP_FOLD(u, GP_MIN);
        else GP_FOLD(u, GP_MAX);
    }
#undef GP_FOLD
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

static int out_of_memory(gp_error *err)
{
    err->status = GP_ERR_NOMEM;
    strcpy(err->message, "out of host memory in the CPU backend");
    return -1;
}

int gp_cpu_reduce(const gp_reduce_desc *desc, gp_error *err)
{
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
        const char *slab = (const char *)desc->in + o * n * inner * in_size;
        char *out = (char *)desc->out + o * inner * out_size;
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
#define GP_SCAN(FIELD)                                                                             \
    for (int64_t k = 0; k < count; ++k) {                                                          \
        const int64_t slot = per_slot ? k : 0;                                                     \
        const __typeof__(x->FIELD[0]) before = running->FIELD[slot];                               \
        running->FIELD[slot] = before + x->FIELD[k];                                               \
        x->FIELD[k] = exclusive ? before : running->FIELD[slot];                                   \
    }
    if (kind == ACC_F64) {
        GP_SCAN(f)
    } else {
        GP_SCAN(u)
    }
#undef GP_SCAN
}

int gp_cpu_scan(const gp_scan_desc *desc, gp_error *err)
{
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
        const char *in = (const char *)desc->in + o * n * inner * in_size;
        char *out = (char *)desc->out + o * n * inner * out_size;
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
