/* Device queries (devices.h). */
#include "glue/devices.h"
#include "glue/errors.h"
#include "planner/environment.h"
#ifndef GPUPRIMS_NO_CUDA
#include "gpuprims_cuda.h"
#endif

#ifndef GPUPRIMS_CUDA_ARCHS
#define GPUPRIMS_CUDA_ARCHS ""
#endif

PyDoc_STRVAR(cuda_device_count_doc, "cuda_device_count() -> (count, reason)\n\n"
                                    "reason says why no device is usable when count is 0.");

static PyObject *cuda_device_count(PyObject *self, PyObject *noargs)
{
    (void)self, (void)noargs;
#ifdef GPUPRIMS_NO_CUDA
    return Py_BuildValue("(is)", 0, "gpuprims was built without CUDA support");
#else
    gp_error err = {GP_OK, ""};
    int count;
    Py_BEGIN_ALLOW_THREADS
    count = gp_cuda_device_count(&err);
    Py_END_ALLOW_THREADS
    if (count > 0) return Py_BuildValue("(iO)", count, Py_None);
    return Py_BuildValue("(is)", 0, err.message);
#endif
}

PyDoc_STRVAR(cuda_device_properties_doc, "cuda_device_properties(index) -> dict");

static PyObject *cuda_device_properties(PyObject *self, PyObject *args)
{
    (void)self;
    int device;
    if (!PyArg_ParseTuple(args, "i", &device)) return NULL;
#ifdef GPUPRIMS_NO_CUDA
    return gp_raise_no_cuda();
#else
    gp_cuda_device_props props;
    gp_error err = {GP_OK, ""};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = gp_cuda_device_props_get(device, &props, &err);
    Py_END_ALLOW_THREADS
    if (status) return gp_raise(&err);
    return Py_BuildValue("{s:i,s:s,s:(ii),s:n,s:i,s:i,s:i}", "index", device, "name", props.name,
                         "compute_capability", props.major, props.minor, "total_memory",
                         (Py_ssize_t)props.total_memory, "multiprocessors", props.multiprocessors,
                         "driver_version", props.driver_version, "runtime_version", props.runtime_version);
#endif
}

PyDoc_STRVAR(build_info_doc, "build_info() -> dict describing how the extension was built.");

static PyObject *build_info(PyObject *self, PyObject *noargs)
{
    (void)self, (void)noargs;
#ifdef GPUPRIMS_NO_CUDA
    return Py_BuildValue("{s:O,s:O,s:O}", "cuda", Py_False, "cuda_version", Py_None, "archs", Py_None);
#else
    const int version = gp_cuda_compiled_runtime_version();
    return Py_BuildValue("{s:O,s:N,s:s}", "cuda", Py_True, "cuda_version",
                         PyUnicode_FromFormat("%d.%d", version / 1000, (version % 1000) / 10), "archs",
                         GPUPRIMS_CUDA_ARCHS);
#endif
}

PyDoc_STRVAR(device_setting_doc, "device_setting() -> str or None\n\n"
                                 "GPUPRIMS_DEVICE, the default device (from the process environment, as the planner\n"
                                 "reads it: cheaper than os.environ on every call, and it sees os.environ's changes).");

static PyObject *device_setting(PyObject *self, PyObject *noargs)
{
    (void)self, (void)noargs;
    const char *value = gp_environment_now().device;
    if (value == NULL) Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(value);
}

PyMethodDef gp_device_methods[] = {
    {"cuda_device_count", cuda_device_count, METH_NOARGS, cuda_device_count_doc},
    {"cuda_device_properties", cuda_device_properties, METH_VARARGS, cuda_device_properties_doc},
    {"build_info", build_info, METH_NOARGS, build_info_doc},
    {"device_setting", device_setting, METH_NOARGS, device_setting_doc},
    {NULL, NULL, 0, NULL},
};
