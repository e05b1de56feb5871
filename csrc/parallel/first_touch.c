/* gp_first_touch (first_touch.h). */
#include <stdint.h>

#include "parallel/first_touch.h"
#include "parallel/thread_pool.h"

enum {
    SPAN_BYTES = 2 * 1024 * 1024, /* an x86-64 or aarch64 (4 KiB granule) transparent huge page */
    PAGE_BYTES = 4096             /* the smallest base page: larger ones are only touched more often */
};

typedef struct {
    char *first, *end; /* the buffer */
    uintptr_t base;    /* the start of its first span, aligned to SPAN_BYTES */
} touch_job;

/* Spans [first_span, last_span) of the job's buffer, clipped to it. */
static void touch_spans(void *ctx, int64_t first_span, int64_t last_span)
{
    const touch_job *job = ctx;
    const uintptr_t from = job->base + (uintptr_t)first_span * SPAN_BYTES;
    const uintptr_t to = job->base + (uintptr_t)last_span * SPAN_BYTES;
    char *page = from > (uintptr_t)job->first ? (char *)from : job->first;
    char *const end = to < (uintptr_t)job->end ? (char *)to : job->end;
    if (page < end) *(volatile char *)page = 0;
    /* from the next page boundary on: one write a page */
    page += PAGE_BYTES - (uintptr_t)page % PAGE_BYTES;
    for (; page < end; page += PAGE_BYTES) *(volatile char *)page = 0;
}

void gp_first_touch(void *data, size_t bytes)
{
    const int threads = gp_pool_threads();
    if (threads < 2 || bytes < SPAN_BYTES) return;
    touch_job job = {data, (char *)data + bytes, (uintptr_t)data & ~(uintptr_t)(SPAN_BYTES - 1)};
    const int64_t spans = (int64_t)(((uintptr_t)job.end - job.base + SPAN_BYTES - 1) / SPAN_BYTES);
    const int parts = spans < threads ? (int)spans : threads;
    gp_pool_for(parts, spans, (spans + parts - 1) / parts, touch_spans, &job);
}
