/* The host thread pool (see thread_pool.h).  Worker threads sleep on a condition variable between
 * jobs; a new job's generation number wakes them, each worker below the job's part count runs its
 * part, and the last one to finish wakes the caller. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "parallel/thread_pool.h"

enum { MAX_THREADS = 256 };

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static struct {
    int threads;
    pthread_mutex_t busy;  /* held from start to finish: one job at a time */
    pthread_mutex_t mutex; /* guards the job fields below */
    pthread_cond_t wake, done;
    gp_pool_job run;
    void *ctx;
    int parts, remaining;
    unsigned long long generation;
} pool;

static void *worker(void *arg)
{
    const int part = (int)(intptr_t)arg;
    unsigned long long seen = 0;
    pthread_mutex_lock(&pool.mutex);
    for (;;) {
        while (pool.generation == seen) pthread_cond_wait(&pool.wake, &pool.mutex);
        seen = pool.generation;
        if (part >= pool.parts) continue;
        const gp_pool_job run = pool.run;
        void *ctx = pool.ctx;
        pthread_mutex_unlock(&pool.mutex);
        run(ctx, part); /* the job's fields change only once all its parts are done */
        pthread_mutex_lock(&pool.mutex);
        if (--pool.remaining == 0) pthread_cond_signal(&pool.done);
    }
    return NULL;
}

/* Cores online, lowered by GPUPRIMS_NUM_THREADS. */
static int wanted_threads(void)
{
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long threads = cores > 0 ? cores : 1;
    const char *setting = getenv("GPUPRIMS_NUM_THREADS");
    if (setting != NULL && *setting != '\0') {
        char *end = NULL;
        const long wanted = strtol(setting, &end, 10);
        if (*end == '\0' && wanted >= 1 && wanted < threads) threads = wanted;
    }
    return (int)(threads < MAX_THREADS ? threads : MAX_THREADS);
}

static void create_pool(void);

/* A forked child has none of the parent's threads (and may inherit a held lock): it starts over. */
static void start_over_in_child(void)
{
    const pthread_once_t fresh = PTHREAD_ONCE_INIT;
    pool_once = fresh;
}

static void create_pool(void)
{
    static int fork_handler_set = 0;
    if (!fork_handler_set) fork_handler_set = pthread_atfork(NULL, NULL, start_over_in_child) == 0;
    pthread_mutex_init(&pool.busy, NULL);
    pthread_mutex_init(&pool.mutex, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.run = NULL;
    pool.parts = pool.remaining = 0;
    pool.generation = 0;
    pool.threads = 0;
    const int wanted = wanted_threads();
    for (int part = 0; part < wanted; ++part) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, worker, (void *)(intptr_t)part) != 0) break;
        pthread_detach(thread);
        pool.threads = part + 1;
    }
}

int gp_pool_threads(void)
{
    pthread_once(&pool_once, create_pool);
    return pool.threads > 0 ? pool.threads : 1;
}

void gp_pool_start(int parts, gp_pool_job run, void *ctx)
{
    const int threads = gp_pool_threads();
    parts = parts < 1 ? 1 : parts > threads ? threads : parts;
    pthread_mutex_lock(&pool.busy); /* released by gp_pool_finish */
    if (parts == 1 || pool.threads == 0) {
        for (int part = 0; part < parts; ++part) run(ctx, part);
        pthread_mutex_lock(&pool.mutex);
        pool.remaining = 0;
        pthread_mutex_unlock(&pool.mutex);
        return;
    }
    pthread_mutex_lock(&pool.mutex);
    pool.run = run;
    pool.ctx = ctx;
    pool.parts = parts;
    pool.remaining = parts;
    ++pool.generation;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mutex);
}

void gp_pool_finish(void)
{
    pthread_mutex_lock(&pool.mutex);
    while (pool.remaining != 0) pthread_cond_wait(&pool.done, &pool.mutex);
    pthread_mutex_unlock(&pool.mutex);
    pthread_mutex_unlock(&pool.busy);
}

void gp_pool_run(int parts, gp_pool_job run, void *ctx)
{
    gp_pool_start(parts, run, ctx);
    gp_pool_finish();
}
