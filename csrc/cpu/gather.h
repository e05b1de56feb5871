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

#ifdef __cplusplus
}
#endif

#endif
