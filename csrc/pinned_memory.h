/* Page-locked host memory for gpuprims._core (pinned_memory.c), registered by module.c. */
#ifndef GP_PINNED_MEMORY_H
#define GP_PINNED_MEMORY_H

#include <Python.h>

extern PyTypeObject gp_pinned_buffer_type;

PyObject *gp_py_is_pinned(PyObject *self, PyObject *args);
/* A PinnedBuffer from gpuprims' cache of result blocks; *data is its memory. */
PyObject *gp_pinned_result_block(Py_ssize_t nbytes, void **data);

#endif
