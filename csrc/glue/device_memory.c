/* gpuprims._core's device-memory glue: the Buffer type (one allocation from gpuprims' caching
 * allocator, given back when the Buffer dies), DLPack capsules in both directions, stream
 * ordering with other libraries, host <-> device copies and the allocator's statistics.  The
 * Python class gpuprims.DeviceArray (gpuprims/_device_array.py) is built on these. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glue/device_memory.h"
#include "glue/errors.h"
#ifndef GPUPRIMS_NO_CUDA
#include "gpuprims_cuda.h"
#endif

/* ---- DLPack ABI (dmlc/dlpack, version 1.0) ------------------------------------------------ */
enum { DL_CPU = 1, DL_CUDA = 2 };
typedef struct { int32_t device_type, device_id; } DLDevice;
typedef struct { uint8_t code, bits; uint16_t lanes; } DLDataType;
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
typedef struct { uint32_t major, minor; } DLPackVersion;
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;
#define DLPACK_FLAG_READ_ONLY ((uint64_t)1)


/* ---- Buffer -------------------------------------------------------------------------------- */
typedef struct {
    PyObject_HEAD
    void *ptr;
    Py_ssize_t nbytes;
    int device;
} Buffer;

static void buffer_dealloc(Buffer *self)
{
#ifndef GPUPRIMS_NO_CUDA
    gp_error err = {GP_OK, ""};
    if (gp_cuda_free(self->device, self->ptr, &err)) { /* stream-ordered: pending work on it finishes first */
        gp_report_unraisable(&err, (PyObject *)self);
    }
#endif
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *buffer_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"nbytes", "device", NULL};
    Py_ssize_t nbytes;
    int device;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "ni", keywords, &nbytes, &device)) return NULL;
    if (nbytes < 0 || device < 0) {
        PyErr_SetString(PyExc_ValueError, "Buffer: nbytes and device must be non-negative");
        return NULL;
    }
#ifdef GPUPRIMS_NO_CUDA
    (void)type;
    return gp_raise_no_cuda();
#else
    Buffer *self = (Buffer *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->device = device;
    self->nbytes = nbytes;
    gp_error err = {GP_OK, ""};
    if (gp_cuda_alloc(device, (size_t)nbytes, &self->ptr, &err)) {
        self->ptr = NULL;
        Py_DECREF(self);
        return gp_raise(&err);
    }
    return (PyObject *)self;
#endif
}

static PyObject *buffer_get_ptr(Buffer *self, void *closure)
{
    (void)closure;
    return PyLong_FromVoidPtr(self->ptr);
}

static PyGetSetDef buffer_getset[] = {
    {"ptr", (getter)buffer_get_ptr, NULL, "device address (int)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef buffer_members[] = {
    {"nbytes", T_PYSSIZET, offsetof(Buffer, nbytes), READONLY, "size in bytes"},
    {"device", T_INT, offsetof(Buffer, device), READONLY, "CUDA device index"},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject gp_buffer_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpuprims._core.Buffer",
    .tp_basicsize = sizeof(Buffer),
    .tp_dealloc = (destructor)buffer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Buffer(nbytes, device): device memory from gpuprims' caching allocator, returned to\n"
              "the cache when the Buffer is freed.",
    .tp_new = buffer_new,
    .tp_getset = buffer_getset,
    .tp_members = buffer_members,
};

/* ---- DLPack import: a holder that calls the producer's deleter when it dies ----------------- */
typedef struct {
    PyObject_HEAD
    void *managed;
    int versioned;
} DLPackHolder;

static void holder_dealloc(DLPackHolder *self)
{
    if (self->managed != NULL) {
        if (self->versioned) {
            DLManagedTensorVersioned *m = self->managed;
            if (m->deleter) m->deleter(m);
        } else {
            DLManagedTensor *m = self->managed;
            if (m->deleter) m->deleter(m);
        }
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyTypeObject gp_dlpack_holder_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpuprims._core.DLPackHolder",
    .tp_basicsize = sizeof(DLPackHolder),
    .tp_dealloc = (destructor)holder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Keeps an imported DLPack tensor alive; calls its deleter when freed.",
};

static PyObject *int64_tuple(const int64_t *values, int count)
{
    PyObject *tuple = PyTuple_New(count);
    for (int i = 0; tuple != NULL && i < count; ++i) {
        PyObject *item = PyLong_FromLongLong(values[i]);
        if (item == NULL) {
            Py_CLEAR(tuple);
            break;
        }
        PyTuple_SET_ITEM(tuple, i, item);
    }
    return tuple;
}

static PyObject *gp_dlpack_import(PyObject *self, PyObject *capsule)
{
    (void)self;
    int versioned;
    if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        versioned = 1;
    } else if (PyCapsule_IsValid(capsule, "dltensor")) {
        versioned = 0;
    } else {
        PyErr_SetString(PyExc_ValueError,
                        "expected an unconsumed DLPack capsule (named 'dltensor' or 'dltensor_versioned'); "
                        "a capsule can be consumed only once");
        return NULL;
    }
    void *managed = PyCapsule_GetPointer(capsule, versioned ? "dltensor_versioned" : "dltensor");
    if (managed == NULL) return NULL;
    const DLTensor *t;
    uint64_t flags = 0;
    if (versioned) {
        DLManagedTensorVersioned *m = managed;
        if (m->version.major != 1) {
            PyErr_Format(PyExc_BufferError, "unsupported DLPack version %u.%u", m->version.major,
                         m->version.minor);
            return NULL;
        }
        t = &m->dl_tensor;
        flags = m->flags;
    } else {
        t = &((DLManagedTensor *)managed)->dl_tensor;
    }
    if (t->ndim < 0) {
        PyErr_SetString(PyExc_ValueError, "DLPack tensor with negative ndim");
        return NULL;
    }
    DLPackHolder *holder = PyObject_New(DLPackHolder, &gp_dlpack_holder_type);
    if (holder == NULL) return NULL;
    holder->managed = NULL;  /* owns the tensor only once the capsule is marked consumed */
    holder->versioned = versioned;
    PyObject *shape = int64_tuple(t->shape, t->ndim);
    PyObject *strides = t->strides == NULL ? (Py_INCREF(Py_None), Py_None) : int64_tuple(t->strides, t->ndim);
    PyObject *result = NULL;
    if (shape != NULL && strides != NULL &&
        PyCapsule_SetName(capsule, versioned ? "used_dltensor_versioned" : "used_dltensor") == 0) {
        holder->managed = managed;
        result = Py_BuildValue("(ONiiNNiiiO)", (PyObject *)holder,
                               PyLong_FromVoidPtr((char *)t->data + t->byte_offset), t->device.device_type,
                               t->device.device_id, shape, strides, (int)t->dtype.code, (int)t->dtype.bits,
                               (int)t->dtype.lanes, (flags & DLPACK_FLAG_READ_ONLY) ? Py_True : Py_False);
        shape = strides = NULL;  /* stolen by "N" */
    }
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_DECREF(holder);
    return result;
}

/* ---- DLPack export -------------------------------------------------------------------------- */
/* One malloc block: the managed tensor, then shape and strides.  manager_ctx is the owner. */
typedef struct {
    DLManagedTensorVersioned versioned;
    DLManagedTensor legacy;
    int64_t dims[];
} ExportBlock;

static void release_owner(void *owner, void *block)
{
    if (!Py_IsInitialized()) return;  /* interpreter gone: leak rather than touch it */
    PyGILState_STATE state = PyGILState_Ensure();
    Py_XDECREF((PyObject *)owner);
    free(block);
    PyGILState_Release(state);
}

static void delete_versioned(DLManagedTensorVersioned *m)
{
    release_owner(m->manager_ctx, (char *)m - offsetof(ExportBlock, versioned));
}

static void delete_legacy(DLManagedTensor *m)
{
    release_owner(m->manager_ctx, (char *)m - offsetof(ExportBlock, legacy));
}

static void capsule_destructor(PyObject *capsule)
{
    /* Still named "dltensor*": nobody consumed it, so the capsule owns the tensor. */
    if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(capsule, "dltensor_versioned");
        if (m->deleter) m->deleter(m);
    } else if (PyCapsule_IsValid(capsule, "dltensor")) {
        DLManagedTensor *m = PyCapsule_GetPointer(capsule, "dltensor");
        if (m->deleter) m->deleter(m);
    }
    PyErr_Clear();
}

static PyObject *gp_dlpack_export(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *owner, *ptr_obj, *shape, *strides;
    int device_type, device_id, code, bits, versioned, readonly;
    if (!PyArg_ParseTuple(args, "OOiiO!Oiipp", &owner, &ptr_obj, &device_type, &device_id, &PyTuple_Type,
                          &shape, &strides, &code, &bits, &versioned, &readonly))
        return NULL;
    void *ptr = PyLong_AsVoidPtr(ptr_obj);
    if (ptr == NULL && PyErr_Occurred()) return NULL;
    const Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
    if (strides != Py_None && (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != ndim)) {
        PyErr_SetString(PyExc_ValueError, "strides must be None or a tuple as long as shape");
        return NULL;
    }
    ExportBlock *block = calloc(1, sizeof(ExportBlock) + 2 * (size_t)ndim * sizeof(int64_t));
    if (block == NULL) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < ndim; ++i) {
        block->dims[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
        if (strides != Py_None) block->dims[ndim + i] = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, i));
    }
    if (PyErr_Occurred()) {
        free(block);
        return NULL;
    }
    DLTensor tensor = {ptr, {device_type, device_id}, (int32_t)ndim, {(uint8_t)code, (uint8_t)bits, 1},
                       block->dims, strides == Py_None ? NULL : block->dims + ndim, 0};
    Py_INCREF(owner);
    if (versioned) {
        block->versioned = (DLManagedTensorVersioned){{1, 0}, owner, delete_versioned,
                                                      readonly ? DLPACK_FLAG_READ_ONLY : 0, tensor};
    } else {
        block->legacy = (DLManagedTensor){tensor, owner, delete_legacy};
    }
    PyObject *capsule = versioned ? PyCapsule_New(&block->versioned, "dltensor_versioned", capsule_destructor)
                                  : PyCapsule_New(&block->legacy, "dltensor", capsule_destructor);
    if (capsule == NULL) {
        Py_DECREF(owner);
        free(block);
    }
    return capsule;
}

/* ---- streams, copies and allocator statistics ---------------------------------------------- */
static PyObject *gp_py_work_stream(PyObject *self, PyObject *args)
{
    (void)self;
    int device;
    if (!PyArg_ParseTuple(args, "i", &device)) return NULL;
#ifdef GPUPRIMS_NO_CUDA
    return gp_raise_no_cuda();
#else
    return PyLong_FromSize_t((size_t)gp_cuda_work_stream(device));
#endif
}

/* order(device, foreign_stream, direction): direction 0 makes gpuprims' stream wait for the foreign
 * one (before reading a producer's data), 1 makes the foreign stream wait for gpuprims' (before a
 * consumer reads ours). */
static PyObject *gp_py_order_streams(PyObject *self, PyObject *args)
{
    (void)self;
    int device, direction;
    unsigned long long stream;
    if (!PyArg_ParseTuple(args, "iKp", &device, &stream, &direction)) return NULL;
#ifdef GPUPRIMS_NO_CUDA
    return gp_raise_no_cuda();
#else
    gp_error err = {GP_OK, ""};
    int status = direction ? gp_cuda_signal_stream(device, (uintptr_t)stream, &err)
                           : gp_cuda_wait_for_stream(device, (uintptr_t)stream, &err);
    if (status) return gp_raise(&err);
    Py_RETURN_NONE;
#endif
}

#ifndef GPUPRIMS_NO_CUDA
/* Parses (device,) and runs action(device) with the GIL released: None, or its error raised. */
static PyObject *run_device_action(PyObject *args, int (*action)(int, gp_error *))
{
    int device;
    if (!PyArg_ParseTuple(args, "i", &device)) return NULL;
    gp_error err = {GP_OK, ""};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = action(device, &err);
    Py_END_ALLOW_THREADS
    if (status) return gp_raise(&err);
    Py_RETURN_NONE;
}
#endif

/* synchronize(device) and empty_cache(device). */
#ifdef GPUPRIMS_NO_CUDA
#define DEVICE_ACTION(action) ((void)args, gp_raise_no_cuda())
#else
#define DEVICE_ACTION(action) run_device_action(args, action)
#endif

static PyObject *gp_py_synchronize(PyObject *self, PyObject *args)
{
    (void)self;
    return DEVICE_ACTION(gp_cuda_synchronize);
}

static PyObject *gp_py_empty_cache(PyObject *self, PyObject *args)
{
    (void)self;
    return DEVICE_ACTION(gp_cuda_empty_cache);
}

/* memcpy(device, dst, src, nbytes, wait): a copy on gpuprims' stream between any two addresses
 * (host or device); wait=True returns once it is complete (needed before the host reads). */
static PyObject *gp_py_memcpy(PyObject *self, PyObject *args)
{
    (void)self;
    int device, wait;
    PyObject *dst_obj, *src_obj;
    Py_ssize_t nbytes;
    if (!PyArg_ParseTuple(args, "iOOnp", &device, &dst_obj, &src_obj, &nbytes, &wait)) return NULL;
    void *dst = PyLong_AsVoidPtr(dst_obj);
    const void *src = PyLong_AsVoidPtr(src_obj);
    if (PyErr_Occurred()) return NULL;
    if (nbytes < 0) {
        PyErr_SetString(PyExc_ValueError, "memcpy: negative size");
        return NULL;
    }
#ifdef GPUPRIMS_NO_CUDA
    (void)dst, (void)src, (void)wait;
    return gp_raise_no_cuda();
#else
    gp_error err = {GP_OK, ""};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = gp_cuda_memcpy(device, dst, src, (size_t)nbytes, wait, &err);
    Py_END_ALLOW_THREADS
    if (status) return gp_raise(&err);
    Py_RETURN_NONE;
#endif
}

static PyObject *gp_py_pointer_device(PyObject *self, PyObject *ptr_obj)
{
    (void)self;
    const void *ptr = PyLong_AsVoidPtr(ptr_obj);
    if (ptr == NULL && PyErr_Occurred()) return NULL;
#ifdef GPUPRIMS_NO_CUDA
    return gp_raise_no_cuda();
#else
    gp_error err = {GP_OK, ""};
    int device = -1;
    if (gp_cuda_pointer_device(ptr, &device, &err)) return gp_raise(&err);
    return PyLong_FromLong(device);
#endif
}

static PyObject *gp_py_memory_info(PyObject *self, PyObject *args)
{
    (void)self;
    int device;
    if (!PyArg_ParseTuple(args, "i", &device)) return NULL;
#ifdef GPUPRIMS_NO_CUDA
    return gp_raise_no_cuda();
#else
    gp_cuda_memory info;
    gp_error err = {GP_OK, ""};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = gp_cuda_memory_info(device, &info, &err);
    Py_END_ALLOW_THREADS
    if (status) return gp_raise(&err);
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K}", "in_use", (unsigned long long)info.in_use, "cached",
                         (unsigned long long)(info.reserved - info.in_use), "peak_in_use",
                         (unsigned long long)info.peak_in_use, "device_free",
                         (unsigned long long)info.device_free, "device_total",
                         (unsigned long long)info.device_total);
#endif
}

PyMethodDef gp_device_memory_methods[] = {
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
    {NULL, NULL, 0, NULL},
};
