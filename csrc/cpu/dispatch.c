/* The CPU backend's choice of loops (kernels.h): the best table the CPU runs, picked once. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/kernels.h"

enum { BASELINE, AVX2, AVX512, NUM_TABLES };

static const char *const table_names[NUM_TABLES] = {"baseline", "avx2", "avx512"};
static gp_cpu_kernels tables[NUM_TABLES];
static int best = BASELINE; /* the best table this CPU runs */
static _Atomic(const gp_cpu_kernels *) current;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int table_named(const char *name)
{
    for (int t = 0; name != NULL && t < NUM_TABLES; ++t)
        if (strcmp(name, table_names[t]) == 0) return t;
    return -1;
}

static void fill_tables(void)
{
    gp_cpu_fill_kernels_baseline(&tables[BASELINE]);
#ifdef GP_CPU_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        gp_cpu_fill_kernels_avx2(&tables[AVX2]);
        best = AVX2;
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
            gp_cpu_fill_kernels_avx512(&tables[AVX512]);
            best = AVX512;
        }
    }
#endif
    /* GPUPRIMS_CPU_ISA lowers the choice (tests check the baseline path on any CPU with it). */
    const int wanted = table_named(getenv("GPUPRIMS_CPU_ISA"));
    atomic_store(&current, &tables[wanted >= 0 && wanted < best ? wanted : best]);
}

const gp_cpu_kernels *gp_cpu_kernels_get(void)
{
    pthread_once(&once, fill_tables);
    return atomic_load_explicit(&current, memory_order_relaxed);
}

int gp_cpu_kernels_select(const char *name)
{
    pthread_once(&once, fill_tables);
    const int wanted = table_named(name);
    if (wanted < 0 || wanted > best) return -1;
    atomic_store(&current, &tables[wanted]);
    return 0;
}
