/* Backend errors as Python exceptions (errors.c): a leaf of the glue, used by every file that calls
 * a backend. */
#ifndef GP_GLUE_ERRORS_H
#define GP_GLUE_ERRORS_H

#include <Python.h>

#include "contract/gp_error.h"

/* Sets the exception for err (GP_ERR_NOMEM MemoryError, GP_ERR_INVALID ValueError, else
 * RuntimeError) and returns NULL. */
PyObject *gp_raise(const gp_error *err);
/* Reports err from a destructor of `obj`, which cannot raise (sys.unraisablehook), keeping any
 * exception that is being raised meanwhile. */
void gp_report_unraisable(const gp_error *err, PyObject *obj);
/* RuntimeError for CUDA work asked of a CPU-only build; returns NULL. */
PyObject *gp_raise_no_cuda(void);

#endif
