/* gpuprims._core: the CPython + NumPy glue.
 *
 * The Python layer (gpuprims/_api.py) decides the semantics (axes, result dtypes, empty arrays);
 * this module takes an array and a (outer, n, inner) description, makes the input C-contiguous,
 * aligned and native-endian, allocates the output, and runs one backend entry point with the GIL
 * released.  Device index -1 is the CPU backend. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_23_API_VERSION
#define NPY_TARGET_VERSION NPY_1_23_API_VERSION
#include <numpy/arrayobject.h>

#include "copy_layout.h"
#include "cpu_backend.h"
#include "device_memory.h"
#include "pinned_memory.h"
#ifndef GPUPRIMS_NO_CUDA
#include "gpuprims_cuda.h"
#endif

#ifndef GPUPRIMS_CUDA_ARCHS
#define GPUPRIMS_CUDA_ARCHS ""
#endif

/* NumPy dtype -> gp_dtype by kind and size (so 'l' and 'q' both map to int64); -1 if unsupported. */
static int gp_dtype_from_descr(PyArray_Descr *descr)
{
    const int size = (int)PyDataType_ELSIZE(descr);
    switch (descr->kind) {
    case 'b': return size == 1 ? GP_BOOL : -1;
    case 'i': return size == 1 ? GP_INT8 : size == 2 ? GP_INT16 : size == 4 ? GP_INT32 : size == 8 ? GP_INT64 : -1;
    case 'u': return size == 1 ? GP_UINT8 : size == 2 ? GP_UINT16 : size == 4 ? GP_UINT32 : size == 8 ? GP_UINT64 : -1;
    case 'f': return size == 2 ? GP_FLOAT16 : size == 4 ? GP_FLOAT32 : size == 8 ? GP_FLOAT64 : -1;
    default: return -1;
    }
}

PyObject *gp_raise_backend_error(const gp_error *err)
{
    PyObject *type = err->status == GP_ERR_NOMEM     ? PyExc_MemoryError
                     : err->status == GP_ERR_INVALID ? PyExc_ValueError
                                                     : PyExc_RuntimeError;
    PyErr_SetString(type, err->message);
    return NULL;
}

/* A C-contiguous, aligned, native-endian array of `obj`'s dtype with outer*n*inner elements. */
static PyArrayObject *contiguous_input(PyObject *obj, int64_t outer, int64_t n, int64_t inner,
                                       gp_dtype *dtype)
{
    if (!PyArray_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "expected a numpy.ndarray");
        return NULL;
    }
    PyArray_Descr *descr = PyArray_DESCR((PyArrayObject *)obj);
    int code = gp_dtype_from_descr(descr);
    if (code < 0) {
        PyErr_Format(PyExc_TypeError, "unsupported dtype %R", (PyObject *)descr);
        return NULL;
    }
    *dtype = (gp_dtype)code;
    PyArray_Descr *native = PyArray_DescrNewByteorder(descr, NPY_NATIVE);
    if (native == NULL) return NULL;
    PyArrayObject *array = (PyArrayObject *)PyArray_FromAny(obj, native, 0, 0, NPY_ARRAY_IN_ARRAY, NULL);
    if (array == NULL) return NULL;
    if (outer < 0 || n < 0 || inner < 0 || PyArray_SIZE(array) != outer * n * inner) {
        Py_DECREF(array);
        PyErr_SetString(PyExc_ValueError, "array size does not match (outer, n, inner)");
        return NULL;
    }
    return array;
}

/* A C-contiguous array of descr (a reference stolen) and dims; with `pinned`, in a block from
 * gpuprims' cache of page-locked result blocks (the copy engine writes streamed results straight
 * into it), or in ordinary memory where pinning fails. */
static PyArrayObject *new_array(PyArray_Descr *descr, int ndim, npy_intp *dims, int pinned)
{
    npy_intp count = 1;
    for (int d = 0; d < ndim; ++d) count *= dims[d];
    void *data = NULL;
    PyObject *block = pinned ? gp_pinned_result_block((Py_ssize_t)(count * PyDataType_ELSIZE(descr)), &data) : NULL;
    if (block == NULL) {
        PyErr_Clear();
        return (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, ndim, dims, NULL, NULL, 0, NULL);
    }
    PyObject *array = PyArray_NewFromDescr(&PyArray_Type, descr, ndim, dims, NULL, data, NPY_ARRAY_CARRAY, NULL);
    if (array == NULL || PyArray_SetBaseObject((PyArrayObject *)array, block) < 0) { /* steals block */
        Py_XDECREF(array);
        if (array == NULL) Py_DECREF(block);
        return NULL;
    }
    return (PyArrayObject *)array;
}

/* A 1-D output of count elements of typenum (pinned: see new_array). */
static PyArrayObject *new_output(int typenum, int64_t count, gp_dtype *dtype, int pinned)
{
    PyArray_Descr *descr = PyArray_DescrFromType(typenum);
    if (descr == NULL) return NULL;
    int code = gp_dtype_from_descr(descr);
    if (code < 0) {
        PyErr_Format(PyExc_TypeError, "unsupported result dtype %R", (PyObject *)descr);
        Py_DECREF(descr);
        return NULL;
    }
    *dtype = (gp_dtype)code;
    npy_intp dims[1] = {(npy_intp)count};
    return new_array(descr, 1, dims, pinned);
}

/* Whether a host call of `op` on `device` gets a pinned result (see gp_cuda_pinned_result_wanted);
 * op < 0: a call that never streams. */
static int result_pinned(int device, int op, size_t in_bytes, size_t out_bytes, int64_t count)
{
#ifdef GPUPRIMS_NO_CUDA
    (void)device, (void)op, (void)in_bytes, (void)out_bytes, (void)count;
    return 0;
#else
    return device >= 0 && op >= 0 && gp_cuda_pinned_result_wanted((gp_streamed_op)op, in_bytes, out_bytes, count);
#endif
}

static int no_cuda(gp_error *err)
{
    err->status = GP_ERR_INVALID;
    snprintf(err->message, sizeof err->message, "gpuprims was built without CUDA support");
    return -1;
}

/* What a timing entry point measures (bench.py): one primitive's device work on data uploaded
 * once, or a copy of nbytes (from the host address `host` when not NULL, else device to device). */
typedef enum { TIMED_REDUCE, TIMED_SCAN, TIMED_COPY_STRIDED, TIMED_CORRELATE, TIMED_MEMCPY } timed_kind;
typedef struct {
    timed_kind kind;
    const void *desc; /* the kind's gp_*_desc */
    const void *host;
    size_t nbytes;
} timed_work;

/* The milliseconds of `repeats` runs of `work` on `device`, timed with CUDA events with the GIL
 * released, as a list; NULL with an exception on failure. */
static PyObject *timed_runs(int device, const timed_work *work, int repeats)
{
    gp_error err = {GP_OK, ""};
#ifdef GPUPRIMS_NO_CUDA
    (void)device, (void)work, (void)repeats;
    no_cuda(&err);
    return gp_raise_backend_error(&err);
#else
    float *ms = PyMem_Calloc((size_t)repeats, sizeof(float));
    if (ms == NULL) return PyErr_NoMemory();
    int status = -1;
    Py_BEGIN_ALLOW_THREADS
    switch (work->kind) {
    case TIMED_REDUCE: status = gp_cuda_time_reduce(device, work->desc, repeats, ms, &err); break;
    case TIMED_SCAN: status = gp_cuda_time_scan(device, work->desc, repeats, ms, &err); break;
    case TIMED_COPY_STRIDED: status = gp_cuda_time_copy_strided(device, work->desc, repeats, ms, &err); break;
    case TIMED_CORRELATE: status = gp_cuda_time_correlate(device, work->desc, repeats, ms, &err); break;
    case TIMED_MEMCPY:
        status = work->host ? gp_cuda_time_host_to_device(device, work->host, work->nbytes, repeats, ms, &err)
                            : gp_cuda_time_memcpy(device, work->nbytes, repeats, ms, &err);
        break;
    }
    Py_END_ALLOW_THREADS
    PyObject *result = status ? gp_raise_backend_error(&err) : PyList_New(repeats);
    for (int r = 0; status == 0 && result != NULL && r < repeats; ++r)
        PyList_SET_ITEM(result, r, PyFloat_FromDouble(ms[r]));
    PyMem_Free(ms);
    return result;
#endif
}

PyObject *gp_raise_no_cuda(void)
{
    gp_error err;
    no_cuda(&err);
    return gp_raise_backend_error(&err);
}

/* The gp_dtype of a NumPy type number, or -1 with TypeError set. */
static int gp_dtype_from_typenum(int typenum)
{
    PyArray_Descr *descr = PyArray_DescrFromType(typenum);
    if (descr == NULL) return -1;
    int code = gp_dtype_from_descr(descr);
    if (code < 0) PyErr_Format(PyExc_TypeError, "unsupported dtype %R", (PyObject *)descr);
    Py_DECREF(descr);
    return code;
}

static int run_reduce(int device, const gp_reduce_desc *desc, gp_error *err)
{
    if (device < 0) return gp_cpu_reduce(desc, err);
#ifdef GPUPRIMS_NO_CUDA
    return no_cuda(err);
#else
    return gp_cuda_reduce(device, desc, err);
#endif
}

static int run_scan(int device, const gp_scan_desc *desc, gp_error *err)
{
    if (device < 0) return gp_cpu_scan(desc, err);
#ifdef GPUPRIMS_NO_CUDA
    return no_cuda(err);
#else
    return gp_cuda_scan(device, desc, err);
#endif
}

/* Parsed arguments shared by reduce and scan, and by their timing variants. */
typedef struct {
    PyArrayObject *in, *out;
    gp_dtype in_dtype, out_dtype;
    int64_t outer, n, inner;
} prepared_call;

/* Prepares a reduce or scan (`op`, a gp_streamed_op) of `array` on `device`; op < 0 for a call
 * that never streams (the kernel timings).  A streamed call's result is pinned (see new_output). */
static int prepare(PyObject *array, int out_typenum, int64_t outer, int64_t n, int64_t inner,
                   int64_t out_count, int device, int op, prepared_call *call)
{
    call->in = contiguous_input(array, outer, n, inner, &call->in_dtype);
    if (call->in == NULL) return -1;
    PyArray_Descr *out_descr = PyArray_DescrFromType(out_typenum);
    if (out_descr == NULL) {
        Py_DECREF(call->in);
        return -1;
    }
    const int pinned = result_pinned(device, op, (size_t)PyArray_NBYTES(call->in),
                                     (size_t)(out_count * PyDataType_ELSIZE(out_descr)), outer * n * inner);
    Py_DECREF(out_descr);
    call->out = new_output(out_typenum, out_count, &call->out_dtype, pinned);
    if (call->out == NULL) {
        Py_DECREF(call->in);
        return -1;
    }
    call->outer = outer;
    call->n = n;
    call->inner = inner;
    return 0;
}

/* Releases the call's input; returns its output, or NULL (releasing it too) on failure. */
static PyObject *finish_call(prepared_call *call, int status)
{
    Py_DECREF(call->in);
    if (status) {
        Py_DECREF(call->out);
        return NULL;
    }
    return (PyObject *)call->out;
}

static int reduce_desc_from(const prepared_call *call, int op, gp_reduce_desc *desc)
{
    *desc = (gp_reduce_desc){(gp_op)op, call->in_dtype, call->out_dtype, call->outer, call->n,
                             call->inner, PyArray_DATA(call->in), PyArray_DATA(call->out)};
    if (op < 0 || op >= GP_NUM_OPS || !gp_reduce_supported(desc->op, desc->in_dtype, desc->out_dtype)) {
        PyErr_SetString(PyExc_ValueError, "unsupported reduction or dtype pair");
        return -1;
    }
    return 0;
}

static int scan_desc_from(const prepared_call *call, int exclusive, gp_scan_desc *desc)
{
    *desc = (gp_scan_desc){call->in_dtype, call->out_dtype, call->outer, call->n, call->inner,
                           exclusive, PyArray_DATA(call->in), PyArray_DATA(call->out)};
    if (!gp_accumulate_supported(desc->in_dtype, desc->out_dtype)) {
        PyErr_SetString(PyExc_ValueError, "unsupported scan dtype pair");
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(reduce_doc, "reduce(array, op, out_typenum, outer, n, inner, device) -> 1-D array\n\n"
                         "Reduce along n of the (outer, n, inner) view; device -1 is the CPU.");

static PyObject *core_reduce(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *array;
    int op, out_typenum, device;
    long long outer, n, inner;
    if (!PyArg_ParseTuple(args, "OiiLLLi", &array, &op, &out_typenum, &outer, &n, &inner, &device))
        return NULL;
    prepared_call call;
    if (prepare(array, out_typenum, outer, n, inner, outer * inner, device, GP_STREAMED_REDUCE, &call))
        return NULL;
    gp_reduce_desc desc;
    gp_error err = {GP_OK, ""};
    int status = reduce_desc_from(&call, op, &desc);
    if (status == 0 && outer * n * inner > 0) {
        Py_BEGIN_ALLOW_THREADS
        status = run_reduce(device, &desc, &err);
        Py_END_ALLOW_THREADS
        if (status) gp_raise_backend_error(&err);
    }
    return finish_call(&call, status);
}

PyDoc_STRVAR(scan_doc, "scan(array, out_typenum, outer, n, inner, exclusive, device) -> 1-D array\n\n"
                       "Prefix sum along n of the (outer, n, inner) view; device -1 is the CPU.");

static PyObject *core_scan(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *array;
    int out_typenum, exclusive, device;
    long long outer, n, inner;
    if (!PyArg_ParseTuple(args, "OiLLLpi", &array, &out_typenum, &outer, &n, &inner, &exclusive, &device))
        return NULL;
    prepared_call call;
    if (prepare(array, out_typenum, outer, n, inner, outer * n * inner, device, GP_STREAMED_SCAN, &call))
        return NULL;
    gp_scan_desc desc;
    gp_error err = {GP_OK, ""};
    int status = scan_desc_from(&call, exclusive, &desc);
    if (status == 0 && outer * n * inner > 0) {
        Py_BEGIN_ALLOW_THREADS
        status = run_scan(device, &desc, &err);
        Py_END_ALLOW_THREADS
        if (status) gp_raise_backend_error(&err);
    }
    return finish_call(&call, status);
}

/* The device addresses (Python ints) and dtypes (NumPy type numbers) of a resident call. */
static int resident_operands(PyObject *in_obj, int in_typenum, PyObject *out_obj, int out_typenum,
                             const void **in, gp_dtype *in_dtype, void **out, gp_dtype *out_dtype)
{
    const int in_code = gp_dtype_from_typenum(in_typenum), out_code = gp_dtype_from_typenum(out_typenum);
    if (in_code < 0 || out_code < 0) return -1;
    *in_dtype = (gp_dtype)in_code;
    *out_dtype = (gp_dtype)out_code;
    *in = PyLong_AsVoidPtr(in_obj);
    *out = PyLong_AsVoidPtr(out_obj);
    return PyErr_Occurred() ? -1 : 0;
}

/* None, or the backend's error raised. */
static PyObject *resident_result(int status, const gp_error *err)
{
    if (status) return gp_raise_backend_error(err);
    Py_RETURN_NONE;
}

#ifdef GPUPRIMS_NO_CUDA
#define RUN_RESIDENT(call) no_cuda(&err)
#else
#define RUN_RESIDENT(call) (call)
#endif

PyDoc_STRVAR(reduce_resident_doc,
             "reduce_resident(in_ptr, in_typenum, op, out_ptr, out_typenum, outer, n, inner, device)\n\n"
             "Reduce device-resident C-contiguous data along n of (outer, n, inner) into out_ptr, on\n"
             "gpuprims' stream for the device (no synchronisation).");

static PyObject *core_reduce_resident(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *in_obj, *out_obj;
    int in_typenum, op, out_typenum, device;
    long long outer, n, inner;
    if (!PyArg_ParseTuple(args, "OiiOiLLLi", &in_obj, &in_typenum, &op, &out_obj, &out_typenum, &outer, &n,
                          &inner, &device))
        return NULL;
    gp_reduce_desc desc = {(gp_op)op, 0, 0, outer, n, inner, NULL, NULL};
    if (resident_operands(in_obj, in_typenum, out_obj, out_typenum, &desc.in, &desc.in_dtype, &desc.out,
                          &desc.out_dtype))
        return NULL;
    if (op < 0 || op >= GP_NUM_OPS || !gp_reduce_supported(desc.op, desc.in_dtype, desc.out_dtype)) {
        PyErr_SetString(PyExc_ValueError, "unsupported reduction or dtype pair");
        return NULL;
    }
    gp_error err = {GP_OK, ""};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = RUN_RESIDENT(gp_cuda_reduce_resident(device, &desc, &err));
    Py_END_ALLOW_THREADS
    return resident_result(status, &err);
}

PyDoc_STRVAR(scan_resident_doc,
             "scan_resident(in_ptr, in_typenum, out_ptr, out_typenum, outer, n, inner, exclusive, device)\n\n"
             "Prefix sum of device-resident C-contiguous data along n of (outer, n, inner).");

static PyObject *core_scan_resident(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *in_obj, *out_obj;
    int in_typenum, out_typenum, exclusive, device;
    long long outer, n, inner;
    if (!PyArg_ParseTuple(args, "OiOiLLLpi", &in_obj, &in_typenum, &out_obj, &out_typenum, &outer, &n, &inner,
                          &exclusive, &device))
        return NULL;
    gp_scan_desc desc = {0, 0, outer, n, inner, exclusive, NULL, NULL};
    if (resident_operands(in_obj, in_typenum, out_obj, out_typenum, &desc.in, &desc.in_dtype, &desc.out,
                          &desc.out_dtype))
        return NULL;
    if (!gp_accumulate_supported(desc.in_dtype, desc.out_dtype)) {
        PyErr_SetString(PyExc_ValueError, "unsupported scan dtype pair");
        return NULL;
    }
    gp_error err = {GP_OK, ""};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = RUN_RESIDENT(gp_cuda_scan_resident(device, &desc, &err));
    Py_END_ALLOW_THREADS
    return resident_result(status, &err);
}

PyDoc_STRVAR(convert_resident_doc,
             "convert_resident(in_ptr, in_typenum, out_ptr, out_typenum, count, divisor, device)\n\n"
             "Casts count device-resident elements as NumPy's astype (after dividing floats by\n"
             "divisor when it is not 0).");

static PyObject *core_convert_resident(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *in_obj, *out_obj;
    int in_typenum, out_typenum, device;
    long long count, divisor;
    if (!PyArg_ParseTuple(args, "OiOiLLi", &in_obj, &in_typenum, &out_obj, &out_typenum, &count, &divisor,
                          &device))
        return NULL;
    const void *in;
    void *out;
    gp_dtype in_dtype, out_dtype;
    if (resident_operands(in_obj, in_typenum, out_obj, out_typenum, &in, &in_dtype, &out, &out_dtype))
        return NULL;
    gp_error err = {GP_OK, ""};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = RUN_RESIDENT(gp_cuda_convert_resident(device, in_dtype, in, out_dtype, out, count, divisor, &err));
    Py_END_ALLOW_THREADS
    return resident_result(status, &err);
}

static int run_copy_strided(int device, const gp_copy_desc *desc, gp_error *err)
{
    if (device < 0) return gp_cpu_copy_strided(desc, err);
#ifdef GPUPRIMS_NO_CUDA
    return no_cuda(err);
#else
    return gp_cuda_copy_strided(device, desc, err);
#endif
}

/* Fills desc (not its out) from array's shape, strides and data; -1 when an element is not aligned
 * to its size, so that byte strides are not whole elements. */
static int copy_desc_from(PyArrayObject *array, gp_copy_desc *desc)
{
    const int64_t size = PyArray_ITEMSIZE(array);
    desc->ndim = PyArray_NDIM(array);
    desc->elem_size = size;
    desc->in = PyArray_DATA(array);
    int aligned = (uintptr_t)desc->in % (uintptr_t)size == 0;
    for (int d = 0; d < desc->ndim; ++d) {
        const npy_intp stride = PyArray_STRIDE(array, d);
        desc->shape[d] = PyArray_DIM(array, d);
        /* a dimension of length 0 or 1 is never stepped along, whatever its stride */
        desc->strides[d] = desc->shape[d] > 1 ? stride / size : 0;
        aligned = aligned && (desc->shape[d] <= 1 || stride % size == 0);
    }
    return aligned ? 0 : -1;
}

PyDoc_STRVAR(copy_strided_doc,
             "copy_strided(array, device, repeats=0) -> array, or list of milliseconds\n\n"
             "A new C-contiguous array with array's shape, dtype (byte order included) and values, whatever\n"
             "its strides: a transpose is the copy of a permuted view.  Device -1 is the CPU.  With\n"
             "repeats > 0, times that many copies on the GPU instead, the input uploaded once.");

static PyObject *core_copy_strided(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *obj;
    int device, repeats = 0;
    if (!PyArg_ParseTuple(args, "Oi|i", &obj, &device, &repeats)) return NULL;
    if (!PyArray_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "expected a numpy.ndarray");
        return NULL;
    }
    PyArrayObject *in = (PyArrayObject *)obj;
    if (gp_dtype_from_descr(PyArray_DESCR(in)) < 0) {
        PyErr_Format(PyExc_TypeError, "unsupported dtype %R", (PyObject *)PyArray_DESCR(in));
        return NULL;
    }
    if (PyArray_NDIM(in) > GP_MAX_DIMS || repeats < 0 ||
        (repeats > 0 && (device < 0 || PyArray_SIZE(in) == 0))) {
        PyErr_SetString(PyExc_ValueError, "copy_strided: too many dimensions, or bad repeats, device or size");
        return NULL;
    }
    gp_copy_desc desc;
    int64_t lowest, extent;
    const int aligned = copy_desc_from(in, &desc) == 0;
    gp_copy_span(&desc, &lowest, &extent);
    Py_INCREF(in);
    /* Unaligned views, and views whose span has gaps that a device upload would carry, are first
     * gathered by NumPy into a dense copy in their own memory order. */
    if (!aligned || (device >= 0 && extent > PyArray_SIZE(in))) {
        PyArrayObject *dense = (PyArrayObject *)PyArray_NewCopy(in, NPY_KEEPORDER);
        Py_DECREF(in);
        if (dense == NULL) return NULL;
        in = dense;
        copy_desc_from(in, &desc);
        gp_copy_span(&desc, &lowest, &extent);
    }
    PyArray_Descr *descr = PyArray_DESCR(in);
    Py_INCREF(descr);
    const int pinned = repeats == 0 && result_pinned(device, GP_STREAMED_COPY, (size_t)(extent * desc.elem_size),
                                                     (size_t)PyArray_NBYTES(in), PyArray_SIZE(in));
    PyObject *out = (PyObject *)new_array(descr, PyArray_NDIM(in), PyArray_DIMS(in), pinned);
    if (out != NULL && repeats > 0) {
        Py_SETREF(out, timed_runs(device, &(timed_work){TIMED_COPY_STRIDED, &desc, NULL, 0}, repeats));
    } else if (out != NULL && PyArray_SIZE(in) > 0) {
        desc.out = PyArray_DATA((PyArrayObject *)out);
        gp_error err = {GP_OK, ""};
        int status;
        Py_BEGIN_ALLOW_THREADS
        status = run_copy_strided(device, &desc, &err);
        Py_END_ALLOW_THREADS
        if (status) Py_SETREF(out, gp_raise_backend_error(&err));
    }
    Py_DECREF(in);
    return out;
}

PyDoc_STRVAR(copy_strided_resident_doc,
             "copy_strided_resident(in_ptr, itemsize, shape, strides, out_ptr, device)\n\n"
             "C-contiguous copy of a device-resident strided view (strides in elements, any sign)\n"
             "into out_ptr, on gpuprims' stream.");

static PyObject *core_copy_strided_resident(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *in_obj, *out_obj, *shape, *strides;
    long long itemsize;
    int device;
    if (!PyArg_ParseTuple(args, "OLO!O!Oi", &in_obj, &itemsize, &PyTuple_Type, &shape, &PyTuple_Type, &strides,
                          &out_obj, &device))
        return NULL;
    gp_copy_desc desc = {0};
    desc.ndim = (int)PyTuple_GET_SIZE(shape);
    desc.elem_size = itemsize;
    if (desc.ndim > GP_MAX_DIMS || PyTuple_GET_SIZE(strides) != desc.ndim) {
        PyErr_SetString(PyExc_ValueError, "copy_strided_resident: shape and strides must match (at most 64 dims)");
        return NULL;
    }
    for (int d = 0; d < desc.ndim; ++d) {
        desc.shape[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
        desc.strides[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, d));
    }
    desc.in = PyLong_AsVoidPtr(in_obj);
    desc.out = PyLong_AsVoidPtr(out_obj);
    if (PyErr_Occurred()) return NULL;
    gp_error err = {GP_OK, ""};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = RUN_RESIDENT(gp_cuda_copy_strided_resident(device, &desc, &err));
    Py_END_ALLOW_THREADS
    return resident_result(status, &err);
}

static int run_correlate(int device, const gp_correlate_desc *desc, gp_error *err)
{
    if (device < 0) return gp_cpu_correlate(desc, err);
#ifdef GPUPRIMS_NO_CUDA
    return no_cuda(err);
#else
    return gp_cuda_correlate(device, desc, err);
#endif
}

/* A parsed correlate call: its arrays (owned) and descriptor. */
typedef struct {
    PyArrayObject *image, *mask, *fill, *out;
    gp_correlate_desc desc;
} correlate_call;

static void release_correlate(correlate_call *call)
{
    Py_XDECREF(call->image);
    Py_XDECREF(call->mask);
    Py_XDECREF(call->fill);
    Py_XDECREF(call->out);
}

/* The image of a resident call: (in_ptr, typenum, rows, cols, out_ptr), device-resident C-contiguous
 * data and room for the output, both of the dtype `typenum`. */
static int resident_image(PyObject *image, gp_correlate_desc *desc)
{
    PyObject *in_obj, *out_obj;
    int typenum;
    long long rows, cols;
    gp_dtype out_dtype;
    if (!PyArg_ParseTuple(image, "OiLLO", &in_obj, &typenum, &rows, &cols, &out_obj)) return -1;
    desc->rows = rows;
    desc->cols = cols;
    return resident_operands(in_obj, typenum, out_obj, typenum, &desc->in, &desc->dtype, &desc->out,
                             &out_dtype);
}

/* Parses (image, mask, fill, out_rows, out_cols, row_offset, col_offset, boundary, device): a 2-D
 * image (a NumPy array, or for a resident call the tuple resident_image reads), a 2-D mask and a
 * one-element fill on the host, all of one dtype, and a non-empty output (allocated here for a host
 * image). */
static int parse_correlate(PyObject *args, int resident, correlate_call *call, int *device)
{
    PyObject *image, *mask, *fill;
    long long out_rows, out_cols, row_offset, col_offset;
    int boundary;
    *call = (correlate_call){NULL, NULL, NULL, NULL, {0}};
    if (!PyArg_ParseTuple(args, "OOOLLLLii", &image, &mask, &fill, &out_rows, &out_cols, &row_offset,
                          &col_offset, &boundary, device))
        return -1;
    gp_correlate_desc *desc = &call->desc;
    if (resident) {
        if (resident_image(image, desc)) return -1;
    } else if (!PyArray_Check(image) || PyArray_NDIM((PyArrayObject *)image) != 2) {
        PyErr_SetString(PyExc_TypeError, "correlate: expected a 2-D image array");
        return -1;
    } else {
        desc->rows = PyArray_DIM((PyArrayObject *)image, 0);
        desc->cols = PyArray_DIM((PyArrayObject *)image, 1);
        call->image = contiguous_input(image, 1, desc->rows, desc->cols, &desc->dtype);
        if (call->image == NULL) return -1;
        desc->in = PyArray_DATA(call->image);
    }
    if (!PyArray_Check(mask) || PyArray_NDIM((PyArrayObject *)mask) != 2 || !PyArray_Check(fill)) {
        PyErr_SetString(PyExc_TypeError, "correlate: expected a 2-D mask array and a fill array");
        return -1;
    }
    const npy_intp *mask_shape = PyArray_DIMS((PyArrayObject *)mask);
    gp_dtype mask_dtype, fill_dtype;
    call->mask = contiguous_input(mask, 1, mask_shape[0], mask_shape[1], &mask_dtype);
    call->fill = call->mask ? contiguous_input(fill, 1, 1, 1, &fill_dtype) : NULL;
    if (call->fill == NULL) return -1;
    if (mask_dtype != desc->dtype || fill_dtype != desc->dtype || boundary < 0 || boundary >= GP_NUM_BOUNDARIES ||
        out_rows < 1 || out_cols < 1 || desc->rows < 1 || desc->cols < 1 || PyArray_SIZE(call->mask) < 1) {
        PyErr_SetString(PyExc_ValueError, "correlate: mixed dtypes, a bad boundary or an empty operand");
        return -1;
    }
    if (!resident) {
        const size_t element = (size_t)PyArray_ITEMSIZE(call->image);
        call->out = new_output(PyArray_TYPE(call->image), out_rows * out_cols, &mask_dtype,
                               result_pinned(*device, GP_STREAMED_CORRELATE, (size_t)PyArray_NBYTES(call->image),
                                             element * (size_t)(out_rows * out_cols), out_rows * out_cols));
        if (call->out == NULL) return -1;
        desc->out = PyArray_DATA(call->out);
    }
    desc->boundary = (gp_boundary)boundary;
    desc->mask_rows = mask_shape[0];
    desc->mask_cols = mask_shape[1];
    desc->out_rows = out_rows;
    desc->out_cols = out_cols;
    desc->row_offset = row_offset;
    desc->col_offset = col_offset;
    desc->mask = PyArray_DATA(call->mask);
    desc->fill = PyArray_DATA(call->fill);
    return 0;
}

PyDoc_STRVAR(correlate_doc,
             "correlate(image, mask, fill, out_rows, out_cols, row_offset, col_offset, boundary, device)\n"
             "-> 1-D array of out_rows * out_cols\n\n"
             "out[i, j] = sum of mask[p, q] * image(i + row_offset + p, j + col_offset + q) (see\n"
             "gp_correlate_desc); device -1 is the CPU.");

static PyObject *core_correlate(PyObject *self, PyObject *args)
{
    (void)self;
    correlate_call call;
    int device;
    if (parse_correlate(args, 0, &call, &device)) {
        release_correlate(&call);
        return NULL;
    }
    gp_error err = {GP_OK, ""};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = run_correlate(device, &call.desc, &err);
    Py_END_ALLOW_THREADS
    PyObject *result = status ? gp_raise_backend_error(&err) : (PyObject *)call.out;
    if (result) call.out = NULL; /* handed to the caller */
    release_correlate(&call);
    return result;
}

PyDoc_STRVAR(correlate_resident_doc,
             "correlate_resident((in_ptr, typenum, rows, cols, out_ptr), mask, fill, out_rows, out_cols,\n"
             "                   row_offset, col_offset, boundary, device)\n\n"
             "correlate() of a device-resident C-contiguous image into out_ptr (out_rows * out_cols\n"
             "elements of the same dtype), on gpuprims' stream; mask and fill are host arrays.");

static PyObject *core_correlate_resident(PyObject *self, PyObject *args)
{
    (void)self;
    correlate_call call;
    int device;
    PyObject *result = NULL;
    if (parse_correlate(args, 1, &call, &device) == 0) {
        gp_error err = {GP_OK, ""};
        int status;
        Py_BEGIN_ALLOW_THREADS
        status = RUN_RESIDENT(gp_cuda_correlate_resident(device, &call.desc, &err));
        Py_END_ALLOW_THREADS
        result = resident_result(status, &err);
    }
    release_correlate(&call);
    return result;
}

PyDoc_STRVAR(array_from_object_doc,
             "array_from_object(obj, typenum) -> ndarray\n\n"
             "PyArray_FromObject(obj, typenum, 0, 0): NumPy's conversion without forced casts (arrays\n"
             "must cast safely), the one scipy.signal.convolve2d applies to its fillvalue.");

static PyObject *core_array_from_object(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *obj;
    int typenum;
    if (!PyArg_ParseTuple(args, "Oi", &obj, &typenum)) return NULL;
    return PyArray_FromObject(obj, typenum, 0, 0);
}

PyDoc_STRVAR(cuda_device_count_doc, "cuda_device_count() -> (count, reason)\n\n"
                                    "reason says why no device is usable when count is 0.");

static PyObject *core_cuda_device_count(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    gp_error err = {GP_OK, ""};
    int count = 0;
#ifdef GPUPRIMS_NO_CUDA
    no_cuda(&err);
#else
    Py_BEGIN_ALLOW_THREADS
    count = gp_cuda_device_count(&err);
    Py_END_ALLOW_THREADS
#endif
    if (count > 0) return Py_BuildValue("(iO)", count, Py_None);
    return Py_BuildValue("(is)", 0, err.message);
}

PyDoc_STRVAR(cuda_device_properties_doc, "cuda_device_properties(index) -> dict");

static PyObject *core_cuda_device_properties(PyObject *self, PyObject *args)
{
    (void)self;
    int device;
    if (!PyArg_ParseTuple(args, "i", &device)) return NULL;
#ifdef GPUPRIMS_NO_CUDA
    gp_error err = {GP_OK, ""};
    no_cuda(&err);
    return gp_raise_backend_error(&err);
#else
    gp_cuda_device_props props;
    gp_error err = {GP_OK, ""};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = gp_cuda_device_props_get(device, &props, &err);
    Py_END_ALLOW_THREADS
    if (status) return gp_raise_backend_error(&err);
    return Py_BuildValue("{s:i,s:s,s:(ii),s:n,s:i,s:i,s:i}", "index", device, "name", props.name,
                         "compute_capability", props.major, props.minor, "total_memory",
                         (Py_ssize_t)props.total_memory, "multiprocessors", props.multiprocessors,
                         "driver_version", props.driver_version, "runtime_version",
                         props.runtime_version);
#endif
}

PyDoc_STRVAR(build_info_doc, "build_info() -> dict describing how the extension was built.");

static PyObject *core_build_info(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
#ifdef GPUPRIMS_NO_CUDA
    return Py_BuildValue("{s:O,s:O,s:O}", "cuda", Py_False, "cuda_version", Py_None, "archs", Py_None);
#else
    const int version = gp_cuda_compiled_runtime_version();
    return Py_BuildValue("{s:O,s:N,s:s}", "cuda", Py_True, "cuda_version",
                         PyUnicode_FromFormat("%d.%d", version / 1000, (version % 1000) / 10),
                         "archs", GPUPRIMS_CUDA_ARCHS);
#endif
}

PyDoc_STRVAR(time_kernel_doc,
             "time_kernel(kind, array, op, out_typenum, outer, n, inner, exclusive, device, repeats)\n"
             "-> list of milliseconds\n\n"
             "Times the device work of a reduce (kind 'reduce') or scan (kind 'scan') with CUDA events,\n"
             "the input uploaded once beforehand.");

static PyObject *core_time_kernel(PyObject *self, PyObject *args)
{
    (void)self;
    const char *kind;
    PyObject *array;
    int op, out_typenum, exclusive, device, repeats;
    long long outer, n, inner;
    if (!PyArg_ParseTuple(args, "sOiiLLLpii", &kind, &array, &op, &out_typenum, &outer, &n, &inner,
                          &exclusive, &device, &repeats))
        return NULL;
    const int is_scan = strcmp(kind, "scan") == 0;
    if ((!is_scan && strcmp(kind, "reduce") != 0) || repeats < 1 || device < 0 || outer * n * inner < 1) {
        PyErr_SetString(PyExc_ValueError, "time_kernel: bad kind, repeats, device or empty array");
        return NULL;
    }
#ifdef GPUPRIMS_NO_CUDA
    (void)array, (void)op, (void)out_typenum, (void)exclusive;
    return timed_runs(device, NULL, repeats);
#else
    prepared_call call;
    if (prepare(array, out_typenum, outer, n, inner, is_scan ? outer * n * inner : outer * inner, device, -1,
                &call))
        return NULL;
    gp_reduce_desc reduce_desc;
    gp_scan_desc scan_desc;
    PyObject *result = NULL;
    if (is_scan ? scan_desc_from(&call, exclusive, &scan_desc) == 0 : reduce_desc_from(&call, op, &reduce_desc) == 0)
        result = timed_runs(device,
                            is_scan ? &(timed_work){TIMED_SCAN, &scan_desc, NULL, 0}
                                    : &(timed_work){TIMED_REDUCE, &reduce_desc, NULL, 0},
                            repeats);
    Py_DECREF(call.in);
    Py_DECREF(call.out);
    return result;
#endif
}

PyDoc_STRVAR(time_correlate_doc,
             "time_correlate(repeats, args) -> list of milliseconds\n\n"
             "Times the device work of correlate(*args) with CUDA events, the input uploaded once.");

static PyObject *core_time_correlate(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *call_args, *result = NULL;
    int repeats, device;
    if (!PyArg_ParseTuple(args, "iO!", &repeats, &PyTuple_Type, &call_args)) return NULL;
    correlate_call call;
    if (parse_correlate(call_args, 0, &call, &device) == 0) {
        if (repeats < 1 || device < 0)
            PyErr_SetString(PyExc_ValueError, "time_correlate: repeats and device must be positive");
        else
            result = timed_runs(device, &(timed_work){TIMED_CORRELATE, &call.desc, NULL, 0}, repeats);
    }
    release_correlate(&call);
    return result;
}

PyDoc_STRVAR(time_memcpy_doc, "time_memcpy(nbytes, device, repeats, host=0) -> list of milliseconds for a\n"
                              "device-to-device copy of nbytes, or a host-to-device copy from the host\n"
                              "address `host` (pageable or pinned) when it is not 0.");

static PyObject *core_time_memcpy(PyObject *self, PyObject *args)
{
    (void)self;
    long long nbytes;
    int device, repeats;
    PyObject *host_address = NULL;
    if (!PyArg_ParseTuple(args, "Lii|O", &nbytes, &device, &repeats, &host_address)) return NULL;
    const void *host = host_address ? PyLong_AsVoidPtr(host_address) : NULL;
    if (PyErr_Occurred()) return NULL;
    if (nbytes < 1 || repeats < 1 || device < 0) {
        PyErr_SetString(PyExc_ValueError, "time_memcpy: nbytes, repeats and device must be positive");
        return NULL;
    }
    return timed_runs(device, &(timed_work){TIMED_MEMCPY, NULL, host, (size_t)nbytes}, repeats);
}

static PyMethodDef core_methods[] = {
    {"reduce", core_reduce, METH_VARARGS, reduce_doc},
    {"scan", core_scan, METH_VARARGS, scan_doc},
    {"reduce_resident", core_reduce_resident, METH_VARARGS, reduce_resident_doc},
    {"scan_resident", core_scan_resident, METH_VARARGS, scan_resident_doc},
    {"convert_resident", core_convert_resident, METH_VARARGS, convert_resident_doc},
    {"dlpack_import", gp_dlpack_import, METH_O,
     "dlpack_import(capsule) -> (holder, ptr, device_type, device_id, shape, strides, code, bits, lanes, readonly)"},
    {"dlpack_export", gp_dlpack_export, METH_VARARGS,
     "dlpack_export(owner, ptr, device_type, device_id, shape, strides, code, bits, versioned, readonly) -> capsule"},
    {"work_stream", gp_py_work_stream, METH_VARARGS, "work_stream(device) -> gpuprims' stream handle (int)"},
    {"order_streams", gp_py_order_streams, METH_VARARGS,
     "order_streams(device, stream, signal): signal False makes gpuprims' stream wait for `stream`,\n"
     "True makes `stream` wait for gpuprims'."},
    {"synchronize", gp_py_synchronize, METH_VARARGS, "synchronize(device): waits for gpuprims' stream"},
    {"memcpy", gp_py_memcpy, METH_VARARGS, "memcpy(device, dst, src, nbytes, wait)"},
    {"pointer_device", gp_py_pointer_device, METH_O, "pointer_device(ptr) -> CUDA device index of a device address"},
    {"memory_info", gp_py_memory_info, METH_VARARGS, "memory_info(device) -> dict"},
    {"empty_cache", gp_py_empty_cache, METH_VARARGS, "empty_cache(device)"},
    {"copy_strided", core_copy_strided, METH_VARARGS, copy_strided_doc},
    {"copy_strided_resident", core_copy_strided_resident, METH_VARARGS, copy_strided_resident_doc},
    {"cuda_device_count", core_cuda_device_count, METH_NOARGS, cuda_device_count_doc},
    {"cuda_device_properties", core_cuda_device_properties, METH_VARARGS, cuda_device_properties_doc},
    {"build_info", core_build_info, METH_NOARGS, build_info_doc},
    {"time_kernel", core_time_kernel, METH_VARARGS, time_kernel_doc},
    {"time_memcpy", core_time_memcpy, METH_VARARGS, time_memcpy_doc},
    {"correlate", core_correlate, METH_VARARGS, correlate_doc},
    {"correlate_resident", core_correlate_resident, METH_VARARGS, correlate_resident_doc},
    {"time_correlate", core_time_correlate, METH_VARARGS, time_correlate_doc},
    {"array_from_object", core_array_from_object, METH_VARARGS, array_from_object_doc},
    {"is_pinned", gp_py_is_pinned, METH_VARARGS, "is_pinned(address, nbytes) -> whether the host range is page-locked"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "gpuprims._core", "gpuprims' compiled core (internal).", -1, core_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    if (PyType_Ready(&gp_buffer_type) < 0 || PyType_Ready(&gp_dlpack_holder_type) < 0 ||
        PyType_Ready(&gp_pinned_buffer_type) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&core_module);
    if (module == NULL) return NULL;
    PyTypeObject *types[] = {&gp_buffer_type, &gp_pinned_buffer_type};
    const char *names[] = {"Buffer", "PinnedBuffer"};
    for (int t = 0; t < 2; ++t) {
        Py_INCREF(types[t]);
        if (PyModule_AddObject(module, names[t], (PyObject *)types[t]) < 0) { /* steals only on success */
            Py_DECREF(types[t]);
            Py_DECREF(module);
            return NULL;
        }
    }
    return module;
}
