/* The CPU backend's settings (cpu_settings.h). */
#include "glue/cpu_settings.h"

#include "cpu/kernels.h"
#include "parallel/thread_pool.h"

PyDoc_STRVAR(set_num_threads_doc, "set_num_threads(n)\n\n"
                                  "The host thread pool's size (1 to 256; checked by gpuprims.set_num_threads).");

static PyObject *set_num_threads(PyObject *self, PyObject *arg)
{
    (void)self;
    const long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n < 1 || n > GP_POOL_MAX_THREADS)
        return PyErr_Format(PyExc_ValueError, "the number of threads must be from 1 to %d, not %ld",
                            (int)GP_POOL_MAX_THREADS, n);
    Py_BEGIN_ALLOW_THREADS
    gp_pool_set_threads((int)n); /* waits for a running job */
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

PyDoc_STRVAR(get_num_threads_doc, "get_num_threads() -> int: the host thread pool's size.");

static PyObject *get_num_threads(PyObject *self, PyObject *noargs)
{
    (void)self, (void)noargs;
    return PyLong_FromLong(gp_pool_threads());
}

PyDoc_STRVAR(cpu_info_doc, "cpu_info() -> dict\n\n"
                           "isa (the CPU backend's loops: 'baseline', 'avx2' or 'avx512'), threads (the pool's size)\n"
                           "and usable_cores (sched_getaffinity).");

static PyObject *cpu_info(PyObject *self, PyObject *noargs)
{
    (void)self, (void)noargs;
    return Py_BuildValue("{s:s,s:i,s:i}", "isa", gp_cpu_kernels_get()->name, "threads", gp_pool_threads(),
                         "usable_cores", gp_pool_usable_cores());
}

PyDoc_STRVAR(set_cpu_isa_doc, "_set_cpu_isa(name)\n\n"
                              "Test hook: switches the CPU backend to the loops for 'baseline', 'avx2' or 'avx512'\n"
                              "(ValueError when unknown or not supported by this CPU).  GPUPRIMS_CPU_ISA sets the\n"
                              "choice at import.");

static PyObject *set_cpu_isa(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (name == NULL) return NULL;
    if (gp_cpu_kernels_select(name) != 0)
        return PyErr_Format(PyExc_ValueError, "unknown CPU instruction set %R, or not supported here", arg);
    Py_RETURN_NONE;
}

PyMethodDef gp_cpu_settings_methods[] = {
    {"set_num_threads", set_num_threads, METH_O, set_num_threads_doc},
    {"get_num_threads", get_num_threads, METH_NOARGS, get_num_threads_doc},
    {"cpu_info", cpu_info, METH_NOARGS, cpu_info_doc},
    {"_set_cpu_isa", set_cpu_isa, METH_O, set_cpu_isa_doc},
    {NULL, NULL, 0, NULL},
};
