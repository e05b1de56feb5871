/* The calling thread's sticky overflow and invalid flags, watched around a loop: whether the loop's
 * floating-point operations made an inf or NaN (an overflow, inf - inf, 0 * inf).  The flags cost
 * the loop nothing; a watch costs a few status-register reads and writes.  Flags the caller had
 * raised before stay raised.
 *
 * x86-64 reads and writes MXCSR itself: <fenv.h>'s calls also save and load the x87 environment,
 * some hundred cycles a call.  Elsewhere <fenv.h>.  Neither call lets the compiler move the loop's
 * stores across it, and every value a scan writes is stored; a carried value that overflows after
 * its last store is found by the scans themselves (simd_kernels.h). */
#ifndef GP_CPU_FP_STATUS_H
#define GP_CPU_FP_STATUS_H

#if defined(__x86_64__) /* (SSE is always there; a 32-bit x86 build may do its doubles on the x87) */
#include <xmmintrin.h>

enum { GP_FP_WATCHED = _MM_EXCEPT_OVERFLOW | _MM_EXCEPT_INVALID };

/* Clears the two flags; returns what gp_fp_watch_end needs to put the caller's back. */
static inline unsigned gp_fp_watch_begin(void)
{
    const unsigned status = _mm_getcsr();
    _mm_setcsr(status & ~(unsigned)GP_FP_WATCHED);
    return status & GP_FP_WATCHED;
}

/* Whether either flag was raised since gp_fp_watch_begin returned `before`; the caller's flags set
 * again. */
static inline int gp_fp_watch_end(unsigned before)
{
    const unsigned status = _mm_getcsr();
    if (before != 0) _mm_setcsr(status | before);
    return (status & GP_FP_WATCHED) != 0;
}
#else
#include <fenv.h>

enum { GP_FP_WATCHED = FE_OVERFLOW | FE_INVALID };

static inline unsigned gp_fp_watch_begin(void)
{
    const int before = fetestexcept(GP_FP_WATCHED);
    feclearexcept(GP_FP_WATCHED);
    return (unsigned)before;
}

static inline int gp_fp_watch_end(unsigned before)
{
    const int raised = fetestexcept(GP_FP_WATCHED) != 0;
    if (before != 0) feraiseexcept((int)before);
    return raised;
}
#endif

#endif
