/* gpuprims._core: registers the glue's functions and types, and the dtype table (DTYPES).
 *
 * The glue's files, each named for what it holds: calls.c (one entry per primitive: arguments in,
 * plan, run), arguments.c (NumPy argument normalisation), devices.c (device queries), device_memory.c
 * (Buffer, DLPack, streams), pinned_memory.c (page-locked host memory), cpu_settings.c (the CPU
 * backend's threads and instruction set), errors.c (backend errors as exceptions). */
#define GP_IMPORT_NUMPY
#include "glue/numpy_api.h"

#include "contract/gp_dtype.h"
#include "glue/arguments.h"
#include "glue/calls.h"
#include "glue/cpu_settings.h"
#include "glue/device_memory.h"
#include "glue/devices.h"
#include "glue/pinned_memory.h"

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "gpuprims._core", "gpuprims' compiled core (internal).", -1, NULL, NULL, NULL, NULL, NULL,
};

/* The NumPy names of the gp_dtype values, in enum order. */
static PyObject *dtype_names(void)
{
    static const char *const names[GP_NUM_DTYPES] = {
#define GP_DTYPE_NAME(NAME, numpy_name, kind, size, host_type, device_type) numpy_name,
        GP_DTYPES(GP_DTYPE_NAME)
#undef GP_DTYPE_NAME
    };
    PyObject *tuple = PyTuple_New(GP_NUM_DTYPES);
    for (int t = 0; tuple != NULL && t < GP_NUM_DTYPES; ++t) {
        PyObject *name = PyUnicode_FromString(names[t]);
        if (name == NULL) Py_CLEAR(tuple);
        else PyTuple_SET_ITEM(tuple, t, name);
    }
    return tuple;
}

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    PyTypeObject *types[] = {&gp_buffer_type, &gp_pinned_buffer_type, &gp_dlpack_holder_type};
    const char *type_names[] = {"Buffer", "PinnedBuffer", NULL};
    PyMethodDef *tables[] = {gp_call_methods,          gp_argument_methods,      gp_device_methods,
                             gp_device_memory_methods, gp_pinned_memory_methods, gp_cpu_settings_methods};
    for (size_t t = 0; t < sizeof types / sizeof *types; ++t)
        if (PyType_Ready(types[t]) < 0) return NULL;
    PyObject *module = PyModule_Create(&core_module);
    if (module == NULL) return NULL;
    for (size_t t = 0; t < sizeof tables / sizeof *tables; ++t)
        if (PyModule_AddFunctions(module, tables[t]) < 0) goto fail;
    for (size_t t = 0; type_names[t] != NULL; ++t) {
        Py_INCREF(types[t]);
        if (PyModule_AddObject(module, type_names[t], (PyObject *)types[t]) < 0) { /* steals only on success */
            Py_DECREF(types[t]);
            goto fail;
        }
    }
    PyObject *dtypes = dtype_names();
    if (dtypes == NULL || PyModule_AddObject(module, "DTYPES", dtypes) < 0) {
        Py_XDECREF(dtypes);
        goto fail;
    }
    return module;
fail:
    Py_DECREF(module);
    return NULL;
}
