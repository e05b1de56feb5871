/* The host thread pool (see thread_pool.h).
 *
 * Each worker has a slot: the number of the job it is to run a part of (its ticket) and the part.
 * The caller hands out parts by writing tickets; a worker spins on its ticket for SPIN_NS after its
 * last part, then sleeps on its slot's condition variable.  Sleeping is announced in an atomic flag
 * that the waker reads after writing the ticket (and the sleeper writes before reading the ticket):
 * with sequentially consistent atomics one of the two sees the other, so no wake-up is lost, and a
 * spinning worker is woken without a lock or a system call.  The caller waits for the job's
 * `remaining` count the same way.
 *
 * A worker joins its job through the gate (the job's number, a closed bit and the count of workers
 * that joined, in one atomic word) before it reads anything of it.  gp_pool_for closes the gate once
 * its tasks are all claimed: a worker that was not scheduled in time (a busy machine) then skips the
 * job instead of holding the caller up, and the caller waits only for those that joined. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "parallel/thread_pool.h"

/* How long a worker (or a waiting caller) spins before it sleeps. */
static const int64_t SPIN_NS = 100000;

typedef struct {
    pthread_cond_t wake;
    atomic_ulong ticket; /* the job this worker runs a part of next */
    atomic_int sleeping;
    int part;
} worker_slot;

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static struct {
    pthread_mutex_t busy;  /* held from start to finish: one job at a time */
    pthread_mutex_t mutex; /* guards sleeping and waking */
    pthread_cond_t done;
    int threads;           /* the pool's size: the most parts of a job */
    int workers;           /* workers created */
    unsigned long job;     /* the current job's number (under busy) */
    gp_pool_job run;
    void *ctx;
    atomic_ullong gate;   /* job << 16 | CLOSED | workers joined */
    atomic_int remaining; /* workers handed the current job that have not finished (or skipped) it */
    atomic_int caller_sleeping;
    worker_slot slot[GP_POOL_MAX_THREADS];
} pool;

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Spins until *value != old (returning it) or SPIN_NS have passed (returning old). */
static unsigned long spin_while_ulong(atomic_ulong *value, unsigned long old)
{
    int64_t deadline = 0;
    for (unsigned spins = 1;; ++spins) {
        const unsigned long now = atomic_load_explicit(value, memory_order_acquire);
        if (now != old) return now;
        cpu_relax();
        if (spins % 256 == 0) {
            const int64_t t = now_ns();
            if (deadline == 0) deadline = t + SPIN_NS;
            else if (t > deadline) return old;
        }
    }
}

static unsigned long wait_for_ticket(worker_slot *slot, unsigned long seen)
{
    unsigned long ticket = spin_while_ulong(&slot->ticket, seen);
    if (ticket != seen) return ticket;
    pthread_mutex_lock(&pool.mutex);
    atomic_store(&slot->sleeping, 1);
    while ((ticket = atomic_load(&slot->ticket)) == seen) pthread_cond_wait(&slot->wake, &pool.mutex);
    atomic_store(&slot->sleeping, 0);
    pthread_mutex_unlock(&pool.mutex);
    return ticket;
}

enum { CLOSED = 0x8000 };

/* Joins job `ticket` unless its gate is closed (or it is over and another job began). */
static int join(unsigned long ticket)
{
    unsigned long long gate = atomic_load(&pool.gate);
    for (;;) {
        if ((gate >> 16) != (unsigned long long)ticket || (gate & CLOSED)) return 0;
        if (atomic_compare_exchange_weak(&pool.gate, &gate, gate + 1)) return 1;
    }
}

static void *worker(void *arg)
{
    worker_slot *slot = arg;
    unsigned long seen = 0;
    for (;;) {
        seen = wait_for_ticket(slot, seen);
        if (!join(seen)) continue; /* the caller counted this worker out */
        pool.run(pool.ctx, slot->part); /* the job's fields stay put until every part is done */
        if (atomic_fetch_sub(&pool.remaining, 1) == 1 && atomic_load(&pool.caller_sleeping)) {
            pthread_mutex_lock(&pool.mutex);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.mutex);
        }
    }
    return NULL;
}

int gp_pool_usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int count = CPU_COUNT(&set);
        if (count > 0) return count;
    }
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (int)cores : 1;
}

static int clamp_threads(long threads)
{
    return threads < 1 ? 1 : threads > GP_POOL_MAX_THREADS ? GP_POOL_MAX_THREADS : (int)threads;
}

/* The usable cores, or GPUPRIMS_NUM_THREADS when it is a number from 1 to GP_POOL_MAX_THREADS. */
static int default_threads(void)
{
    const char *setting = getenv("GPUPRIMS_NUM_THREADS");
    if (setting != NULL && *setting != '\0') {
        char *end = NULL;
        const long wanted = strtol(setting, &end, 10);
        if (*end == '\0' && wanted >= 1 && wanted <= GP_POOL_MAX_THREADS) return (int)wanted;
    }
    return clamp_threads(gp_pool_usable_cores());
}

static int size_set = 0; /* gp_pool_set_threads was called: a forked child keeps the size */

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
    pthread_cond_init(&pool.done, NULL);
    for (int w = 0; w < GP_POOL_MAX_THREADS; ++w) {
        pthread_cond_init(&pool.slot[w].wake, NULL);
        atomic_init(&pool.slot[w].ticket, 0);
        atomic_init(&pool.slot[w].sleeping, 0);
    }
    atomic_init(&pool.remaining, 0);
    atomic_init(&pool.gate, 0);
    atomic_init(&pool.caller_sleeping, 0);
    pool.workers = 0;
    pool.job = 0;
    if (!size_set) pool.threads = default_threads();
}

/* Creates workers up to `wanted` (under busy); returns how many there are. */
static int ensure_workers(int wanted)
{
    while (pool.workers < wanted) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, worker, &pool.slot[pool.workers]) != 0) break;
        pthread_detach(thread);
        ++pool.workers;
    }
    return pool.workers < wanted ? pool.workers : wanted;
}

int gp_pool_threads(void)
{
    pthread_once(&pool_once, create_pool);
    return pool.threads;
}

void gp_pool_set_threads(int threads)
{
    pthread_once(&pool_once, create_pool);
    pthread_mutex_lock(&pool.busy);
    pool.threads = clamp_threads(threads);
    size_set = 1;
    pthread_mutex_unlock(&pool.busy);
}

/* Hands part `part` of the current job to worker w. */
static void hand_out(int w, int part)
{
    worker_slot *slot = &pool.slot[w];
    slot->part = part;
    atomic_store(&slot->ticket, pool.job);
    if (atomic_load(&slot->sleeping)) {
        pthread_mutex_lock(&pool.mutex);
        pthread_cond_signal(&slot->wake);
        pthread_mutex_unlock(&pool.mutex);
    }
}

/* Starts the job on workers 0 .. count-1 running parts first .. first+count-1 (under busy). */
static void hand_out_job(gp_pool_job run, void *ctx, int first, int count)
{
    pool.run = run;
    pool.ctx = ctx;
    ++pool.job;
    atomic_store(&pool.gate, (unsigned long long)pool.job << 16);
    atomic_store(&pool.remaining, count);
    for (int w = 0; w < count; ++w) hand_out(w, first + w);
}

/* Waits until the workers have finished their parts of the current job. */
static void wait_for_workers(void)
{
    int64_t deadline = 0;
    for (unsigned spins = 1; atomic_load_explicit(&pool.remaining, memory_order_acquire) != 0; ++spins) {
        cpu_relax();
        if (spins % 256 != 0) continue;
        const int64_t t = now_ns();
        if (deadline == 0) deadline = t + SPIN_NS;
        else if (t > deadline) break;
    }
    if (atomic_load(&pool.remaining) == 0) return;
    pthread_mutex_lock(&pool.mutex);
    atomic_store(&pool.caller_sleeping, 1);
    while (atomic_load(&pool.remaining) != 0) pthread_cond_wait(&pool.done, &pool.mutex);
    atomic_store(&pool.caller_sleeping, 0);
    pthread_mutex_unlock(&pool.mutex);
}

static int clamp_parts(int parts)
{
    const int threads = gp_pool_threads();
    return parts < 1 ? 1 : parts > threads ? threads : parts;
}

void gp_pool_start(int parts, gp_pool_job run, void *ctx)
{
    parts = clamp_parts(parts);
    pthread_mutex_lock(&pool.busy); /* released by gp_pool_finish */
    const int workers = parts == 1 ? 0 : ensure_workers(parts);
    hand_out_job(run, ctx, 0, workers);
    for (int part = workers; part < parts; ++part) run(ctx, part); /* one part, or no workers to be had */
}

void gp_pool_finish(void)
{
    wait_for_workers();
    pthread_mutex_unlock(&pool.busy);
}

void gp_pool_run(int parts, gp_pool_job run, void *ctx)
{
    parts = clamp_parts(parts);
    if (parts == 1) { /* no need to wait for another job to finish */
        run(ctx, 0);
        return;
    }
    pthread_mutex_lock(&pool.busy);
    const int workers = ensure_workers(parts - 1);
    hand_out_job(run, ctx, 1, workers);
    run(ctx, 0);
    for (int part = workers + 1; part < parts; ++part) run(ctx, part); /* workers that could not be created */
    wait_for_workers();
    pthread_mutex_unlock(&pool.busy);
}

/* ---- gp_pool_for ---------------------------------------------------------------------------------- */

/* Each part owns a contiguous run of the grains, the same run for every job of the same size, so
 * that the passes of a two-pass scan, and calls in a loop, find their data in the core that last
 * touched it; a part whose thread is late or slow is taken over, grain by grain, by those done
 * with their own.  A run's counter has a cache line of its own: its owner claims without
 * contention. */
typedef struct {
    _Alignas(64) atomic_llong next; /* the run's first grain not claimed yet */
    int64_t end;                    /* the grain after the run's last */
} grain_run;

typedef struct {
    int64_t tasks, grain;
    int parts;
    gp_pool_range run;
    void *ctx;
    grain_run *runs; /* one per part */
} for_job;

/* Claims and runs grains of run `owner` until none is left. */
static void run_grains_of(for_job *job, int owner)
{
    grain_run *own = &job->runs[owner];
    for (;;) {
        const int64_t grain = atomic_fetch_add(&own->next, 1);
        if (grain >= own->end) return;
        const int64_t first = grain * job->grain;
        job->run(job->ctx, first, job->tasks - first < job->grain ? job->tasks : first + job->grain);
    }
}

/* Part `part`'s own run, then what is left of the others', the last handed out first (the caller's
 * part 0, which starts first, then takes over from the workers that start last). */
static void run_grains(for_job *job, int part)
{
    for (int k = 0; k < job->parts; ++k) run_grains_of(job, (part + job->parts - k) % job->parts);
}

static void for_part(void *ctx, int part) { run_grains(ctx, part); }

void gp_pool_for(int parts, int64_t tasks, int64_t grain, gp_pool_range run, void *ctx)
{
    if (tasks <= 0) return;
    grain = grain < 1 ? 1 : grain;
    const int64_t grains = (tasks + grain - 1) / grain;
    parts = clamp_parts(parts < grains ? parts : (int)grains);
    if (parts == 1) {
        run(ctx, 0, tasks);
        return;
    }
    grain_run runs[GP_POOL_MAX_THREADS];
    for (int part = 0; part < parts; ++part) {
        atomic_init(&runs[part].next, grains * part / parts);
        runs[part].end = grains * (part + 1) / parts;
    }
    for_job job = {.tasks = tasks, .grain = grain, .parts = parts, .run = run, .ctx = ctx, .runs = runs};
    pthread_mutex_lock(&pool.busy);
    const int workers = ensure_workers(parts - 1);
    hand_out_job(for_part, &job, 1, workers);
    run_grains(&job, 0);
    /* Every task is claimed: close the gate, and count out the workers that did not join. */
    const unsigned long long gate = atomic_fetch_or(&pool.gate, CLOSED);
    const int absent = workers - (int)(gate & (CLOSED - 1));
    if (absent > 0) atomic_fetch_sub(&pool.remaining, absent);
    wait_for_workers();
    pthread_mutex_unlock(&pool.busy);
}
