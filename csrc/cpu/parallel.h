/* How the CPU backend's drivers cut a call into parts for the thread pool. */
#ifndef GP_CPU_PARALLEL_H
#define GP_CPU_PARALLEL_H

#include <stdint.h>

#include "parallel/thread_pool.h"

/* Bytes of input one thread is given at the least: below twice this a call runs on the calling
 * thread alone.  Measured on the 2-core development machine (AMD EPYC, Zen 4), public calls from
 * Python, best of 9 x 2000 calls, 1 thread / 2 threads in us:
 *
 *                 2^14 (64 KiB)  2^15 (128 KiB)  2^16        2^17
 *   sum int32     2.84 / 2.81    3.61 / 3.33     5.03 / 4.06  8.05 / 5.62
 *   max int32     2.75 / 2.77    4.16 / 3.57     6.12 / 4.69  10.2 / 6.64
 *   sum float32   3.26 / 3.28    4.38 / 3.71     6.69 / 4.90  11.4 / 7.26
 *   max float32   2.72 / 2.71    3.45 / 3.29     4.75 / 3.95  7.76 / 5.35
 *
 * (2^14 elements are one piece: one task, whatever the threads.)  Two threads win from 128 KiB,
 * where they start: the pool's spinning workers take a part within a microsecond of a previous
 * call.  The 16-core host should be measured too (tests/perf/cpu_targets.py). */
enum { GP_CPU_PART_BYTES = 64 * 1024 };

/* The parts to cut `tasks` independent tasks moving `bytes` into: at most one per pool thread, per
 * task and per GP_CPU_PART_BYTES. */
static inline int gp_cpu_parts(double bytes, int64_t tasks)
{
    const double by_size = bytes / GP_CPU_PART_BYTES;
    int parts = gp_pool_threads();
    if (by_size < parts) parts = (int)by_size;
    if (tasks < parts) parts = (int)tasks;
    return parts < 1 ? 1 : parts;
}

/* Tasks per grain of gp_pool_for, for `tasks` tasks moving `task_bytes` each shared by `parts`
 * threads: about GP_CPU_GRAIN_BYTES a grain, so that a thread reads long runs of memory (threads
 * taking every other 32 KiB row read 25 % slower than either alone, the prefetchers restarting at
 * every row), but four grains a part at the least, so that a late thread can be made up for. */
enum { GP_CPU_GRAIN_BYTES = 256 * 1024 };

static inline int64_t gp_cpu_grain(double task_bytes, int64_t tasks, int parts)
{
    double grain = GP_CPU_GRAIN_BYTES / (task_bytes > 1.0 ? task_bytes : 1.0);
    const double most = (double)tasks / (4.0 * parts);
    if (grain > most) grain = most;
    return grain < 1.0 ? 1 : (int64_t)grain;
}

#endif
