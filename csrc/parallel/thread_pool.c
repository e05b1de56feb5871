/* The host thread pool (see thread_pool.h).
 *
 * The caller hands a job out in one store: the call word (the job's number, its first part and the
 * number of workers called) that every worker spins on, so that sixteen workers start as fast as
 * two.  Worker w runs part first + w when w < count.  A worker spins on the call word for SPIN_NS
 * after its last part, then sleeps on its slot's condition variable, counted in `sleepers`: the
 * caller reads that count after its store (and the sleeper writes it before reading the call
 * word), so that with sequentially consistent atomics one of the two sees the other, no wake-up is
 * lost, and spinning workers are called without a lock or a system call.
 *
 * Each worker reports on a cache line of its own, its slot's state: 2 * job when it takes up a job,
 * 2 * job + 1 when done with it.  The caller waits for those lines, never for a shared counter
 * that every worker would have to write in turn.
 *
 * gp_pool_for closes its job once its tasks are all claimed, by storing the job's number in
 * `closed`; then it waits only for the workers whose state shows they took the job up.  A worker
 * that takes a job up reads `closed` after writing its state (and the caller reads the states after
 * closing), so either the caller waits for it or it sees the job closed and skips it: a worker that
 * was not scheduled in time (a busy machine) never holds the caller up. */
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

/* The call word: job << CALL_JOB_SHIFT | CALL_FIRST_IS_1 when part 0 is the caller's | count. */
enum { CALL_COUNT_MASK = 0x1ff, CALL_FIRST_IS_1 = 0x200, CALL_JOB_SHIFT = 10 };
_Static_assert((int)GP_POOL_MAX_THREADS <= (int)CALL_COUNT_MASK, "the call word counts every worker");

typedef struct {
    _Alignas(64) atomic_ullong state; /* 2 * job when taken up, 2 * job + 1 when done */
    pthread_cond_t wake;              /* signalled under pool.mutex */
    int asleep;                       /* under pool.mutex */
} worker_slot;

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static struct {
    _Alignas(64) atomic_ullong call; /* what every worker spins on */
    _Alignas(64) atomic_ullong closed; /* the last job gp_pool_for closed: jobs up to it are over */
    _Alignas(64) pthread_mutex_t busy; /* held from start to finish: one job at a time */
    pthread_mutex_t mutex; /* guards sleeping and waking */
    pthread_cond_t done;
    atomic_int sleepers;
    atomic_int caller_sleeping;
    int threads;             /* the pool's size: the most parts of a job */
    int workers;             /* workers created */
    unsigned long long job;  /* the current job's number (under busy) */
    int called;              /* the workers called for it, 0 .. called - 1 */
    gp_pool_job run;
    void *ctx;
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

/* Counts spins and tells, every 256 of them, whether SPIN_NS have passed since the first check. */
typedef struct {
    unsigned spins;
    int64_t deadline;
} spin_clock;

static int spun_out(spin_clock *clock)
{
    cpu_relax();
    if (++clock->spins % 256 != 0) return 0;
    const int64_t t = now_ns();
    if (clock->deadline == 0) clock->deadline = t + SPIN_NS;
    return t > clock->deadline;
}

static int calls(unsigned long long call, int index) { return index < (int)(call & CALL_COUNT_MASK); }

/* Waits for a call after `seen` that calls worker `index`, and returns it. */
static unsigned long long wait_for_call(worker_slot *slot, int index, unsigned long long seen)
{
    spin_clock clock = {0, 0};
    do {
        const unsigned long long call = atomic_load_explicit(&pool.call, memory_order_acquire);
        if (call != seen) {
            if (calls(call, index)) return call;
            seen = call; /* a job too small to call this worker: it goes on spinning until its time is up */
        }
    } while (!spun_out(&clock));
    pthread_mutex_lock(&pool.mutex);
    slot->asleep = 1;
    atomic_fetch_add(&pool.sleepers, 1);
    unsigned long long call;
    while ((call = atomic_load(&pool.call)) == seen || !calls(call, index)) pthread_cond_wait(&slot->wake, &pool.mutex);
    atomic_fetch_sub(&pool.sleepers, 1);
    slot->asleep = 0;
    pthread_mutex_unlock(&pool.mutex);
    return call;
}

static void *worker(void *arg)
{
    worker_slot *slot = arg;
    const int index = (int)(slot - pool.slot);
    unsigned long long call = 0;
    for (;;) {
        call = wait_for_call(slot, index, call);
        const unsigned long long job = call >> CALL_JOB_SHIFT;
        atomic_store(&slot->state, 2 * job);
        /* Unless the job is over, the caller now waits for this worker, and the job's fields stay put. */
        if (atomic_load(&pool.closed) < job) pool.run(pool.ctx, index + (call & CALL_FIRST_IS_1 ? 1 : 0));
        atomic_store(&slot->state, 2 * job + 1);
        if (atomic_load(&pool.caller_sleeping)) {
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
        atomic_init(&pool.slot[w].state, 0);
        pool.slot[w].asleep = 0;
    }
    atomic_init(&pool.call, 0);
    atomic_init(&pool.closed, 0);
    atomic_init(&pool.sleepers, 0);
    atomic_init(&pool.caller_sleeping, 0);
    pool.workers = 0;
    pool.job = 0;
    pool.called = 0;
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

/* Calls workers 0 .. count-1 to run parts first .. first+count-1 (first is 0 or 1; under busy). */
static void call_workers(gp_pool_job run, void *ctx, int first, int count)
{
    pool.called = count;
    if (count == 0) return;
    pool.run = run;
    pool.ctx = ctx;
    ++pool.job;
    atomic_store(&pool.call, pool.job << CALL_JOB_SHIFT | (first ? CALL_FIRST_IS_1 : 0) | (unsigned long long)count);
    if (atomic_load(&pool.sleepers) == 0) return;
    pthread_mutex_lock(&pool.mutex);
    for (int w = 0; w < count; ++w)
        if (pool.slot[w].asleep) pthread_cond_signal(&pool.slot[w].wake);
    pthread_mutex_unlock(&pool.mutex);
}

/* How many of the workers in `who` have not finished the current job; *from skips those found done
 * before (a worker done stays done). */
static int unfinished(const int *who, int count, int *from)
{
    const unsigned long long done = 2 * pool.job + 1;
    while (*from < count && atomic_load_explicit(&pool.slot[who[*from]].state, memory_order_acquire) == done) ++*from;
    int left = 0;
    for (int k = *from; k < count; ++k) left += atomic_load(&pool.slot[who[k]].state) != done;
    return left;
}

/* Waits until the workers in `who` have finished the current job. */
static void wait_for(const int *who, int count)
{
    int from = 0;
    spin_clock clock = {0, 0};
    while (unfinished(who, count, &from) != 0)
        if (spun_out(&clock)) break;
    if (unfinished(who, count, &from) == 0) return;
    pthread_mutex_lock(&pool.mutex);
    atomic_store(&pool.caller_sleeping, 1);
    while (unfinished(who, count, &from) != 0) pthread_cond_wait(&pool.done, &pool.mutex);
    atomic_store(&pool.caller_sleeping, 0);
    pthread_mutex_unlock(&pool.mutex);
}

/* Waits until every worker called for the current job has finished it. */
static void wait_for_called(void)
{
    int who[GP_POOL_MAX_THREADS];
    for (int w = 0; w < pool.called; ++w) who[w] = w;
    wait_for(who, pool.called);
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
    call_workers(run, ctx, 0, workers);
    for (int part = workers; part < parts; ++part) run(ctx, part); /* one part, or no workers to be had */
}

void gp_pool_finish(void)
{
    wait_for_called();
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
    call_workers(run, ctx, 1, workers);
    run(ctx, 0);
    for (int part = workers + 1; part < parts; ++part) run(ctx, part); /* workers that could not be created */
    wait_for_called();
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

static grain_run runs_of_job[GP_POOL_MAX_THREADS]; /* the current job's (under pool.busy) */

typedef struct {
    int64_t tasks, grain;
    int parts;
    gp_pool_range run;
    void *ctx;
    grain_run *runs; /* one per part */
} for_job;

/* Claims and runs grains of run `owner` until none is left.  It looks before it claims: a claim on
 * a used-up run would still take the run's cache line away from every thread reading it, and the
 * threads done with their own runs all look at every other. */
static void run_grains_of(for_job *job, int owner)
{
    grain_run *own = &job->runs[owner];
    while (atomic_load_explicit(&own->next, memory_order_relaxed) < own->end) {
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
    pthread_mutex_lock(&pool.busy);
    for (int part = 0; part < parts; ++part) {
        atomic_store_explicit(&runs_of_job[part].next, grains * part / parts, memory_order_relaxed);
        runs_of_job[part].end = grains * (part + 1) / parts;
    }
    for_job job = {.tasks = tasks, .grain = grain, .parts = parts, .run = run, .ctx = ctx, .runs = runs_of_job};
    const int workers = ensure_workers(parts - 1);
    call_workers(for_part, &job, 1, workers);
    run_grains(&job, 0);
    /* Every task is claimed: close the job, and wait only for the workers that took it up. */
    atomic_store(&pool.closed, pool.job);
    int joined[GP_POOL_MAX_THREADS];
    int count = 0;
    for (int w = 0; w < workers; ++w)
        if (atomic_load(&pool.slot[w].state) >= 2 * pool.job) joined[count++] = w;
    wait_for(joined, count);
    pthread_mutex_unlock(&pool.busy);
}
