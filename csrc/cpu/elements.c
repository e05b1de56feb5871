/* Element conversion of the CPU backend, generated from the dtype table (GP_DTYPES): to and from
 * the accumulators' doubles and 64-bit words. */
#include <math.h>

#include "cpu/cpu_backend.h"

static double half_to_double(gp_half h)
{
    const uint32_t sign = (uint32_t)(h.bits >> 15), exponent = (h.bits >> 10) & 0x1f, mantissa = h.bits & 0x3ff;
    double magnitude;
    if (exponent == 0x1f) magnitude = mantissa ? NAN : INFINITY;
    else magnitude = exponent ? ldexp((double)(mantissa | 0x400), (int)exponent - 25) : ldexp((double)mantissa, -24);
    return sign ? -magnitude : magnitude;
}

/* Correctly rounded (to nearest even) double -> float16, without double rounding through float. */
static gp_half half_from_double(double x)
{
    const uint16_t sign = signbit(x) ? 0x8000 : 0;
    const double magnitude = fabs(x);
    if (isnan(x)) return (gp_half){0x7e00};
    if (magnitude >= 65520.0) return (gp_half){sign | 0x7c00}; /* rounds to infinity */
    int e;
    frexp(magnitude, &e); /* magnitude = m * 2^e, m in [0.5, 1) */
    int exponent = e - 1; /* magnitude = 1.f * 2^exponent */
    if (magnitude == 0.0 || exponent < -14) exponent = -14;
    const double units = nearbyint(ldexp(magnitude, 10 - exponent)); /* exact scaling */
    if (units < 1024.0) return (gp_half){sign | (uint16_t)units};    /* subnormal (or zero) */
    const uint32_t bits = ((uint32_t)(exponent + 15) << 10) + ((uint32_t)units - 1024);
    return (gp_half){sign | (uint16_t)bits}; /* units == 2048 carries into the exponent, up to infinity */
}

static double as_double(double x) { return x; }
static uint64_t as_word(int64_t x) { return (uint64_t)x; } /* sign-extends: 64-bit two's complement */
static uint64_t word_as_is(uint64_t u) { return u; }        /* narrowed by the assignment: wraps */
static uint64_t half_as_word(gp_half h) { return h.bits; }  /* floats never take the word path */
static gp_half half_from_word(uint64_t u) { return (gp_half){(uint16_t)u}; }

/* The conversion each storage type takes, picked by type (float16 has its own); the other types
 * convert implicitly, through the function's parameter or in the assignment of its result. */
#define TO_DOUBLE(x) _Generic((x), gp_half: half_to_double, default: as_double)(x)
#define TO_WORD(x) _Generic((x), gp_half: half_as_word, default: as_word)(x)
#define FROM_DOUBLE(slot, x) _Generic((slot), gp_half: half_from_double, default: as_double)(x)
#define FROM_WORD(slot, x) _Generic((slot), gp_half: half_from_word, default: word_as_is)(x)

void gp_cpu_load(gp_dtype t, const void *src, int64_t count, double *f, uint64_t *u)
{
    switch (t) {
#define LOAD_CASE(NAME, numpy_name, kind, size, host_type, device_type)                             \
    case GP_##NAME: {                                                                              \
        const host_type *s = (const host_type *)src;                                               \
        if (f)                                                                                     \
            for (int64_t k = 0; k < count; ++k) f[k] = TO_DOUBLE(s[k]);                            \
        else                                                                                       \
            for (int64_t k = 0; k < count; ++k) u[k] = TO_WORD(s[k]);                              \
        break;                                                                                     \
    }
        GP_DTYPES(LOAD_CASE)
#undef LOAD_CASE
    default: break;
    }
}

void gp_cpu_store(gp_dtype t, const double *f, const uint64_t *u, int64_t count, void *dst)
{
    switch (t) {
#define STORE_CASE(NAME, numpy_name, kind, size, host_type, device_type)                            \
    case GP_##NAME: {                                                                              \
        host_type *d = (host_type *)dst;                                                           \
        if (f)                                                                                     \
            for (int64_t k = 0; k < count; ++k) d[k] = FROM_DOUBLE(d[k], f[k]);                   \
        else                                                                                       \
            for (int64_t k = 0; k < count; ++k) d[k] = FROM_WORD(d[k], u[k]);                     \
        break;                                                                                     \
    }
        GP_DTYPES(STORE_CASE)
#undef STORE_CASE
    default: break;
    }
}

void gp_cpu_half_to_float(const gp_half *src, int64_t count, float *dst)
{
    for (int64_t k = 0; k < count; ++k) dst[k] = (float)half_to_double(src[k]); /* exact */
}

void gp_cpu_half_from_float(const float *src, int64_t count, gp_half *dst)
{
    for (int64_t k = 0; k < count; ++k) dst[k] = half_from_double(src[k]); /* float -> double is exact */
}
