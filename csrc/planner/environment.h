/* The GPUPRIMS_ settings a call reads from the process environment.
 *
 * gp_environment_now is read once per call, by the glue, and handed to the planner.  It does not
 * scan the environment each time (a GPU host's 88 variables cost ~0.2 us a scan, a third of a
 * 64-element call): it compares the environment's entry pointers with those of its last scan and
 * scans again only when they differ.  setenv, putenv and unsetenv (and Python's os.environ, which
 * calls them) always change an entry pointer or the count; a string that was passed to putenv and
 * then edited in place is not noticed. */
#ifndef GP_ENVIRONMENT_H
#define GP_ENVIRONMENT_H

/* Each setting's text, or NULL when unset or empty; the first definition counts, as for getenv.
 * The strings are the environment's own: valid until that variable is set again. */
typedef struct {
    const char *device;             /* GPUPRIMS_DEVICE: the default device (Python reads it) */
    const char *costs;              /* GPUPRIMS_COSTS: the cost constants' overrides (costs.c) */
    const char *max_device_bytes;   /* GPUPRIMS_MAX_DEVICE_BYTES: device memory a call may use */
    const char *stream_min_bytes;   /* GPUPRIMS_STREAM_MIN_BYTES: inputs from this size stream */
    const char *stream_chunk_bytes; /* GPUPRIMS_STREAM_CHUNK_BYTES: input bytes per tile */
    const char *stream_fail_tile;   /* GPUPRIMS_STREAM_FAIL_TILE: test hook, a streamed call fails there */
} gp_environment;

/* The settings as the environment holds them now.  Thread-safe. */
gp_environment gp_environment_now(void);

#endif
