/* The call entries: one per primitive, each parsing its Python arguments into a gp_call, then
 * planning it and running it (csrc/planner/), with the GIL released while it runs.
 *
 * Every entry starts with the same four arguments:
 *   src      the input: a numpy.ndarray on the host, or a device operand (ptr, typenum, shape,
 *            strides) of device-resident data;
 *   out      for host inputs the result's shape (a tuple, or None for 1-D), or the array the result
 *            is written to (C-contiguous, aligned, writeable, of the result's dtype and size: a
 *            function's out=); for device operands the device address the result is written to;
 *   device   a CUDA device index, -1 for the CPU, -2 for wherever the call finishes first;
 *   repeats  0 runs the call and returns its result (a new array, or a NumPy scalar for shape ();
 *            None for device operands); N > 0 returns the milliseconds of N runs of its work (a host
 *            input is uploaded once); -1 returns the plan as a dict without running anything; -2
 *            returns the tiles a streamed call would be cut into (the tests' view of the tilers).
 *
 * The quick lane (quick, learn_quick, pause_quick) replays the public functions' most common calls
 * without Python's argument handling, from what their first such call taught it. */
#include "glue/calls.h"

#include <math.h>
#include <string.h>

#include "contract/copy_layout.h"
#include "glue/arguments.h"
#include "glue/errors.h"
#include "glue/fp_errors.h"
#include "planner/planner.h"
#ifndef GPUPRIMS_NO_CUDA
#include "gpuprims_cuda.h"
#endif

enum { DESCRIBE = -1, TILES = -2 };

/* CPU calls moving fewer bytes than this run without releasing the GIL: they take about as long
 * as its release and reacquisition (~0.1 us), and no other thread could use the pause. */
static const size_t gil_release_min_bytes = 16384;

/* A call being made from Python arguments, and the objects it holds on to. */
typedef struct {
    gp_call call;
    int resident;             /* in and out are device addresses */
    gp_device_operand device; /* the input, when device-resident */
    PyArrayObject *input;     /* the host input the call reads (owned), or NULL */
    gp_copy_args view;        /* the input's strided view, when call.in_view points here */
    PyObject *held[2];        /* host arrays the call reads besides (a correlation's mask and fill, a
                                 scan's initial values) */
    PyArray_Descr *out_descr; /* the host output's dtype (owned) */
    int64_t out_count;        /* the output's elements */
    PyArrayObject *target;    /* the host array the caller gave for the result (borrowed), or NULL */
    gp_environment env;       /* the call's settings, once env_read: read at most once per call */
    int env_read;
    int non_finite;           /* a scan's gp_scan_args.non_finite: -1 until a backend tells */
    int resident_flag;        /* a resident scan returns its backend's non_finite (Python's check) */
} request;

static void release(request *r)
{
    Py_XDECREF(r->input);
    Py_XDECREF(r->held[0]);
    Py_XDECREF(r->held[1]);
    Py_XDECREF(r->out_descr);
}

/* The call's input: a host array made C-contiguous and native (unless `strided`: as it is), or a
 * device operand; *dtype is its gp_dtype and *count its elements. */
static int take_input(request *r, PyObject *src, int strided, gp_dtype *dtype, int64_t *count)
{
    if (PyTuple_Check(src)) {
        if (gp_device_operand_of(src, &r->device)) return -1;
        r->resident = 1;
        r->call.in = r->device.ptr;
        *dtype = r->device.dtype;
        *count = 1;
        for (int d = 0; d < r->device.ndim; ++d) *count *= r->device.shape[d];
        return 0;
    }
    if (strided) {
        const int code = PyArray_Check(src) ? gp_dtype_of(PyArray_DESCR((PyArrayObject *)src)) : -2;
        if (code < 0) {
            if (code == -2) PyErr_SetString(PyExc_TypeError, "expected a numpy.ndarray");
            else PyErr_Format(PyExc_TypeError, "unsupported dtype %R", (PyObject *)PyArray_DESCR((PyArrayObject *)src));
            return -1;
        }
        Py_INCREF(src);
        r->input = (PyArrayObject *)src;
        *dtype = (gp_dtype)code;
    } else if ((r->input = gp_contiguous_input(src, dtype)) == NULL) {
        return -1;
    }
    r->call.in = PyArray_DATA(r->input);
    *count = PyArray_SIZE(r->input);
    return 0;
}

/* The host output's dtype from a NumPy type number; *dtype is its gp_dtype. */
static int take_out_typenum(request *r, int typenum, gp_dtype *dtype)
{
    r->out_descr = PyArray_DescrFromType(typenum);
    const int code = r->out_descr ? gp_dtype_of(r->out_descr) : -1;
    if (code < 0 && r->out_descr) PyErr_Format(PyExc_TypeError, "unsupported dtype %R", (PyObject *)r->out_descr);
    *dtype = (gp_dtype)code;
    return code < 0 ? -1 : 0;
}

/* Keeps src, a strided view of a row reduction or scan that the CPU backend may read in place
 * (aligned, native, not C-contiguous), as the call's input: 1, else 0 (take_input makes it
 * contiguous). */
static int take_strided_rows(request *r, PyObject *src, int64_t inner, gp_dtype *dtype)
{
    if ((r->call.primitive != GP_REDUCE && r->call.primitive != GP_SCAN) || inner != 1 || !PyArray_Check(src)) return 0;
    PyArrayObject *array = (PyArrayObject *)src;
    const int code = gp_dtype_of(PyArray_DESCR(array));
    if (code < 0 || PyArray_IS_C_CONTIGUOUS(array) || !PyArray_ISNOTSWAPPED(array) || PyArray_SIZE(array) == 0 ||
        gp_copy_args_of(array, &r->view))
        return 0;
    gp_copy_merge(&r->view);
    Py_INCREF(src);
    r->input = array;
    r->call.in = PyArray_DATA(array);
    r->call.in_view = &r->view;
    *dtype = (gp_dtype)code;
    return 1;
}

/* The input and the output dtype of a call over src's (outer, n, inner) view of `elements`. */
static int take_view(request *r, PyObject *src, int out_typenum, int64_t elements, int64_t inner,
                     gp_dtype *in_dtype, gp_dtype *out_dtype)
{
    int64_t count;
    if (take_strided_rows(r, src, inner, in_dtype)) count = PyArray_SIZE(r->input);
    else if (take_input(r, src, 0, in_dtype, &count)) return -1;
    if (take_out_typenum(r, out_typenum, out_dtype)) return -1;
    if (count == elements) return 0;
    PyErr_SetString(PyExc_ValueError, "the input's size does not match the call's shape");
    return -1;
}

/* ---- describing a call ---------------------------------------------------------------------------- */

static PyObject *describe(const gp_call *call, const gp_plan *plan)
{
    PyObject *device = plan->route == GP_ROUTE_CPU ? PyUnicode_FromString("cpu")
                                                    : PyUnicode_FromFormat("cuda:%d", plan->device);
    const int estimated = plan->cpu_us > 0.0 || plan->cuda_us > 0.0;
    if (!estimated) Py_INCREF(Py_None), Py_INCREF(Py_None);
    PyObject *cpu_us = estimated ? PyFloat_FromDouble(plan->cpu_us) : Py_None;
    PyObject *cuda_us = estimated ? PyFloat_FromDouble(plan->cuda_us) : Py_None;
    PyObject *result = NULL;
    if (device && cpu_us && cuda_us)
        result = Py_BuildValue("{s:s,s:s,s:O,s:n,s:n,s:O,s:O,s:O,s:O,s:O}", "primitive",
                               gp_primitive_name(call->primitive), "route", gp_route_name(plan->route), "device",
                               device, "in_bytes", (Py_ssize_t)plan->in_bytes, "out_bytes",
                               (Py_ssize_t)plan->out_bytes, "input_pinned", plan->input_pinned ? Py_True : Py_False,
                               "result_pinned", plan->result_pinned ? Py_True : Py_False, "result_touched",
                               plan->touch_result ? Py_True : Py_False, "cpu_us", cpu_us, "cuda_us", cuda_us);
    Py_XDECREF(device);
    Py_XDECREF(cpu_us);
    Py_XDECREF(cuda_us);
    return result;
}

#ifndef GPUPRIMS_NO_CUDA
static PyObject *box_tuple(const gp_box *b)
{
    return Py_BuildValue("(LLLLLL)", (long long)b->o0, (long long)b->o_count, (long long)b->k0, (long long)b->k_count,
                         (long long)b->i0, (long long)b->i_count);
}

/* Appends (box, [input boxes]) to the list ctx; stops adding once something failed. */
static void append_tile(void *ctx, const gp_box *box, const gp_box *inputs, int64_t input_count)
{
    PyObject *tiles = ctx;
    if (PyErr_Occurred()) return;
    PyObject *input_list = PyList_New(0);
    for (int64_t i = 0; input_list != NULL && i < input_count; ++i) {
        PyObject *item = box_tuple(&inputs[i]);
        if (item == NULL || PyList_Append(input_list, item) < 0) Py_CLEAR(input_list);
        Py_XDECREF(item);
    }
    PyObject *tile = input_list ? Py_BuildValue("(NN)", box_tuple(box), input_list) : NULL;
    if (tile != NULL) PyList_Append(tiles, tile);
    Py_XDECREF(tile);
}
#endif

static PyObject *tiles(const gp_call *call, const gp_plan *plan)
{
#ifdef GPUPRIMS_NO_CUDA
    (void)call, (void)plan;
    return gp_raise_no_cuda();
#else
    PyObject *list = PyList_New(0);
    gp_error err = {GP_OK, ""};
    if (list != NULL && gp_cuda_stream_tiles(call, plan, append_tile, list, &err)) {
        Py_DECREF(list);
        return gp_raise(&err);
    }
    if (PyErr_Occurred()) Py_CLEAR(list);
    return list;
#endif
}

/* ---- planning and running -------------------------------------------------------------------------- */

/* A host call's `out` argument when it is an array (the result's destination): checked, and
 * call.out set to it before planning, so that the planner sees whether it is pinned. */
static int take_target(request *r, PyObject *out)
{
    if (r->resident || !PyArray_Check(out)) return 0;
    PyArrayObject *target = (PyArrayObject *)out;
    const int flags = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE;
    if (!PyArray_CHKFLAGS(target, flags) || PyArray_SIZE(target) != r->out_count ||
        !PyArray_EquivTypes(PyArray_DESCR(target), r->out_descr)) {
        PyErr_SetString(PyExc_ValueError, "out must be a C-contiguous, aligned, writeable array of the result's "
                                          "dtype and size");
        return -1;
    }
    r->target = target;
    r->call.out = PyArray_DATA(target);
    return 0;
}

/* The call's environment settings, read on first use (a CPU call needs none). */
static const gp_environment *environment_of(request *r)
{
    if (!r->env_read) {
        r->env = gp_environment_now();
        r->env_read = 1;
    }
    return &r->env;
}

static int plan_request(request *r, int device, int repeats, gp_plan *plan)
{
    static const gp_environment unread;
    const gp_environment *env = device == GP_DEVICE_CPU || r->resident ? &unread : environment_of(r);
    gp_error err = {GP_OK, ""};
    if (gp_plan_call(&r->call, device, r->resident, repeats, env, plan, &err) == 0) return 0;
    gp_raise(&err);
    return -1;
}

/* Runs (or describes, or times) a planned request; releases it. */
static PyObject *run_planned(request *r, const gp_plan *plan, PyObject *out, int repeats)
{
    PyObject *result = NULL;
    float *times = NULL;
    if (repeats == DESCRIBE || repeats == TILES) {
        result = repeats == DESCRIBE ? describe(&r->call, plan) : tiles(&r->call, plan);
        release(r);
        return result;
    }
    if (repeats < 0) {
        PyErr_SetString(PyExc_ValueError, "repeats must be >= -2");
        goto done;
    }
    if (r->resident) {
        r->call.out = PyLong_AsVoidPtr(out);
        if (r->call.out == NULL && PyErr_Occurred()) goto done;
    } else if (r->target != NULL) {
        result = (PyObject *)r->target;
        Py_INCREF(result);
    } else if (repeats == 0 || plan->route == GP_ROUTE_CPU) { /* a timed GPU call has a device output */
        int ndim;
        npy_intp dims[GP_MAX_DIMS];
        if (gp_output_dims(out, r->out_count, &ndim, dims)) goto done;
        PyArray_Descr *descr = r->out_descr;
        r->out_descr = NULL; /* stolen by gp_new_output */
        result = (PyObject *)gp_new_output(descr, ndim, dims, plan->result_pinned);
        if (result == NULL) goto done;
        r->call.out = PyArray_DATA((PyArrayObject *)result);
    }
    if (repeats > 0 && (times = PyMem_Calloc((size_t)repeats, sizeof(float))) == NULL) {
        Py_CLEAR(result);
        PyErr_NoMemory();
        goto done;
    }
    /* A timed call (repeats > 0) times the kernels alone: its results are not checked. */
    if (repeats == 0 && gp_fp_checked(&r->call) && r->call.primitive == GP_SCAN && (!r->resident || r->resident_flag)) {
        r->non_finite = -1;
        r->call.scan.non_finite = &r->non_finite;
    }
    gp_error err = {GP_OK, ""};
    int status;
    if (plan->route == GP_ROUTE_CPU && repeats == 0 && plan->in_bytes + plan->out_bytes < gil_release_min_bytes) {
        status = gp_run_call(&r->call, plan, times, &err);
    } else {
        Py_BEGIN_ALLOW_THREADS
        status = gp_run_call(&r->call, plan, times, &err);
        Py_END_ALLOW_THREADS
    }
    if (status) {
        Py_CLEAR(result);
        gp_raise(&err);
    } else if (repeats > 0) {
        Py_XSETREF(result, PyList_New(repeats));
        for (int i = 0; result != NULL && i < repeats; ++i) PyList_SET_ITEM(result, i, PyFloat_FromDouble(times[i]));
    } else if (result == NULL) { /* a resident call: the result is where `out` points */
        result = r->call.primitive == GP_SCAN && r->call.scan.non_finite != NULL ? PyLong_FromLong(r->non_finite)
                                                                                 : Py_NewRef(Py_None);
    } else if (gp_report_fp_errors(&r->call, (PyArrayObject *)result, r->input,
                                   r->call.primitive == GP_SCAN ? r->held[0] : NULL)) {
        Py_CLEAR(result); /* np.errstate said raise */
    } else {
        result = PyArray_Return((PyArrayObject *)result); /* a 0-d result becomes a NumPy scalar */
    }
done:
    PyMem_Free(times);
    release(r);
    return result;
}

/* A strided input planned for the GPU's short path: made contiguous (its one upload reads
 * contiguous host data; it is at most stream_min_bytes), and the call planned again for it.  The
 * streamed route gathers the view tile by tile into its staging slots instead. */
static int contiguous_for_gpu(request *r, int device, int repeats, gp_plan *plan)
{
    if (r->call.in_view == NULL || plan->route == GP_ROUTE_CPU || plan->route == GP_ROUTE_STREAMED) return 0;
    gp_dtype dtype;
    PyArrayObject *contiguous = gp_contiguous_input((PyObject *)r->input, &dtype);
    if (contiguous == NULL) return -1;
    Py_SETREF(r->input, contiguous);
    r->call.in = PyArray_DATA(contiguous);
    r->call.in_view = NULL;
    return plan_request(r, device, repeats, plan);
}

static PyObject *plan_and_run(request *r, PyObject *out, int device, int repeats)
{
    gp_plan plan;
    if (take_target(r, out) || plan_request(r, device, repeats, &plan) || contiguous_for_gpu(r, device, repeats, &plan)) {
        release(r);
        return NULL;
    }
    return run_planned(r, &plan, out, repeats);
}

/* ---- the entries ------------------------------------------------------------------------------------ */

#define COMMON_FORMAT "OOii"

PyDoc_STRVAR(reduce_doc, "reduce(src, out, device, repeats, op, out_typenum, outer, n, inner, ddof=0.0, skip_nan=False)\n\n"
                         "Reduce (op: gp_op's 0 sum, 1 prod, 2 min, 3 max, 4 argmin, 5 argmax, 6 any, 7 all,\n"
                         "8 count_nonzero, 9 var, 10 std, 11 mean; ddof: var's and std's; skip_nan: NaN elements left\n"
                         "out, as NumPy's nan-functions) along n of src's (outer, n, inner) view.");

static PyObject *core_reduce(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    PyObject *src, *out;
    int device, repeats, op, out_typenum;
    long long outer, n, inner;
    double ddof = 0.0;
    int skip_nan = 0;
    if (gp_parse_arguments("reduce", args, nargs, COMMON_FORMAT "iiLLL|dp", &src, &out, &device, &repeats, &op,
                           &out_typenum, &outer, &n, &inner, &ddof, &skip_nan))
        return NULL;
    request r = {.call = {.primitive = GP_REDUCE}};
    gp_dtype in_dtype, out_dtype;
    if (take_view(&r, src, out_typenum, outer * n * inner, inner, &in_dtype, &out_dtype)) {
        release(&r);
        return NULL;
    }
    r.call.reduce = (gp_reduce_args){(gp_op)op, in_dtype, out_dtype, outer, n, inner, ddof, skip_nan};
    r.out_count = outer * inner;
    return plan_and_run(&r, out, device, repeats);
}

PyDoc_STRVAR(scan_doc, "scan(src, out, device, repeats, out_typenum, outer, n, inner, exclusive, op=0,\n"
                       "     skip_nan=False, initial=None, non_finite=False)\n\n"
                       "Scan (op: 0 sum, 1 prod, 2 min, 3 max; NaN read as op's identity with skip_nan) along n\n"
                       "of src's (outer, n, inner) view, each (outer, inner) row from its value in initial\n"
                       "(None: op's identity; a host array of outer * inner values, float64 for a float result,\n"
                       "else int64 or uint64; see gp_scan_args).  non_finite: a device-resident float sum or\n"
                       "product returns whether it wrote any inf or NaN (1) or none (0), once the scan is done\n"
                       "(host results are checked here).");

/* Points the scan at its initial values, obj (None: none), which the request then holds; -1 with
 * ValueError when obj is not outer * inner values of the type gp_scan_args.initial names. */
static int take_initial(request *r, PyObject *obj, gp_scan_args *scan)
{
    if (obj == Py_None) return 0;
    gp_dtype dtype;
    PyArrayObject *initial = gp_contiguous_input(obj, &dtype);
    if (initial == NULL) return -1;
    r->held[0] = (PyObject *)initial;
    const int of_float = gp_dtype_is_float(scan->out_dtype);
    if ((of_float ? dtype != GP_FLOAT64 : dtype != GP_INT64 && dtype != GP_UINT64) ||
        PyArray_SIZE(initial) != scan->outer * scan->inner) {
        PyErr_Format(PyExc_ValueError, "scan: initial must be %lld %s values, one per row",
                     (long long)(scan->outer * scan->inner), of_float ? "float64" : "int64 or uint64");
        return -1;
    }
    scan->initial = PyArray_DATA(initial);
    return 0;
}

static PyObject *core_scan(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    PyObject *src, *out, *initial = Py_None;
    int device, repeats, out_typenum, exclusive, op = GP_SUM, skip_nan = 0, resident_flag = 0;
    long long outer, n, inner;
    if (gp_parse_arguments("scan", args, nargs, COMMON_FORMAT "iLLLp|ipOp", &src, &out, &device, &repeats,
                           &out_typenum, &outer, &n, &inner, &exclusive, &op, &skip_nan, &initial, &resident_flag))
        return NULL;
    request r = {.call = {.primitive = GP_SCAN}, .resident_flag = resident_flag};
    gp_dtype in_dtype, out_dtype;
    if (take_view(&r, src, out_typenum, outer * n * inner, inner, &in_dtype, &out_dtype)) {
        release(&r);
        return NULL;
    }
    r.call.scan = (gp_scan_args){in_dtype, out_dtype, outer, n, inner, exclusive, (gp_op)op, skip_nan, NULL, NULL};
    if (take_initial(&r, initial, &r.call.scan)) {
        release(&r);
        return NULL;
    }
    r.out_count = outer * n * inner;
    return plan_and_run(&r, out, device, repeats);
}

PyDoc_STRVAR(correlate_doc,
             "correlate(src, out, device, repeats, mask, fill, out_rows, out_cols, row_offset, col_offset, boundary)\n\n"
             "out[i, j] = sum of mask[p, q] * image(i + row_offset + p, j + col_offset + q) for the 2-D image src\n"
             "(see gp_correlate_args); mask (2-D) and fill (one element) are host arrays of src's dtype.");

/* Plans and runs the correlation of the request's image (image_rows x image_cols) with mask_obj and
 * fill_obj (host arrays of the image's dtype); releases the request. */
static PyObject *correlate_request(request *r, gp_dtype dtype, int64_t image_rows, int64_t image_cols,
                                   PyObject *mask_obj, PyObject *fill_obj, const gp_correlate_args *window,
                                   PyObject *out, int device, int repeats)
{
    gp_dtype mask_dtype = GP_NUM_DTYPES, fill_dtype = GP_NUM_DTYPES;
    PyArrayObject *mask = gp_contiguous_input(mask_obj, &mask_dtype);
    r->held[0] = (PyObject *)mask;
    PyArrayObject *fill = mask ? gp_contiguous_input(fill_obj, &fill_dtype) : NULL;
    r->held[1] = (PyObject *)fill;
    if (fill == NULL) goto fail;
    if (PyArray_NDIM(mask) != 2) {
        PyErr_SetString(PyExc_TypeError, "correlate: expected a 2-D image and a 2-D mask array");
        goto fail;
    }
    if (mask_dtype != dtype || fill_dtype != dtype || PyArray_SIZE(fill) != 1) {
        PyErr_SetString(PyExc_ValueError, "correlate: the mask and the fill value must be of the image's dtype");
        goto fail;
    }
    r->call.correlate = *window;
    r->call.correlate.dtype = dtype;
    r->call.correlate.rows = image_rows;
    r->call.correlate.cols = image_cols;
    r->call.correlate.mask_rows = PyArray_DIM(mask, 0);
    r->call.correlate.mask_cols = PyArray_DIM(mask, 1);
    r->call.correlate.mask = PyArray_DATA(mask);
    r->call.correlate.fill = PyArray_DATA(fill);
    if (!r->resident) {
        r->out_descr = PyArray_DESCR(r->input);
        Py_INCREF(r->out_descr);
    }
    r->out_count = window->out_rows * window->out_cols;
    return plan_and_run(r, out, device, repeats);
fail:
    release(r);
    return NULL;
}

static PyObject *core_correlate(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    PyObject *src, *out, *mask, *fill;
    int device, repeats, boundary;
    long long out_rows, out_cols, row_offset, col_offset;
    if (gp_parse_arguments("correlate", args, nargs, COMMON_FORMAT "OOLLLLi", &src, &out, &device, &repeats, &mask,
                           &fill, &out_rows, &out_cols, &row_offset, &col_offset, &boundary))
        return NULL;
    request r = {.call = {.primitive = GP_CORRELATE}};
    gp_dtype dtype;
    int64_t count;
    if (take_input(&r, src, 0, &dtype, &count)) {
        release(&r);
        return NULL;
    }
    const int image_ndim = r.resident ? r.device.ndim : PyArray_NDIM(r.input);
    if (image_ndim != 2 || !PyArray_Check(mask)) {
        PyErr_SetString(PyExc_TypeError, "correlate: expected a 2-D image and a 2-D mask array");
        release(&r);
        return NULL;
    }
    const gp_correlate_args window = {.boundary = (gp_boundary)boundary, .out_rows = out_rows, .out_cols = out_cols,
                                      .row_offset = row_offset, .col_offset = col_offset};
    return correlate_request(&r, dtype, r.resident ? r.device.shape[0] : PyArray_DIM(r.input, 0),
                             r.resident ? r.device.shape[1] : PyArray_DIM(r.input, 1), mask, fill, &window, out,
                             device, repeats);
}

PyDoc_STRVAR(copy_doc, "copy(src, out, device, repeats)\n\n"
                       "A C-contiguous copy of the strided view src (any strides, any byte order: the result keeps\n"
                       "src's dtype); a transpose is the copy of a permuted view.");

/* The copy of the request's host input, its axes reversed when reverse_axes is set (a transpose);
 * -1 when the input is not aligned to its elements. */
static int host_copy_args(request *r, int reverse_axes)
{
    gp_copy_args *copy = &r->call.copy;
    const int status = gp_copy_args_of(r->input, copy);
    for (int d = 0; reverse_axes && d < copy->ndim / 2; ++d) {
        const int e = copy->ndim - 1 - d;
        const int64_t shape = copy->shape[d], stride = copy->strides[d];
        copy->shape[d] = copy->shape[e], copy->strides[d] = copy->strides[e];
        copy->shape[e] = shape, copy->strides[e] = stride;
    }
    return status;
}

/* Plans and runs the C-contiguous copy of the strided view src (a host array or a device operand),
 * or with reverse_axes of its transpose (host arrays only), for the request r (new, or with its
 * environment read); out as for the entries. */
static PyObject *copy_request(request *r, PyObject *src, int reverse_axes, PyObject *out, int device, int repeats)
{
    r->call.primitive = GP_COPY;
    gp_dtype dtype;
    int64_t count;
    if (take_input(r, src, 1, &dtype, &count)) goto fail;
    gp_copy_args *copy = &r->call.copy;
    if (r->resident) {
        *copy = (gp_copy_args){.ndim = r->device.ndim, .elem_size = gp_dtype_size(dtype)};
        for (int d = 0; d < copy->ndim; ++d) {
            copy->shape[d] = r->device.shape[d];
            copy->strides[d] = r->device.strides[d];
        }
    } else {
        if (host_copy_args(r, reverse_axes)) { /* unaligned: NumPy gathers it first */
            Py_SETREF(r->input, (PyArrayObject *)PyArray_NewCopy(r->input, NPY_KEEPORDER));
            if (r->input == NULL) goto fail;
            host_copy_args(r, reverse_axes);
            r->call.in = PyArray_DATA(r->input);
        }
        r->out_descr = PyArray_DESCR(r->input);
        Py_INCREF(r->out_descr);
    }
    r->out_count = count;
    gp_plan plan;
    if (plan_request(r, device, repeats, &plan)) goto fail;
    /* A view whose span has gaps would carry them to the device: NumPy gathers it there first. */
    if (!r->resident && plan.route != GP_ROUTE_CPU && plan.in_bytes > plan.out_bytes) {
        Py_SETREF(r->input, (PyArrayObject *)PyArray_NewCopy(r->input, NPY_KEEPORDER));
        if (r->input == NULL) goto fail;
        host_copy_args(r, reverse_axes);
        r->call.in = PyArray_DATA(r->input);
        if (plan_request(r, plan.device, repeats, &plan)) goto fail;
    }
    return run_planned(r, &plan, out, repeats);
fail:
    release(r);
    return NULL;
}

static PyObject *core_copy(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    PyObject *src, *out;
    int device, repeats;
    if (gp_parse_arguments("copy", args, nargs, COMMON_FORMAT, &src, &out, &device, &repeats)) return NULL;
    request r = {.call = {.primitive = GP_COPY}};
    return copy_request(&r, src, 0, out, device, repeats);
}

PyDoc_STRVAR(convert_doc, "convert(src, out, device, repeats, out_typenum, divisor)\n\n"
                          "Casts device-resident elements as NumPy's astype (after dividing floats by divisor\n"
                          "when it is not 0).");

static PyObject *core_convert(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    PyObject *src, *out;
    int device, repeats, out_typenum;
    long long divisor;
    if (gp_parse_arguments("convert", args, nargs, COMMON_FORMAT "iL", &src, &out, &device, &repeats, &out_typenum,
                           &divisor))
        return NULL;
    request r = {.call = {.primitive = GP_CONVERT}};
    gp_dtype in_dtype, out_dtype;
    int64_t count;
    if (take_input(&r, src, 0, &in_dtype, &count) || take_out_typenum(&r, out_typenum, &out_dtype)) {
        release(&r);
        return NULL;
    }
    r.call.convert = (gp_convert_args){in_dtype, out_dtype, count, divisor};
    r.out_count = count;
    return plan_and_run(&r, out, device, repeats);
}

/* ---- the quick lane ---------------------------------------------------------------------------------- */

/* A public function's common call (NumPy arrays of a native dtype, the other arguments plain, device
 * None or "cpu") replayed from the plan Python made for the first such call: Python decides NumPy's
 * semantics once and teaches the lane its answer (learn_quick); later calls skip Python's argument
 * handling (a 64-element sum then costs less than numpy.sum).  Python asks the lane first and takes
 * its full path when the answer is NotImplemented.  What a recipe replays, and the arguments the
 * lane then takes after (slot, a, device):
 *   QUICK_WHOLE      a reduction of the whole array;
 *   QUICK_AXIS       (axis): a reduction along one axis (an int; negative counts from the end);
 *                    either, for numpy.mean, a sum then divided by the count as NumPy divides;
 *   QUICK_SCAN       a scan of the whole array (flattened in C order, as numpy.cumsum's axis None);
 *   QUICK_SCAN_AXIS  (axis): a scan along one axis (an int; negative counts from the end);
 *   QUICK_TRANSPOSE  the copy of the array with its axes reversed;
 *   QUICK_CORRELATE  (mask, mode): a correlation of arrays of the shapes and the mode it was learned
 *                    for, with the same windows; the mask reversed for a convolution; with
 *                    `overlaps_only` (NumPy's 1-D functions) only for finite masks. */
enum { QUICK_SLOTS = 64, QUICK_DECLINED = -3 /* quick_device's answer for a device the lane leaves to Python */ };

typedef enum {
    QUICK_WHOLE, QUICK_AXIS, QUICK_SCAN, QUICK_SCAN_AXIS, QUICK_TRANSPOSE, QUICK_CORRELATE, QUICK_KINDS
} quick_kind;
static const int quick_extra_arguments[QUICK_KINDS] = {0, 1, 0, 1, 0, 2};

typedef struct {
    int known;
    quick_kind kind;
    int in_typenum;       /* the input's exact NumPy type (int64 and longlong share a gp_dtype) */
    gp_op op;             /* reductions and scans */
    int out_typenum;
    int exclusive, skip_nan;
    int mean_typenum;     /* reductions: -1, or a mean's result type (the sum is divided by the count) */
    int ndim;             /* correlations: the shapes learned (a 1-D signal is one row) */
    int64_t image[2], mask[2];
    PyObject *mode;       /* (owned) the mode argument learned: an exact str or int */
    int flip, overlaps_only;
    gp_correlate_args window;
} quick_recipe;

static quick_recipe quick_recipes[QUICK_SLOTS][GP_NUM_DTYPES];
static int quick_auto_device = -1; /* device None's index: -2 (auto) with a usable GPU, else -1 */
static int quick_pauses;           /* nonzero while a dry run plans a call (the lane would run it) */

/* The recipe for `src`, or NULL (the lane declines). */
static const quick_recipe *quick_recipe_for(int slot, PyObject *src, Py_ssize_t extra)
{
    if (quick_pauses || slot < 0 || slot >= QUICK_SLOTS || !PyArray_CheckExact(src)) return NULL;
    PyArrayObject *array = (PyArrayObject *)src;
    if (PyArray_SIZE(array) == 0 || !PyArray_ISNOTSWAPPED(array)) return NULL;
    const int dtype = gp_dtype_of(PyArray_DESCR(array));
    if (dtype < 0) return NULL;
    const quick_recipe *recipe = &quick_recipes[slot][dtype];
    if (!recipe->known || recipe->in_typenum != PyArray_TYPE(array) || quick_extra_arguments[recipe->kind] != extra)
        return NULL;
    return recipe;
}

/* The backend index of `device` (None or "cpu"), or QUICK_DECLINED; None reads the call's
 * environment into r (GPUPRIMS_DEVICE, when set, is Python's to read). */
static int quick_device(PyObject *device, request *r)
{
    if (device == Py_None) return environment_of(r)->device != NULL ? QUICK_DECLINED : quick_auto_device;
    if (PyUnicode_Check(device) && PyUnicode_CompareWithASCIIString(device, "cpu") == 0) return -1;
    return QUICK_DECLINED;
}

static PyObject *shape_tuple(int ndim, const npy_intp *dims)
{
    PyObject *shape = PyTuple_New(ndim);
    for (int d = 0; shape != NULL && d < ndim; ++d) {
        PyObject *item = PyLong_FromSsize_t(dims[d]);
        if (item == NULL) Py_CLEAR(shape);
        else PyTuple_SET_ITEM(shape, d, item);
    }
    return shape;
}

/* numpy.mean's division of the sum `total` (a NumPy scalar or array; a reference stolen) by `count`,
 * by NumPy itself, as the full path's finish step: a scalar's quotient made the result's type, an
 * array divided in place and cast to the result's dtype. */
static PyObject *mean_of(PyObject *total, int64_t count, int result_typenum)
{
    PyObject *divisor = PyLong_FromLongLong(count);
    PyArray_Descr *descr = divisor ? PyArray_DescrFromType(result_typenum) : NULL;
    PyObject *result = NULL;
    if (descr != NULL && PyArray_Check(total)) {
        PyObject *quotient = PyNumber_InPlaceTrueDivide(total, divisor);
        if (quotient != NULL && PyArray_TYPE((PyArrayObject *)quotient) != result_typenum) {
            Py_INCREF(descr);
            result = PyArray_CastToType((PyArrayObject *)quotient, descr, 0);
            Py_DECREF(quotient);
        } else {
            result = quotient;
        }
    } else if (descr != NULL) {
        PyObject *quotient = PyNumber_TrueDivide(total, divisor);
        result = quotient ? PyObject_CallOneArg((PyObject *)descr->typeobj, quotient) : NULL;
        Py_XDECREF(quotient);
    }
    Py_XDECREF(descr);
    Py_XDECREF(divisor);
    Py_DECREF(total);
    return result;
}

/* The index of the axis `axis` names in an array of ndim dimensions, or -1 where it is not an int
 * in range (the lane declines: Python raises NumPy's error). */
static int quick_axis(PyObject *axis, int ndim)
{
    if (!PyLong_CheckExact(axis)) return -1;
    const long value = PyLong_AsLong(axis);
    if (value == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    if (value < -ndim || value >= ndim) return -1;
    return (int)(value < 0 ? value + ndim : value);
}

/* src as (outer, n, inner) around the axis `along` (the whole array as n when along is -1), and
 * the other axes' extents in dims (their count returned). */
static int quick_view(PyArrayObject *src, int along, int64_t *outer, int64_t *n, int64_t *inner, npy_intp *dims)
{
    const npy_intp *shape = PyArray_DIMS(src);
    int count = 0;
    *outer = 1, *n = along < 0 ? PyArray_SIZE(src) : shape[along], *inner = 1;
    for (int d = 0; along >= 0 && d < PyArray_NDIM(src); ++d) {
        if (d == along) continue;
        dims[count++] = shape[d];
        if (d < along) *outer *= shape[d];
        else *inner *= shape[d];
    }
    return count;
}

/* A reduction of the whole array (axis NULL) or along the axis `axis`. */
static PyObject *quick_reduce(request *r, const quick_recipe *recipe, PyArrayObject *src, PyObject *axis,
                              int device)
{
    const int along = axis != NULL ? quick_axis(axis, PyArray_NDIM(src)) : -1;
    if (axis != NULL && along < 0) Py_RETURN_NOTIMPLEMENTED;
    int64_t outer, n, inner;
    npy_intp dims[GP_MAX_DIMS];
    PyObject *out_shape = shape_tuple(quick_view(src, along, &outer, &n, &inner, dims), dims);
    if (out_shape == NULL) return NULL;
    r->call.primitive = GP_REDUCE;
    gp_dtype in_dtype, out_dtype;
    PyObject *result = NULL;
    if (take_view(r, (PyObject *)src, recipe->out_typenum, outer * n * inner, inner, &in_dtype, &out_dtype)) {
        release(r);
    } else {
        r->call.reduce = (gp_reduce_args){recipe->op, in_dtype, out_dtype, outer, n, inner, 0.0, recipe->skip_nan};
        r->out_count = outer * inner;
        result = plan_and_run(r, out_shape, device, 0);
    }
    Py_DECREF(out_shape);
    return result != NULL && recipe->mean_typenum >= 0 ? mean_of(result, n, recipe->mean_typenum) : result;
}

/* A scan of the whole array flattened (axis NULL: a 1-D result) or along the axis `axis` (a result
 * of src's shape). */
static PyObject *quick_scan(request *r, const quick_recipe *recipe, PyArrayObject *src, PyObject *axis, int device)
{
    const int along = axis != NULL ? quick_axis(axis, PyArray_NDIM(src)) : -1;
    if (axis != NULL && along < 0) Py_RETURN_NOTIMPLEMENTED;
    int64_t outer, n, inner;
    npy_intp dims[GP_MAX_DIMS];
    quick_view(src, along, &outer, &n, &inner, dims);
    PyObject *out_shape = along < 0 ? Py_NewRef(Py_None) : shape_tuple(PyArray_NDIM(src), PyArray_DIMS(src));
    if (out_shape == NULL) return NULL;
    r->call.primitive = GP_SCAN;
    gp_dtype in_dtype, out_dtype;
    PyObject *result = NULL;
    if (take_view(r, (PyObject *)src, recipe->out_typenum, outer * n * inner, inner, &in_dtype, &out_dtype)) {
        release(r);
    } else {
        r->call.scan = (gp_scan_args){in_dtype,   out_dtype, outer, n, inner, recipe->exclusive,
                                      recipe->op, recipe->skip_nan, NULL, NULL};
        r->out_count = outer * n * inner;
        result = plan_and_run(r, out_shape, device, 0);
    }
    Py_DECREF(out_shape);
    return result;
}

/* The transpose with reversed axes: the copy of src's strides reversed, no view made. */
static PyObject *quick_transpose(request *r, PyArrayObject *src, int device)
{
    const int ndim = PyArray_NDIM(src);
    if (ndim == 0) Py_RETURN_NOTIMPLEMENTED; /* its result is 1-D (numpy.ascontiguousarray) */
    npy_intp dims[GP_MAX_DIMS];
    for (int d = 0; d < ndim; ++d) dims[d] = PyArray_DIM(src, ndim - 1 - d);
    PyObject *out_shape = shape_tuple(ndim, dims);
    PyObject *result = out_shape ? copy_request(r, (PyObject *)src, 1, out_shape, device, 0) : NULL;
    Py_XDECREF(out_shape);
    return result;
}

/* Whether every element of the float array is finite (for other dtypes: 1). */
static int all_finite(PyArrayObject *array, gp_dtype dtype)
{
    const int64_t n = PyArray_SIZE(array);
    const void *data = PyArray_DATA(array);
    if (dtype == GP_FLOAT16) {
        for (int64_t i = 0; i < n; ++i)
            if ((((const uint16_t *)data)[i] & 0x7c00u) == 0x7c00u) return 0; /* exponent all ones */
    } else if (dtype == GP_FLOAT32) {
        for (int64_t i = 0; i < n; ++i)
            if (!isfinite(((const float *)data)[i])) return 0;
    } else if (dtype == GP_FLOAT64) {
        for (int64_t i = 0; i < n; ++i)
            if (!isfinite(((const double *)data)[i])) return 0;
    }
    return 1;
}

/* The array's elements in reverse order (of a C-contiguous array: its reversal along every axis). */
static PyArrayObject *reversed_copy(PyArrayObject *array)
{
    PyArray_Descr *descr = PyArray_DESCR(array);
    Py_INCREF(descr);
    PyArrayObject *copy = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, PyArray_NDIM(array),
                                                                PyArray_DIMS(array), NULL, NULL, 0, NULL);
    if (copy == NULL) return NULL;
    const size_t size = (size_t)PyDataType_ELSIZE(descr);
    const int64_t n = PyArray_SIZE(array);
    const char *from = PyArray_DATA(array);
    char *to = PyArray_DATA(copy);
    for (int64_t i = 0; i < n; ++i) memcpy(to + (size_t)(n - 1 - i) * size, from + (size_t)i * size, size);
    return copy;
}

/* The zero fill of a correlation, one shared read-only 0-d array per dtype. */
static PyObject *zero_of(PyArray_Descr *descr, gp_dtype dtype)
{
    static PyObject *zeros[GP_NUM_DTYPES];
    if (zeros[dtype] == NULL) {
        Py_INCREF(descr);
        zeros[dtype] = PyArray_Zeros(0, NULL, descr, 0);
    }
    return zeros[dtype];
}

static int same_shape(PyArrayObject *array, int ndim, const int64_t learned[2])
{
    if (PyArray_NDIM(array) != ndim) return 0;
    for (int d = 0; d < ndim; ++d)
        if (PyArray_DIM(array, d) != learned[2 - ndim + d]) return 0;
    return 1;
}

static PyObject *quick_correlate(request *r, const quick_recipe *recipe, PyArrayObject *image, PyObject *mask_arg,
                                 PyObject *mode, int device)
{
    if (!PyArray_CheckExact(mask_arg) || PyArray_TYPE((PyArrayObject *)mask_arg) != recipe->in_typenum ||
        !PyArray_ISNOTSWAPPED((PyArrayObject *)mask_arg) || !same_shape(image, recipe->ndim, recipe->image) ||
        !same_shape((PyArrayObject *)mask_arg, recipe->ndim, recipe->mask) ||
        !(PyUnicode_CheckExact(mode) || PyLong_CheckExact(mode)))
        Py_RETURN_NOTIMPLEMENTED;
    const int same_mode = mode == recipe->mode ? 1 : PyObject_RichCompareBool(mode, recipe->mode, Py_EQ);
    if (same_mode <= 0) {
        if (same_mode < 0) PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    gp_dtype dtype;
    PyArrayObject *mask = gp_contiguous_input(mask_arg, &dtype);
    if (mask == NULL) return NULL;
    if (recipe->overlaps_only && !all_finite(mask, dtype)) {
        Py_DECREF(mask);
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (recipe->flip) Py_SETREF(mask, reversed_copy(mask));
    npy_intp mask_dims[2] = {recipe->mask[0], recipe->mask[1]};
    PyObject *mask_2d = mask ? PyArray_Newshape(mask, &(PyArray_Dims){mask_dims, 2}, NPY_CORDER) : NULL;
    Py_XDECREF(mask);
    PyObject *fill = mask_2d ? zero_of(PyArray_DESCR(image), dtype) : NULL;
    PyObject *out_shape = NULL;
    if (fill != NULL)
        out_shape = recipe->ndim == 1 ? (Py_INCREF(Py_None), Py_None)
                                      : Py_BuildValue("(LL)", (long long)recipe->window.out_rows,
                                                      (long long)recipe->window.out_cols);
    PyObject *result = NULL;
    r->call.primitive = GP_CORRELATE;
    gp_dtype image_dtype;
    int64_t count;
    if (out_shape != NULL && take_input(r, (PyObject *)image, 0, &image_dtype, &count) == 0)
        result = correlate_request(r, image_dtype, recipe->image[0], recipe->image[1], mask_2d, fill,
                                   &recipe->window, out_shape, device, 0);
    else
        release(r);
    Py_XDECREF(out_shape);
    Py_XDECREF(mask_2d);
    return result;
}

PyDoc_STRVAR(quick_doc, "quick(slot, a, device, *arguments)\n\n"
                        "The result of the call learned in `slot` on the NumPy array a (with the recipe's further\n"
                        "arguments: an axis; a mask and a mode), or NotImplemented when the lane has no recipe for\n"
                        "it (Python's full path then runs it).");

static PyObject *core_quick(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    int slot;
    PyObject *src, *device_arg;
    if (nargs < 3 || nargs > 5) {
        PyErr_Format(PyExc_TypeError, "quick() takes 3 to 5 positional arguments (%zd given)", nargs);
        return NULL;
    }
    if (gp_parse_arguments("quick", args, 3, "iOO", &slot, &src, &device_arg)) return NULL;
    const quick_recipe *found = quick_recipe_for(slot, src, nargs - 3);
    request r = {.env_read = 0}; /* owns nothing until a quick_* function takes its input */
    const int device = found ? quick_device(device_arg, &r) : QUICK_DECLINED;
    if (device == QUICK_DECLINED) Py_RETURN_NOTIMPLEMENTED;
    /* The call runs on its own copy: another thread may learn a new recipe for the slot while this
     * one has let go of the GIL (a copy into NumPy's memory, a collection, the run itself). */
    quick_recipe recipe = *found;
    Py_XINCREF(recipe.mode);
    PyArrayObject *array = (PyArrayObject *)src;
    PyObject *result;
    switch (recipe.kind) {
    case QUICK_WHOLE: result = quick_reduce(&r, &recipe, array, NULL, device); break;
    case QUICK_AXIS: result = quick_reduce(&r, &recipe, array, args[3], device); break;
    case QUICK_SCAN: result = quick_scan(&r, &recipe, array, NULL, device); break;
    case QUICK_SCAN_AXIS: result = quick_scan(&r, &recipe, array, args[3], device); break;
    case QUICK_TRANSPOSE: result = quick_transpose(&r, array, device); break;
    default: result = quick_correlate(&r, &recipe, array, args[3], args[4], device);
    }
    Py_XDECREF(recipe.mode);
    return result;
}

PyDoc_STRVAR(learn_quick_doc,
             "learn_quick(slot, in_typenum, kind, auto_device, *recipe)\n\n"
             "Teach the quick lane the call of `slot` on arrays of in_typenum; auto_device is device None's\n"
             "backend index.  kind and its recipe: 0 whole reduction and 1 reduction along an axis (op,\n"
             "out_typenum, skip_nan, mean_typenum=-1: a mean's result type, the sum divided by the count); 2 scan of a 1-D array (op, out_typenum, exclusive, skip_nan); 3 transpose\n"
             "(nothing); 4 correlation (image_shape, mask_shape, mode, flip, overlaps_only, out_rows, out_cols,\n"
             "row_offset, col_offset).");

static int learn_correlation(quick_recipe *recipe, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *image_shape, *mask_shape, *mode;
    long long out_rows, out_cols, row_offset, col_offset;
    if (gp_parse_arguments("learn_quick", args, nargs, "OOOppLLLL", &image_shape, &mask_shape, &mode, &recipe->flip,
                           &recipe->overlaps_only, &out_rows, &out_cols, &row_offset, &col_offset))
        return -1;
    const Py_ssize_t ndim = PyTuple_Check(image_shape) ? PyTuple_GET_SIZE(image_shape) : 0;
    if ((ndim != 1 && ndim != 2) || !PyTuple_Check(mask_shape) || PyTuple_GET_SIZE(mask_shape) != ndim ||
        !(PyUnicode_CheckExact(mode) || PyLong_CheckExact(mode))) {
        PyErr_SetString(PyExc_ValueError, "learn_quick: expected 1-D or 2-D shapes and a str or int mode");
        return -1;
    }
    recipe->ndim = (int)ndim;
    recipe->image[0] = recipe->mask[0] = 1;
    for (Py_ssize_t d = 0; d < ndim; ++d) {
        recipe->image[2 - ndim + d] = PyLong_AsLongLong(PyTuple_GET_ITEM(image_shape, d));
        recipe->mask[2 - ndim + d] = PyLong_AsLongLong(PyTuple_GET_ITEM(mask_shape, d));
    }
    if (PyErr_Occurred()) return -1;
    Py_INCREF(mode);
    recipe->mode = mode;
    recipe->window = (gp_correlate_args){.boundary = GP_BOUNDARY_FILL, .out_rows = out_rows, .out_cols = out_cols,
                                         .row_offset = row_offset, .col_offset = col_offset};
    return 0;
}

static PyObject *core_learn_quick(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    int slot, in_typenum, kind, auto_device;
    if (gp_parse_arguments("learn_quick", args, nargs < 4 ? nargs : 4, "iiii", &slot, &in_typenum, &kind, &auto_device))
        return NULL;
    const int dtype = gp_dtype_of_typenum(in_typenum);
    if (dtype < 0) return NULL;
    if (slot < 0 || slot >= QUICK_SLOTS || kind < 0 || kind >= QUICK_KINDS || (auto_device != -1 && auto_device != -2)) {
        PyErr_SetString(PyExc_ValueError, "learn_quick: argument out of range");
        return NULL;
    }
    quick_recipe learned = {.kind = (quick_kind)kind, .in_typenum = in_typenum, .mean_typenum = -1};
    args += 4, nargs -= 4;
    int op = 0, status = 0;
    if (kind == QUICK_WHOLE || kind == QUICK_AXIS)
        status = gp_parse_arguments("learn_quick", args, nargs, "iip|i", &op, &learned.out_typenum, &learned.skip_nan,
                                    &learned.mean_typenum);
    else if (kind == QUICK_SCAN || kind == QUICK_SCAN_AXIS)
        status = gp_parse_arguments("learn_quick", args, nargs, "iipp", &op, &learned.out_typenum, &learned.exclusive,
                                    &learned.skip_nan);
    else if (kind == QUICK_TRANSPOSE)
        status = gp_parse_arguments("learn_quick", args, nargs, "");
    else
        status = learn_correlation(&learned, args, nargs);
    if (status == 0 && (op < 0 || op >= GP_NUM_OPS ||
                        (kind <= QUICK_SCAN_AXIS && gp_dtype_of_typenum(learned.out_typenum) < 0) ||
                        (learned.mean_typenum >= 0 && gp_dtype_of_typenum(learned.mean_typenum) < 0))) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "learn_quick: argument out of range");
        status = -1;
    }
    if (status) {
        Py_XDECREF(learned.mode);
        return NULL;
    }
    learned.op = (gp_op)op;
    learned.known = 1;
    PyObject *forgotten = quick_recipes[slot][dtype].mode;
    quick_recipes[slot][dtype] = learned;
    quick_auto_device = auto_device;
    Py_XDECREF(forgotten);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(pause_quick_doc, "pause_quick(paused)\n\n"
                              "Pause the quick lane (True) while a dry run plans a call, or resume it (False);\n"
                              "pauses nest.");

static PyObject *core_pause_quick(PyObject *self, PyObject *paused)
{
    (void)self;
    const int truth = PyObject_IsTrue(paused);
    if (truth < 0) return NULL;
    quick_pauses += truth ? 1 : -1;
    Py_RETURN_NONE;
}

PyMethodDef gp_call_methods[] = {
    {"reduce", (PyCFunction)(void (*)(void))core_reduce, METH_FASTCALL, reduce_doc},
    {"scan", (PyCFunction)(void (*)(void))core_scan, METH_FASTCALL, scan_doc},
    {"correlate", (PyCFunction)(void (*)(void))core_correlate, METH_FASTCALL, correlate_doc},
    {"copy", (PyCFunction)(void (*)(void))core_copy, METH_FASTCALL, copy_doc},
    {"convert", (PyCFunction)(void (*)(void))core_convert, METH_FASTCALL, convert_doc},
    {"quick", (PyCFunction)(void (*)(void))core_quick, METH_FASTCALL, quick_doc},
    {"learn_quick", (PyCFunction)(void (*)(void))core_learn_quick, METH_FASTCALL, learn_quick_doc},
    {"pause_quick", core_pause_quick, METH_O, pause_quick_doc},
    {NULL, NULL, 0, NULL},
};
