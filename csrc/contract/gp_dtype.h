/* The element types of both backends and the accumulator rule, in one place.
 *
 * GP_DTYPES is the one dtype table: the gp_dtype enum, the item sizes, the NumPy mapping
 * (csrc/glue/arguments.c, and gpuprims._core.DTYPES for Python), the CPU backend's storage types and
 * the CUDA dispatcher (cuda/common.cuh) are all generated from it.  Its columns:
 *   X(NAME, numpy name, NumPy kind, item size, host storage type, device storage type)
 * float16 is gp_half on the host (its bits, in a type of its own, so that code generated from the
 * table can tell it from uint16) and __half on the device. */
#ifndef GP_DTYPE_H
#define GP_DTYPE_H

#include <stdint.h>

typedef struct {
    uint16_t bits;
} gp_half;

#define GP_DTYPES(X)                                        \
    X(BOOL, "bool", 'b', 1, uint8_t, bool)                  \
    X(INT8, "int8", 'i', 1, int8_t, int8_t)                 \
    X(INT16, "int16", 'i', 2, int16_t, int16_t)             \
    X(INT32, "int32", 'i', 4, int32_t, int32_t)             \
    X(INT64, "int64", 'i', 8, int64_t, int64_t)             \
    X(UINT8, "uint8", 'u', 1, uint8_t, uint8_t)             \
    X(UINT16, "uint16", 'u', 2, uint16_t, uint16_t)         \
    X(UINT32, "uint32", 'u', 4, uint32_t, uint32_t)         \
    X(UINT64, "uint64", 'u', 8, uint64_t, uint64_t)         \
    X(FLOAT16, "float16", 'f', 2, gp_half, __half)          \
    X(FLOAT32, "float32", 'f', 4, float, float)             \
    X(FLOAT64, "float64", 'f', 8, double, double)

typedef enum {
#define GP_DTYPE_ENUM(NAME, numpy_name, kind, size, host_type, device_type) GP_##NAME,
    GP_DTYPES(GP_DTYPE_ENUM)
#undef GP_DTYPE_ENUM
    GP_NUM_DTYPES
} gp_dtype;

/* The rule functions below are constant expressions in C++, so the CUDA dispatcher instantiates
 * exactly the (input, output) pairs they allow. */
#ifdef __cplusplus
#define GP_RULE static constexpr
#else
#define GP_RULE static inline
#endif

GP_RULE int gp_dtype_valid(gp_dtype t) { return (int)t >= 0 && (int)t < (int)GP_NUM_DTYPES; }

GP_RULE int64_t gp_dtype_size(gp_dtype t)
{
    switch (t) {
#define GP_DTYPE_SIZE(NAME, numpy_name, kind, size, host_type, device_type) \
    case GP_##NAME: return size;
        GP_DTYPES(GP_DTYPE_SIZE)
#undef GP_DTYPE_SIZE
    default: return 0;
    }
}

GP_RULE int gp_dtype_is_float(gp_dtype t) { return t == GP_FLOAT16 || t == GP_FLOAT32 || t == GP_FLOAT64; }
GP_RULE int gp_dtype_is_signed(gp_dtype t) { return t == GP_INT8 || t == GP_INT16 || t == GP_INT32 || t == GP_INT64; }

/* The accumulator rule of sum, prod and the scans, for both backends:
 *  - integer and bool inputs accumulate in 64-bit two's complement, which wraps exactly as NumPy
 *    does, into GP_INT64 or GP_UINT64 outputs (a narrower integer result is the truncation, which
 *    commutes with + and *, done after);
 *  - GP_FLOAT64 outputs take any input; GP_FLOAT32 float16 and float32 inputs; GP_FLOAT16 float16
 *    inputs, accumulated in float32 as NumPy does. */
GP_RULE int gp_accumulate_supported(gp_dtype in, gp_dtype out)
{
    if (!gp_dtype_valid(in)) return 0;
    if (out == GP_INT64 || out == GP_UINT64) return !gp_dtype_is_float(in);
    if (out == GP_FLOAT64) return 1;
    if (out == GP_FLOAT32) return in == GP_FLOAT16 || in == GP_FLOAT32;
    if (out == GP_FLOAT16) return in == GP_FLOAT16;
    return 0;
}

/* The dtype partial results of a sum, prod or scan with result `out` are kept in between launches
 * (a streamed call's carries, a reduction's per-block partials): float32 for float16, else out. */
GP_RULE gp_dtype gp_partial_dtype(gp_dtype out) { return out == GP_FLOAT16 ? GP_FLOAT32 : out; }

/* What the backends compute for a NumPy result dtype `result` of a sum, prod or scan of `in`: the
 * dtype they write (returned) and, in *cast_input, the dtype the input is converted to first, or
 * GP_NUM_DTYPES when it is used as it is.  Integer results come from the 64-bit accumulation and are
 * narrowed afterwards; a float input summed into an integer result is cast to it first, as NumPy
 * does. */
GP_RULE gp_dtype gp_backend_result(gp_dtype in, gp_dtype result, gp_dtype *cast_input)
{
    *cast_input = GP_NUM_DTYPES;
    if (!gp_dtype_is_float(result)) {
        if (gp_dtype_is_float(in)) *cast_input = result;
        return result == GP_UINT8 || result == GP_UINT16 || result == GP_UINT32 || result == GP_UINT64
                   ? GP_UINT64
                   : GP_INT64;
    }
    if (!gp_accumulate_supported(in, result)) *cast_input = result;
    return result;
}

#endif
