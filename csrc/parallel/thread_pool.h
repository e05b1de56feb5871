/* The process's pool of host threads, shared by the CPU backend and the streaming engine's staging
 * copies.  Created on first use and never destroyed; a forked child creates a pool of its own.
 *
 * Its size, the most parts a job runs at once, is the number of cores this process may run on
 * (sched_getaffinity, as os.sched_getaffinity), or GPUPRIMS_NUM_THREADS (read once, 1 to 256), or
 * what gp_pool_set_threads last set (gpuprims.set_num_threads).  Workers are created as jobs need
 * them.
 *
 * One job at a time: a job is `parts` calls run(ctx, part), part < parts.
 *   - gp_pool_start runs every part on pool workers and returns at once, so that the caller can do
 *     other work meanwhile; gp_pool_finish waits for them.  (A job of one part runs on the caller's
 *     thread, inside start.)
 *   - gp_pool_run runs part 0 on the caller's thread and the others on workers, and returns when
 *     all are done;
 *   - gp_pool_for shares a range of tasks between the caller and workers: the CPU backend's
 *     parallel loops.
 * Another caller's start or run waits until the job has finished.  A job must not use the pool
 * itself.
 *
 * Workers that finish a part spin for a short while (about 0.1 ms) before they sleep, so that the
 * next job of a loop of calls starts within a microsecond instead of a wake-up's tens of them. */
#ifndef GP_THREAD_POOL_H
#define GP_THREAD_POOL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { GP_POOL_MAX_THREADS = 256 };

typedef void (*gp_pool_job)(void *ctx, int part);
typedef void (*gp_pool_range)(void *ctx, int64_t first, int64_t last);

/* The pool's size (at least 1): the most parts of a job. */
int gp_pool_threads(void);
/* Sets the pool's size (clamped to [1, GP_POOL_MAX_THREADS]); waits for a running job first. */
void gp_pool_set_threads(int threads);
/* The cores this process may run on (sched_getaffinity; at least 1): the pool's default size. */
int gp_pool_usable_cores(void);
/* Starts run(ctx, part) for part < parts on pool workers; parts is clamped to [1, gp_pool_threads()]. */
void gp_pool_start(int parts, gp_pool_job run, void *ctx);
/* Waits for the job gp_pool_start started. */
void gp_pool_finish(void);
/* Runs run(ctx, part) for part < parts, part 0 on the calling thread; parts is clamped to
 * [1, gp_pool_threads()]. */
void gp_pool_run(int parts, gp_pool_job run, void *ctx);
/* Runs run(ctx, first, last) over tasks [0, tasks) in grains of `grain` tasks; returns when all are
 * done.  The calling thread and up to parts - 1 workers each own a contiguous run of the grains
 * (the same for the same sizes: a second pass over the same tasks finds them where the first left
 * them) and claim the others' grains once theirs are done.  A worker that has not started by the
 * time every grain is claimed skips the job, so that a busy machine's late threads never hold the
 * caller up.  Which thread runs a grain varies: results must not depend on it. */
void gp_pool_for(int parts, int64_t tasks, int64_t grain, gp_pool_range run, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
