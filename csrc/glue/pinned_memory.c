/* gpuprims._core's page-locked host memory: PinnedBuffer (one cudaHostAlloc block exposed through
 * the buffer protocol, freed when the last NumPy view of it dies) and the pinned test.
 * gpuprims/_pinned.py builds NumPy arrays on these. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "glue/errors.h"
#include "glue/pinned_memory.h"
#ifndef GPUPRIMS_NO_CUDA
#include "gpuprims_cuda.h"
#endif

typedef struct {
    PyObject_HEAD
    void *ptr;
    Py_ssize_t nbytes;
    size_t capacity;
    int cached; /* a result block: back to gpuprims' cache when freed */
} PinnedBuffer;

static void pinned_dealloc(PinnedBuffer *self)
{
#ifndef GPUPRIMS_NO_CUDA
    gp_error err = {GP_OK, ""};
    if (gp_cuda_host_free(self->ptr, self->capacity, self->cached, &err)) {
        gp_report_unraisable(&err, (PyObject *)self);
    }
#endif
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A PinnedBuffer of nbytes, NULL with an exception set on failure. */
static PyObject *pinned_buffer(PyTypeObject *type, Py_ssize_t nbytes, int cached)
{
#ifdef GPUPRIMS_NO_CUDA
    (void)type, (void)nbytes, (void)cached;
    return gp_raise_no_cuda();
#else
    PinnedBuffer *self = (PinnedBuffer *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->nbytes = nbytes;
    self->cached = cached;
    gp_error err = {GP_OK, ""};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = gp_cuda_host_alloc((size_t)nbytes, cached, &self->ptr, &self->capacity, &err);
    Py_END_ALLOW_THREADS
    if (status) {
        Py_DECREF(self);
        return gp_raise(&err);
    }
    return (PyObject *)self;
#endif
}

PyObject *gp_pinned_result_block(Py_ssize_t nbytes, void **data)
{
    PyObject *block = pinned_buffer(&gp_pinned_buffer_type, nbytes, 1);
    *data = block ? ((PinnedBuffer *)block)->ptr : NULL;
    return block;
}

static PyObject *pinned_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"nbytes", NULL};
    Py_ssize_t nbytes;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "n", keywords, &nbytes)) return NULL;
    if (nbytes < 0) {
        PyErr_SetString(PyExc_ValueError, "PinnedBuffer: nbytes must be non-negative");
        return NULL;
    }
    return pinned_buffer(type, nbytes, 0);
}

static int pinned_getbuffer(PinnedBuffer *self, Py_buffer *view, int flags)
{
    return PyBuffer_FillInfo(view, (PyObject *)self, self->ptr, self->nbytes, 0, flags);
}

static PyBufferProcs pinned_as_buffer = {(getbufferproc)pinned_getbuffer, NULL};

PyTypeObject gp_pinned_buffer_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpuprims._core.PinnedBuffer",
    .tp_basicsize = sizeof(PinnedBuffer),
    .tp_dealloc = (destructor)pinned_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "PinnedBuffer(nbytes): page-locked host memory (writable buffer protocol), freed with\n"
              "the object; RuntimeError or MemoryError where no GPU is usable.",
    .tp_new = pinned_new,
    .tp_as_buffer = &pinned_as_buffer,
};

static PyObject *gp_py_is_pinned(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *address;
    Py_ssize_t nbytes;
    if (!PyArg_ParseTuple(args, "On", &address, &nbytes)) return NULL;
    void *ptr = PyLong_AsVoidPtr(address);
    if (ptr == NULL && PyErr_Occurred()) return NULL;
#ifdef GPUPRIMS_NO_CUDA
    (void)nbytes;
    Py_RETURN_FALSE;
#else
    int pinned;
    Py_BEGIN_ALLOW_THREADS
    pinned = nbytes > 0 && gp_cuda_host_is_pinned(ptr, (size_t)nbytes);
    Py_END_ALLOW_THREADS
    return PyBool_FromLong(pinned);
#endif
}

PyMethodDef gp_pinned_memory_methods[] = {
    {"is_pinned", gp_py_is_pinned, METH_VARARGS, "is_pinned(address, nbytes) -> whether the host range is page-locked"},
    {NULL, NULL, 0, NULL},
};
