/* Floating-point errors of sums and products (fp_errors.h).
 *
 * NumPy reports from the calling thread's flags after its own loops, and the backends' work is not
 * such a loop (the GPU has no flags, and the CPU backend's pool threads have their own).  Instead a
 * float sum's or product's results are looked at: all finite, the common case, costs one pass over
 * a reduction's results.  A scan's running value, once inf or NaN, stays so in NumPy's left fold,
 * but the backends' blocked loops fold otherwise (an overflowed partial can come back finite:
 * [1e308, 1e308, -1e308] scans to [1e308, inf, 1e308]), so they report whether any output was not
 * finite, or may have been (gp_scan_args.non_finite; the CPU loops watch their thread's flags).
 * Where one is, Python settles such a scan's lines in NumPy's order and decides from the input
 * whether the inf or NaN was made (overflow, invalid) or only carried, and reports it through NumPy
 * itself. */
#include "glue/fp_errors.h"

/* Whether any of `count` consecutive elements of the float dtype is inf or NaN, read
 * as bits (no floating-point operation, so no flag of our own is raised): a magnitude's bits (a
 * signed integer without the sign bit) reach the all-ones exponent.  Blocks of a fixed 64 elements,
 * which the compiler vectorizes at -O2; finite results, the common case, are read once. */
#define GP_ANY_NON_FINITE(BITS, EXPONENT)                                                            \
    static int any_non_finite_##BITS(const int##BITS##_t *x, int64_t count)                           \
    {                                                                                                \
        const int##BITS##_t magnitude = (int##BITS##_t)(EXPONENT | (EXPONENT - 1));                  \
        int##BITS##_t found = 0;                                                                     \
        int64_t k = 0;                                                                               \
        for (; k + 64 <= count; k += 64)                                                             \
            for (int i = 0; i < 64; ++i) found |= (int##BITS##_t)-((x[k + i] & magnitude) >= EXPONENT); \
        for (; k < count; ++k) found |= (int##BITS##_t)-((x[k] & magnitude) >= EXPONENT);             \
        return found != 0;                                                                           \
    }
GP_ANY_NON_FINITE(16, 0x7c00)
GP_ANY_NON_FINITE(32, 0x7f800000)
GP_ANY_NON_FINITE(64, 0x7ff0000000000000ll)
#undef GP_ANY_NON_FINITE

static int any_non_finite(const void *data, gp_dtype dtype, int64_t count)
{
    if (dtype == GP_FLOAT16) return any_non_finite_16(data, count);
    if (dtype == GP_FLOAT32) return any_non_finite_32(data, count);
    return any_non_finite_64(data, count);
}

/* Whether the call's results hold inf or NaN: for a reduction all of them are looked at; a scan's
 * backend told (-1, none told: maybe, which Python's exact check then settles). */
static int results_non_finite(const gp_call *call, PyArrayObject *result)
{
    if (call->primitive == GP_REDUCE)
        return any_non_finite(PyArray_DATA(result), call->reduce.out_dtype, call->reduce.outer * call->reduce.inner);
    return call->scan.non_finite == NULL || *call->scan.non_finite != 0;
}

int gp_fp_checked(const gp_call *call)
{
    const int reduce = call->primitive == GP_REDUCE;
    if (!reduce && call->primitive != GP_SCAN) return 0;
    const gp_op op = reduce ? call->reduce.op : call->scan.op;
    return (op == GP_SUM || op == GP_PROD) && gp_dtype_is_float(reduce ? call->reduce.out_dtype : call->scan.out_dtype);
}

int gp_report_fp_errors(const gp_call *call, PyArrayObject *result, PyArrayObject *input, PyObject *initial)
{
    const int reduce = call->primitive == GP_REDUCE;
    if (!gp_fp_checked(call) || input == NULL || (!reduce && call->scan.n == 0) || !results_non_finite(call, result))
        return 0;
    static PyObject *report; /* gpuprims._fperrors.report, imported at the first use */
    if (report == NULL) {
        PyObject *module = PyImport_ImportModule("gpuprims._fperrors");
        if (module == NULL) return -1;
        report = PyObject_GetAttrString(module, "report");
        Py_DECREF(module);
        if (report == NULL) return -1;
    }
    const gp_op op = reduce ? call->reduce.op : call->scan.op;
    const int skip_nan = reduce ? call->reduce.skip_nan : call->scan.skip_nan;
    const int64_t outer = reduce ? call->reduce.outer : call->scan.outer, n = reduce ? call->reduce.n : call->scan.n,
                  inner = reduce ? call->reduce.inner : call->scan.inner;
    PyObject *done = PyObject_CallFunction(report, "sOO(LLL)iOii", reduce ? "reduce" : "accumulate", (PyObject *)result,
                                           (PyObject *)input, (long long)outer, (long long)n, (long long)inner,
                                           skip_nan, initial != NULL ? initial : Py_None, (int)op,
                                           reduce ? 0 : call->scan.exclusive);
    Py_XDECREF(done);
    return done == NULL ? -1 : 0;
}
