/* The NumPy C API for the glue's files: module.c imports it (GP_IMPORT_NUMPY), the others share it. */
#ifndef GP_GLUE_NUMPY_API_H
#define GP_GLUE_NUMPY_API_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_23_API_VERSION
#define NPY_TARGET_VERSION NPY_1_23_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL gp_numpy_api
#ifndef GP_IMPORT_NUMPY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#endif
