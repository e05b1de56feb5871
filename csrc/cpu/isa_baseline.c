/* The CPU backend's loops for any CPU: the compiler's baseline instruction set (SSE2 on x86-64,
 * Advanced SIMD on aarch64), 16-byte vectors. */
#define GP_NATIVE_BYTES 16
#define GP_ISA_NAME "baseline"
#define GP_ISA_FILL gp_cpu_fill_kernels_baseline
#include "cpu/isa_begin.h"

#include "cpu/simd_kernels.h"
