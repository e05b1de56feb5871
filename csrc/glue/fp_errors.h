/* Floating-point errors of a sum or product reported as NumPy reports them (fp_errors.c). */
#ifndef GP_GLUE_FP_ERRORS_H
#define GP_GLUE_FP_ERRORS_H

#include "contract/gp_call.h"
#include "glue/numpy_api.h"

/* Whether `call` is a float sum or product (a reduction or a scan), whose results are checked. */
int gp_fp_checked(const gp_call *call);

/* After `call` wrote the host array `result` from the host array `input` (a scan from its initial
 * values, the array `initial`, or NULL): when the call is a float sum or product (reduction or
 * scan) and a result holds inf or NaN, asks gpuprims._fperrors to report overflow or invalid as
 * NumPy would under the caller's np.errstate.  0, or -1 with an exception set (np.errstate's
 * "raise", or a failure). */
int gp_report_fp_errors(const gp_call *call, PyArrayObject *result, PyArrayObject *input, PyObject *initial);

#endif
