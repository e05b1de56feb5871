/* NumPy argument normalisation (arguments.h). */
#include "glue/arguments.h"

#include <limits.h>
#include <stdarg.h>
#include "glue/pinned_memory.h"

int gp_parse_arguments(const char *entry, PyObject *const *args, Py_ssize_t nargs, const char *format, ...)
{
    Py_ssize_t required = -1, most = 0;
    for (const char *f = format; *f != '\0'; ++f) {
        if (*f == '|') required = most;
        else ++most;
    }
    if (required < 0) required = most;
    if (nargs < required || nargs > most) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd to %zd positional arguments (%zd given)", entry, required, most,
                     nargs);
        return -1;
    }
    va_list targets;
    va_start(targets, format);
    int status = 0;
    Py_ssize_t next = 0;
    for (const char *f = format; *f != '\0' && next < nargs && status == 0; ++f) {
        if (*f == '|') continue;
        PyObject *arg = args[next++];
        if (*f == 'O') {
            *va_arg(targets, PyObject **) = arg;
        } else if (*f == 'L') {
            const long long value = PyLong_AsLongLong(arg);
            if (value == -1 && PyErr_Occurred()) status = -1;
            else *va_arg(targets, long long *) = value;
        } else if (*f == 'd') {
            const double value = PyFloat_AsDouble(arg);
            if (value == -1.0 && PyErr_Occurred()) status = -1;
            else *va_arg(targets, double *) = value;
        } else if (*f == 'p') {
            const int truth = PyObject_IsTrue(arg);
            if (truth < 0) status = -1;
            else *va_arg(targets, int *) = truth;
        } else { /* 'i' */
            const long value = PyLong_AsLong(arg);
            if (value == -1 && PyErr_Occurred()) {
                status = -1;
            } else if (value < INT_MIN || value > INT_MAX) {
                PyErr_Format(PyExc_OverflowError, "%s(): argument %zd does not fit a C int", entry, next);
                status = -1;
            } else {
                *va_arg(targets, int *) = (int)value;
            }
        }
    }
    va_end(targets);
    return status;
}

int gp_dtype_of(PyArray_Descr *descr)
{
    static const struct {
        char kind;
        int size;
    } table[GP_NUM_DTYPES] = {
#define GP_DTYPE_KIND_SIZE(NAME, numpy_name, kind, size, host_type, device_type) {kind, size},
        GP_DTYPES(GP_DTYPE_KIND_SIZE)
#undef GP_DTYPE_KIND_SIZE
    };
    const int size = (int)PyDataType_ELSIZE(descr);
    for (int t = 0; t < GP_NUM_DTYPES; ++t)
        if (table[t].kind == descr->kind && table[t].size == size) return t;
    return -1;
}

int gp_dtype_of_typenum(int typenum)
{
    PyArray_Descr *descr = PyArray_DescrFromType(typenum);
    if (descr == NULL) return -1;
    const int code = gp_dtype_of(descr);
    if (code < 0) PyErr_Format(PyExc_TypeError, "unsupported dtype %R", (PyObject *)descr);
    Py_DECREF(descr);
    return code;
}

PyArrayObject *gp_contiguous_input(PyObject *obj, gp_dtype *dtype)
{
    if (!PyArray_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "expected a numpy.ndarray");
        return NULL;
    }
    PyArrayObject *array = (PyArrayObject *)obj;
    const int code = gp_dtype_of(PyArray_DESCR(array));
    if (code < 0) {
        PyErr_Format(PyExc_TypeError, "unsupported dtype %R", (PyObject *)PyArray_DESCR(array));
        return NULL;
    }
    *dtype = (gp_dtype)code;
    if (PyArray_ISCARRAY_RO(array) && PyArray_ISNOTSWAPPED(array)) { /* the common case: no copy */
        Py_INCREF(array);
        return array;
    }
    PyArray_Descr *native = PyArray_DescrNewByteorder(PyArray_DESCR(array), NPY_NATIVE);
    if (native == NULL) return NULL;
    return (PyArrayObject *)PyArray_FromAny(obj, native, 0, 0, NPY_ARRAY_IN_ARRAY, NULL);
}

/* An int64 from a Python int, -1 with an exception set when it is not one. */
static int read_int64s(PyObject *tuple, int64_t *values, int count)
{
    for (int d = 0; d < count; ++d) {
        values[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(tuple, d));
        if (values[d] == -1 && PyErr_Occurred()) return -1;
    }
    return 0;
}

int gp_device_operand_of(PyObject *tuple, gp_device_operand *operand)
{
    PyObject *ptr, *shape, *strides;
    int typenum;
    if (!PyArg_ParseTuple(tuple, "OiO!O!", &ptr, &typenum, &PyTuple_Type, &shape, &PyTuple_Type, &strides)) return -1;
    const int code = gp_dtype_of_typenum(typenum);
    if (code < 0) return -1;
    operand->dtype = (gp_dtype)code;
    operand->ptr = PyLong_AsVoidPtr(ptr);
    if (operand->ptr == NULL && PyErr_Occurred()) return -1;
    operand->ndim = (int)PyTuple_GET_SIZE(shape);
    if (operand->ndim > GP_MAX_DIMS || PyTuple_GET_SIZE(strides) != operand->ndim) {
        PyErr_SetString(PyExc_ValueError, "device operand: shape and strides must match (at most 64 dimensions)");
        return -1;
    }
    return read_int64s(shape, operand->shape, operand->ndim) || read_int64s(strides, operand->strides, operand->ndim)
               ? -1
               : 0;
}

int gp_output_dims(PyObject *shape, int64_t count, int *ndim, npy_intp *dims)
{
    if (shape == Py_None) {
        *ndim = 1;
        dims[0] = (npy_intp)count;
        return 0;
    }
    *ndim = PyTuple_Check(shape) ? (int)PyTuple_GET_SIZE(shape) : -1;
    int64_t product = 1;
    for (int d = 0; d < *ndim && d < GP_MAX_DIMS; ++d) {
        dims[d] = (npy_intp)PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d));
        product *= dims[d] < 0 ? -1 : dims[d];
    }
    if (PyErr_Occurred() || *ndim < 0 || *ndim > GP_MAX_DIMS || product != count) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "the output shape does not hold the call's result");
        return -1;
    }
    return 0;
}

PyArrayObject *gp_new_output(PyArray_Descr *descr, int ndim, const npy_intp *dims, int pinned)
{
    npy_intp count = 1;
    for (int d = 0; d < ndim; ++d) count *= dims[d];
    void *data = NULL;
    PyObject *block = pinned ? gp_pinned_result_block((Py_ssize_t)(count * PyDataType_ELSIZE(descr)), &data) : NULL;
    if (block == NULL) {
        PyErr_Clear(); /* no pinned block: ordinary memory works as well, only slower to copy into */
        return (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim, (npy_intp *)dims, NULL, NULL, 0, NULL);
    }
    PyObject *array =
        PyArray_NewFromDescr(&PyArray_Type, descr, ndim, (npy_intp *)dims, NULL, data, NPY_ARRAY_CARRAY, NULL);
    if (array == NULL || PyArray_SetBaseObject((PyArrayObject *)array, block) < 0) { /* steals block */
        if (array == NULL) Py_DECREF(block);
        Py_XDECREF(array);
        return NULL;
    }
    return (PyArrayObject *)array;
}

int gp_copy_args_of(PyArrayObject *array, gp_copy_args *args)
{
    const int64_t size = PyArray_ITEMSIZE(array);
    args->ndim = PyArray_NDIM(array);
    args->elem_size = size;
    int aligned = (uintptr_t)PyArray_DATA(array) % (uintptr_t)size == 0;
    for (int d = 0; d < args->ndim; ++d) {
        const npy_intp stride = PyArray_STRIDE(array, d);
        args->shape[d] = PyArray_DIM(array, d);
        /* a dimension of length 0 or 1 is never stepped along, whatever its stride */
        args->strides[d] = args->shape[d] > 1 ? stride / size : 0;
        aligned = aligned && (args->shape[d] <= 1 || stride % size == 0);
    }
    return aligned ? 0 : -1;
}

PyDoc_STRVAR(array_from_object_doc,
             "array_from_object(obj, typenum) -> ndarray\n\n"
             "PyArray_FromObject(obj, typenum, 0, 0): NumPy's conversion without forced casts (arrays\n"
             "must cast safely), the one scipy.signal.convolve2d applies to its fillvalue.");

static PyObject *array_from_object(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *obj;
    int typenum;
    if (!PyArg_ParseTuple(args, "Oi", &obj, &typenum)) return NULL;
    return PyArray_FromObject(obj, typenum, 0, 0);
}

PyDoc_STRVAR(backend_result_doc,
             "backend_result(in_typenum, result_typenum) -> (out_typenum, cast_typenum or None)\n\n"
             "The accumulator rule (gp_backend_result): for a sum, prod or scan of an input dtype whose\n"
             "NumPy result dtype is result_typenum, the dtype the backends write and the dtype the\n"
             "input is cast to first (None: used as it is).");

static PyObject *backend_result(PyObject *self, PyObject *args)
{
    (void)self;
    int in_typenum, result_typenum;
    if (!PyArg_ParseTuple(args, "ii", &in_typenum, &result_typenum)) return NULL;
    const int in = gp_dtype_of_typenum(in_typenum), result = in < 0 ? -1 : gp_dtype_of_typenum(result_typenum);
    if (result < 0) return NULL;
    gp_dtype cast;
    const gp_dtype out = gp_backend_result((gp_dtype)in, (gp_dtype)result, &cast);
    static const int typenums[GP_NUM_DTYPES] = {
#define GP_DTYPE_TYPENUM(NAME, numpy_name, kind, size, host_type, device_type) NPY_##NAME,
        GP_DTYPES(GP_DTYPE_TYPENUM)
#undef GP_DTYPE_TYPENUM
    };
    if (cast == GP_NUM_DTYPES) return Py_BuildValue("(iO)", typenums[out], Py_None);
    return Py_BuildValue("(ii)", typenums[out], typenums[cast]);
}

PyMethodDef gp_argument_methods[] = {
    {"array_from_object", array_from_object, METH_VARARGS, array_from_object_doc},
    {"backend_result", backend_result, METH_VARARGS, backend_result_doc},
    {NULL, NULL, 0, NULL},
};
