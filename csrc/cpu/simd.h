/* The CPU backend's vectors: GCC's and Clang's generic vector types, of one logical width on every
 * machine.
 *
 * A vector here is 64 bytes (16 floats, 8 doubles) whatever the instruction set: the compiler
 * lowers each operation to one AVX-512 instruction, two AVX2 ones or four SSE2 or NEON ones.  The
 * lanes, the order of every addition and so every result are the same on each path; the
 * instruction set changes only the speed.  Loads and stores go through memcpy, which compiles to
 * unaligned vector moves.
 *
 * The lane types come from the dtype table: a dtype's storage type, except float16, whose lanes are
 * its bits (uint16_t).  Every type below is generated per dtype: gp_lane_NAME, and vectors of it
 * gp_vec_NAME (64 bytes), gp_vec8_NAME and gp_vec16_NAME (8 and 16 lanes). */
#ifndef GP_CPU_SIMD_H
#define GP_CPU_SIMD_H

#include <stdint.h>
#include <string.h>

#include "contract/gp_dtype.h"

enum { GP_VEC_BYTES = 64 };

typedef float gp_f32x16 __attribute__((vector_size(64)));
typedef float gp_f32x8 __attribute__((vector_size(32)));
typedef double gp_f64x8 __attribute__((vector_size(64)));
typedef uint64_t gp_u64x8 __attribute__((vector_size(64)));
typedef int64_t gp_i64x8 __attribute__((vector_size(64)));
typedef uint32_t gp_u32x16 __attribute__((vector_size(64)));
typedef int32_t gp_i32x16 __attribute__((vector_size(64)));
typedef uint32_t gp_u32x8 __attribute__((vector_size(32)));
typedef int32_t gp_i32x8 __attribute__((vector_size(32)));
typedef uint16_t gp_u16x16 __attribute__((vector_size(32)));
typedef uint16_t gp_u16x8 __attribute__((vector_size(16)));
typedef int16_t gp_i16x8 __attribute__((vector_size(16)));
typedef uint8_t gp_u8x8 __attribute__((vector_size(8)));
typedef int8_t gp_i8x8 __attribute__((vector_size(8)));

/* The lane type of a storage type: itself, or uint16_t for float16's gp_half. */
#define GP_LANE_TYPE(host_type) __typeof__(_Generic((host_type){0}, gp_half: (uint16_t)0, default: (host_type){0}))

/* The unsigned and signed integer types of `size` bytes (a constant expression of 1, 2, 4 or 8). */
#define GP_UINT_OF_SIZE(size)                                                                      \
    __typeof__(_Generic((char(*)[size])0, char(*)[1]: (uint8_t)0, char(*)[2]: (uint16_t)0,          \
                        char(*)[4]: (uint32_t)0, default: (uint64_t)0))
#define GP_INT_OF_SIZE(size)                                                                       \
    __typeof__(_Generic((char(*)[size])0, char(*)[1]: (int8_t)0, char(*)[2]: (int16_t)0,            \
                        char(*)[4]: (int32_t)0, default: (int64_t)0))

/* Per dtype: the lanes, vectors of them (64 bytes, 8 and 16 lanes), the lanes' bits as unsigned
 * integers (gp_bvec_NAME) and the masks comparisons give (gp_mvec_NAME). */
#define GP_SIMD_TYPES(NAME, numpy_name, kind, size, host_type, device_type)                        \
    typedef GP_LANE_TYPE(host_type) gp_lane_##NAME;                                                \
    typedef GP_UINT_OF_SIZE(size) gp_bits_##NAME;                                                  \
    typedef gp_bits_##NAME gp_bvec_##NAME __attribute__((vector_size(GP_VEC_BYTES)));              \
    typedef GP_INT_OF_SIZE(size) gp_mask_##NAME;                                                   \
    typedef gp_mask_##NAME gp_mvec_##NAME __attribute__((vector_size(GP_VEC_BYTES)));              \
    typedef gp_lane_##NAME gp_vec_##NAME __attribute__((vector_size(GP_VEC_BYTES)));               \
    typedef gp_lane_##NAME gp_vec8_##NAME __attribute__((vector_size(8 * size)));                  \
    typedef gp_lane_##NAME gp_vec16_##NAME __attribute__((vector_size(16 * size)));
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
