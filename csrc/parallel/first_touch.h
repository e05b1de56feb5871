/* Faulting in a fresh host buffer's pages on every pool thread, before a backend writes it.
 *
 * A large result that NumPy has just mapped has no pages yet: each first write faults one in (a
 * 2 MiB huge page where transparent huge pages are on, which NumPy asks for) and the kernel zeroes
 * it.  The backends write results in grains that their threads claim in turn, so several threads
 * fault the same huge page at once and wait for each other.  On the 16-core H200 host, 2^30
 * float32: the CPU backend's prefix_sum took 328 ms into a fresh result and 135 ms into one written
 * before, the streamed GPU call 517 and 195 ms; 16 threads each filling a contiguous sixteenth of a
 * fresh 4 GiB array took 120 ms, 67 ms when it had been written before. */
#ifndef GP_FIRST_TOUCH_H
#define GP_FIRST_TOUCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes a zero byte to every 4 KiB page of [data, data + bytes), each pool thread a contiguous run
 * of whole 2 MiB spans, so that no two threads fault the same huge page.  Only for a buffer whose
 * contents do not matter yet (a new, uninitialised result).  Does nothing on one thread or below
 * one span. */
void gp_first_touch(void *data, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
