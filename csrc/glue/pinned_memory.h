/* Page-locked host memory for gpuprims._core (pinned_memory.c): the PinnedBuffer type, result
 * blocks for streamed calls, and the pinned test. */
#ifndef GP_GLUE_PINNED_MEMORY_H
#define GP_GLUE_PINNED_MEMORY_H

#include <Python.h>

extern PyTypeObject gp_pinned_buffer_type;
extern PyMethodDef gp_pinned_memory_methods[];

/* A PinnedBuffer from gpuprims' cache of result blocks (a new reference); *data is its memory. */
PyObject *gp_pinned_result_block(Py_ssize_t nbytes, void **data);

#endif
