/* The CPU backend's vectors: GCC's and Clang's generic vector types, in the instruction set's
 * native width, arranged as 64-byte logical vectors.
 *
 * Each isa_*.c sets GP_NATIVE_BYTES before it includes simd_kernels.h: 64 for AVX-512, 32 for
 * AVX2, and the default 16 for the baseline (SSE2 on x86-64, Advanced SIMD on aarch64).  Every
 * vector the kernels use is native: GCC 12 compiles generic vectors wider than the machine's
 * registers badly (their comparisons element by element, arrays of them through memory).
 *
 * The kernels' order of operations is defined on logical vectors of 64 bytes (16 floats, 8
 * doubles, 8 64-bit words): a logical vector is GP_PARTS native ones, lanes in order, and each
 * instruction set performs the same operations on the same lanes, so every path computes the same
 * bits; only the speed differs.  Loads and stores go through memcpy, which compiles to unaligned
 * vector moves.
 *
 * The lane types come from the dtype table: a dtype's storage type, except float16, whose lanes are
 * its bits (uint16_t). */
#ifndef GP_CPU_SIMD_H
#define GP_CPU_SIMD_H

#include <stdint.h>
#include <string.h>

#include "contract/gp_dtype.h"

#ifndef GP_NATIVE_BYTES
#define GP_NATIVE_BYTES 16
#endif

enum {
    GP_LOGICAL_BYTES = 64,
    GP_PARTS = GP_LOGICAL_BYTES / GP_NATIVE_BYTES, /* native vectors per logical one */
    GP_NL64 = GP_NATIVE_BYTES / 8,                 /* lanes of 8 bytes in a native vector */
    GP_NL32 = GP_NATIVE_BYTES / 4                  /* lanes of 4 bytes */
};

/* Native vectors, and the narrower element vectors that widen into them: GP_NL64 elements of 4, 2
 * and 1 bytes (into 64-bit lanes), GP_NL32 float16 bit patterns (into floats). */
typedef float gp_f32v __attribute__((vector_size(GP_NATIVE_BYTES)));
typedef double gp_f64v __attribute__((vector_size(GP_NATIVE_BYTES)));
typedef uint64_t gp_u64v __attribute__((vector_size(GP_NATIVE_BYTES)));
typedef int64_t gp_i64v __attribute__((vector_size(GP_NATIVE_BYTES)));
typedef uint32_t gp_u32v __attribute__((vector_size(GP_NATIVE_BYTES)));
typedef int32_t gp_i32v __attribute__((vector_size(GP_NATIVE_BYTES)));
typedef uint16_t gp_u16v __attribute__((vector_size(GP_NATIVE_BYTES)));
typedef int16_t gp_i16v __attribute__((vector_size(GP_NATIVE_BYTES)));
typedef float gp_f32h __attribute__((vector_size(GP_NATIVE_BYTES / 2)));
typedef int32_t gp_i32h __attribute__((vector_size(GP_NATIVE_BYTES / 2)));
typedef uint32_t gp_u32h __attribute__((vector_size(GP_NATIVE_BYTES / 2)));
typedef uint16_t gp_u16h __attribute__((vector_size(GP_NATIVE_BYTES / 2)));
typedef int16_t gp_i16q __attribute__((vector_size(GP_NATIVE_BYTES / 4)));
typedef uint16_t gp_u16q __attribute__((vector_size(GP_NATIVE_BYTES / 4)));
typedef int8_t gp_i8e __attribute__((vector_size(GP_NATIVE_BYTES / 8)));
typedef uint8_t gp_u8e __attribute__((vector_size(GP_NATIVE_BYTES / 8)));

/* The lane type of a storage type: itself, or uint16_t for float16's gp_half. */
#define GP_LANE_TYPE(host_type) __typeof__(_Generic((host_type){0}, gp_half: (uint16_t)0, default: (host_type){0}))

/* The unsigned and signed integer types of `size` bytes (a constant expression of 1, 2, 4 or 8). */
#define GP_UINT_OF_SIZE(size)                                                                      \
    __typeof__(_Generic((char(*)[size])0, char(*)[1]: (uint8_t)0, char(*)[2]: (uint16_t)0,          \
                        char(*)[4]: (uint32_t)0, default: (uint64_t)0))
#define GP_INT_OF_SIZE(size)                                                                       \
    __typeof__(_Generic((char(*)[size])0, char(*)[1]: (int8_t)0, char(*)[2]: (int16_t)0,            \
                        char(*)[4]: (int32_t)0, default: (int64_t)0))

/* Per dtype: the lanes, a native vector of them (gp_vec_NAME), the lanes' bits as unsigned integers
 * (gp_bvec_NAME), the masks comparisons give (gp_mvec_NAME), and GP_NL64 and GP_NL32 elements
 * (gp_vec64_NAME, gp_vec32_NAME: what widens into a native vector of 8- or 4-byte lanes). */
#define GP_SIMD_TYPES(NAME, numpy_name, kind, size, host_type, device_type)                        \
    typedef GP_LANE_TYPE(host_type) gp_lane_##NAME;                                                \
    typedef GP_UINT_OF_SIZE(size) gp_bits_##NAME;                                                  \
    typedef gp_bits_##NAME gp_bvec_##NAME __attribute__((vector_size(GP_NATIVE_BYTES)));           \
    typedef GP_INT_OF_SIZE(size) gp_mask_##NAME;                                                   \
    typedef gp_mask_##NAME gp_mvec_##NAME __attribute__((vector_size(GP_NATIVE_BYTES)));           \
    typedef gp_lane_##NAME gp_vec_##NAME __attribute__((vector_size(GP_NATIVE_BYTES)));            \
    typedef gp_lane_##NAME gp_vec64_##NAME __attribute__((vector_size(GP_NL64 * size)));           \
    typedef gp_lane_##NAME gp_vec32_##NAME __attribute__((vector_size(GP_NL32 * size)));
GP_DTYPES(GP_SIMD_TYPES)
#undef GP_SIMD_TYPES

/* A vector of type TYPE from (unaligned) memory, and back. */
#define GP_LOAD(TYPE, address)                                                                     \
    __extension__({                                                                                \
        TYPE gp_loaded_;                                                                           \
        memcpy(&gp_loaded_, (address), sizeof gp_loaded_);                                         \
        gp_loaded_;                                                                                \
    })
#define GP_STORE(address, vector)                                                                  \
    do {                                                                                           \
        __typeof__(vector) gp_stored_ = (vector);                                                  \
        memcpy((address), &gp_stored_, sizeof gp_stored_);                                         \
    } while (0)

/* A vector with every lane `value` (subtracting +0 keeps a -0.0). */
#define GP_SPLAT(TYPE, value) ((__typeof__(((TYPE){0})[0]))(value) - (TYPE){0})

/* a where mask (all ones) else b; MASK is the integer vector type of a and b's width. */
#define GP_SELECT(MASK, mask, a, b)                                                                \
    ((__typeof__(a))(((MASK)(a) & (MASK)(mask)) | ((MASK)(b) & ~(MASK)(mask))))

#endif
