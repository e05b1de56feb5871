/* Scalar element conversions of the CPU backend: double and float results to their float dtypes,
 * and float16 to float and back (the vector loops have their own, simd_kernels.h). */
#include <math.h>
#include <string.h>

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

void gp_cpu_store_doubles(gp_dtype t, const double *f, int64_t count, void *dst)
{
    if (t == GP_FLOAT16)
        for (int64_t k = 0; k < count; ++k) ((gp_half *)dst)[k] = half_from_double(f[k]);
    else if (t == GP_FLOAT32)
        for (int64_t k = 0; k < count; ++k) ((float *)dst)[k] = (float)f[k];
    else
        memcpy(dst, f, (size_t)count * sizeof *f);
}

void gp_cpu_half_to_float(const gp_half *src, int64_t count, float *dst)
{
    for (int64_t k = 0; k < count; ++k) dst[k] = (float)half_to_double(src[k]); /* exact */
}

void gp_cpu_half_from_float(const float *src, int64_t count, gp_half *dst)
{
    for (int64_t k = 0; k < count; ++k) dst[k] = half_from_double(src[k]); /* float -> double is exact */
}
