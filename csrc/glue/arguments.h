/* NumPy argument normalisation for the call entries (arguments.c): dtypes, host inputs made
 * contiguous, device operands, host outputs. */
#ifndef GP_GLUE_ARGUMENTS_H
#define GP_GLUE_ARGUMENTS_H

#include "contract/gp_call.h"
#include "glue/numpy_api.h"

/* Python-visible helpers: array_from_object (SciPy's fill value conversion). */
extern PyMethodDef gp_argument_methods[];

/* The positional arguments of a METH_FASTCALL entry named `entry`, by `format`: O (PyObject **,
 * borrowed), i and p (int *: an integer; a truth value), L (long long *), d (double *: a number,
 * as float() reads it), '|' before the optional ones (their targets keep their values when not
 * given).  PyArg_ParseTuple's work without its
 * argument tuple and its format's generality: the entries are called on every gpuprims call.
 * Returns 0, or -1 with TypeError or OverflowError set. */
int gp_parse_arguments(const char *entry, PyObject *const *args, Py_ssize_t nargs, const char *format, ...);

/* The gp_dtype of a NumPy dtype, by kind and size (so 'l' and 'q' both map to int64), or -1. */
int gp_dtype_of(PyArray_Descr *descr);
/* The gp_dtype of a NumPy type number, or -1 with TypeError set. */
int gp_dtype_of_typenum(int typenum);

/* `obj` (a numpy.ndarray) as a C-contiguous, aligned, native-endian array of its dtype: a new
 * reference, possibly to obj itself; *dtype is its gp_dtype.  TypeError for other objects and
 * unsupported dtypes. */
PyArrayObject *gp_contiguous_input(PyObject *obj, gp_dtype *dtype);

/* A device-resident operand, passed from Python as (ptr, typenum, shape, strides): strides count
 * elements (a copy's source may have any; the other primitives read C-contiguous data). */
typedef struct {
    const void *ptr;
    gp_dtype dtype;
    int ndim;
    int64_t shape[GP_MAX_DIMS], strides[GP_MAX_DIMS];
} gp_device_operand;
int gp_device_operand_of(PyObject *tuple, gp_device_operand *operand);

/* The dimensions of a host output of `count` elements: those of the tuple `shape`, or (count,) when
 * shape is None; ValueError when they do not hold count elements. */
int gp_output_dims(PyObject *shape, int64_t count, int *ndim, npy_intp *dims);
/* A new C-contiguous host output of `descr` (a reference stolen) and dims; with `pinned`, in a block
 * from gpuprims' cache of page-locked result blocks (ordinary memory where pinning fails). */
PyArrayObject *gp_new_output(PyArray_Descr *descr, int ndim, const npy_intp *dims, int pinned);

/* A copy's arguments from a NumPy view: its shape, element strides and item size; -1 when an
 * element is not aligned to its size, so that byte strides are not whole elements. */
int gp_copy_args_of(PyArrayObject *array, gp_copy_args *args);

#endif
