/* How every layer below the Python glue reports a failure: a status, which the glue turns into a
 * Python exception (csrc/glue/errors.c), and a message. */
#ifndef GP_ERROR_H
#define GP_ERROR_H

#include <stdio.h>

typedef enum {
    GP_OK = 0,
    GP_ERR_NOMEM,   /* out of device or host memory: MemoryError */
    GP_ERR_INVALID, /* a request the backend does not support: ValueError */
    GP_ERR_DEVICE   /* any other CUDA failure: RuntimeError */
} gp_status;

typedef struct {
    gp_status status;
    char message[512];
} gp_error;

/* Fills err and returns -1, the failure value of every backend function. */
static inline int gp_fail(gp_error *err, gp_status status, const char *message)
{
    err->status = status;
    snprintf(err->message, sizeof err->message, "%s", message);
    return -1;
}

#endif
