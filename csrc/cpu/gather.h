/* Reading a strided host view in its C order: the CPU backend reads a call's in_view piece by piece
 * through it, and the streaming engine gathers the view's tiles into its pinned staging slots. */
#ifndef GP_GATHER_H
#define GP_GATHER_H

#include <stdint.h>

#include "contract/gp_call.h"

#ifdef __cplusplus
extern "C" {
#endif

/* copy.c: elements [first, first + count) of a strided view (in: its element (0, ..., 0)), in the
 * view's C order, into out. */
void gp_cpu_gather(const gp_copy_args *view, const char *in, int64_t first, int64_t count, void *out);

/* copy.c: for memory that no CPU thread reads again soon (the streaming engine's pinned staging
 * slots, which the DMA reads, and the host results it fills from them): gp_cpu_gather, and memcpy,
 * with non-temporal stores where the CPU has them (x86-64).  Those skip reading each destination
 * line into the cache before it is overwritten: on a 16-core H200 host, 2^26 uint32 elements with
 * 12 threads, a stride-2 gather took 9.8 ms against 11.9 ms, a contiguous copy 5.3 ms against
 * memcpy's 8.1 ms. */
void gp_cpu_gather_streaming(const gp_copy_args *view, const char *in, int64_t first, int64_t count, void *out);
void gp_cpu_copy_streaming(void *out, const void *in, int64_t bytes);

#ifdef __cplusplus
}
#endif

#endif
