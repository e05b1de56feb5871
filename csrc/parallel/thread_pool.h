/* The process's pool of host threads, shared by the CPU backend and the streaming engine's staging
 * copies.  Created on first use with one thread per core (GPUPRIMS_NUM_THREADS lowers it; read once)
 * and never destroyed; a forked child creates a pool of its own.
 *
 * One job at a time: a job is `parts` calls run(ctx, part), part < parts, each on a pool thread.
 * gp_pool_start returns at once, so the caller can do other work meanwhile, and gp_pool_finish
 * waits for every part; another caller's start waits until the job has finished.  A job of one
 * part runs on the caller's thread, inside start.  A job must not use the pool itself. */
#ifndef GP_THREAD_POOL_H
#define GP_THREAD_POOL_H

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*gp_pool_job)(void *ctx, int part);

/* The number of pool threads (at least 1): the most parts of a job. */
int gp_pool_threads(void);
/* Starts run(ctx, part) for part < parts; parts is clamped to [1, gp_pool_threads()]. */
void gp_pool_start(int parts, gp_pool_job run, void *ctx);
/* Waits for the job gp_pool_start started. */
void gp_pool_finish(void);
/* gp_pool_start, then gp_pool_finish. */
void gp_pool_run(int parts, gp_pool_job run, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
