/* How the CPU backend's drivers cut a call into parts for the thread pool. */
#ifndef GP_CPU_PARALLEL_H
#define GP_CPU_PARALLEL_H

#include <stdint.h>

#include "parallel/thread_pool.h"

/* Bytes of input one thread is given at the least: below twice this a call runs on the calling
 * thread alone.  Measured on the 2-core development machine (tests/perf/cpu_targets.py): two
 * threads win over one from about 128 KiB of float32 sum or max (the pool's spinning workers start
 * a part within a microsecond of a previous call). */
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

/* Tasks per grain of gp_pool_for for tasks moving `task_bytes` each: about GP_CPU_PART_BYTES / 2
 * a grain, so that claiming grains costs little against the work. */
static inline int64_t gp_cpu_grain(double task_bytes)
{
    const double grain = (GP_CPU_PART_BYTES / 2) / (task_bytes > 1.0 ? task_bytes : 1.0);
    return grain < 1.0 ? 1 : (int64_t)grain;
}

#endif
