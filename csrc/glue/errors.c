/* Backend errors as Python exceptions (errors.h). */
#include "glue/errors.h"

PyObject *gp_raise(const gp_error *err)
{
    PyObject *type = err->status == GP_ERR_NOMEM     ? PyExc_MemoryError
                     : err->status == GP_ERR_INVALID ? PyExc_ValueError
                                                     : PyExc_RuntimeError;
    PyErr_SetString(type, err->message);
    return NULL;
}

void gp_report_unraisable(const gp_error *err, PyObject *obj)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    gp_raise(err);
    PyErr_WriteUnraisable(obj);
    PyErr_Restore(type, value, traceback);
}

PyObject *gp_raise_no_cuda(void)
{
    PyErr_SetString(PyExc_RuntimeError, "gpuprims was built without CUDA support");
    return NULL;
}
