/* The device-memory half of gpuprims._core (device_memory.c), registered by module.c. */
#ifndef GP_DEVICE_MEMORY_H
#define GP_DEVICE_MEMORY_H

#include <Python.h>
#include "gp_types.h"

extern PyTypeObject gp_buffer_type;
extern PyTypeObject gp_dlpack_holder_type;

PyObject *gp_dlpack_import(PyObject *self, PyObject *capsule);
PyObject *gp_dlpack_export(PyObject *self, PyObject *args);
PyObject *gp_py_work_stream(PyObject *self, PyObject *args);
PyObject *gp_py_order_streams(PyObject *self, PyObject *args);
PyObject *gp_py_synchronize(PyObject *self, PyObject *args);
PyObject *gp_py_memcpy(PyObject *self, PyObject *args);
PyObject *gp_py_pointer_device(PyObject *self, PyObject *ptr);
PyObject *gp_py_memory_info(PyObject *self, PyObject *args);
PyObject *gp_py_empty_cache(PyObject *self, PyObject *args);

/* module.c: the Python exception for a backend error (MemoryError, ValueError, RuntimeError). */
PyObject *gp_raise_backend_error(const gp_error *err);
/* module.c: RuntimeError for a CPU-only build asked for CUDA work. */
PyObject *gp_raise_no_cuda(void);

#endif
