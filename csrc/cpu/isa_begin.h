/* The start of an instruction set's file (isa_*.c), after it has set GP_NATIVE_BYTES, GP_ISA_NAME,
 * GP_ISA_FILL (its table's fill function) and, but for the baseline, GP_ISA_TARGET (the target
 * features): the region of code compiled for those features, which simd_kernels.h ends, and the
 * vectors (simd.h).  Floating-point contraction stays off in every region (GCC does not contract
 * in ISO C mode, -std=c11; Clang is told here), so that FMA never changes a result. */
#define GP_ISA_PRAGMA(text) GP_ISA_PRAGMA_STRING(text)
#define GP_ISA_PRAGMA_STRING(text) _Pragma(#text)

#ifdef GP_ISA_TARGET
#ifdef __clang__
GP_ISA_PRAGMA(clang attribute push(__attribute__((target(GP_ISA_TARGET))), apply_to = function))
#else
GP_ISA_PRAGMA(GCC push_options)
GP_ISA_PRAGMA(GCC target(GP_ISA_TARGET))
#endif
#endif

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#include "cpu/simd.h"
