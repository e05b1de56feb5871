// Reductions (sum, prod, min, max, argmin, argmax, any, all, count_nonzero, var, std, mean, and the
// NaN-skipping forms of sum, prod, min, max, argmin, argmax, var, std and mean) along the middle axis
// of (outer, n, inner): the operators and their accumulators are in reduce_ops.cuh, the kernels the
// same for all.
//   inner == 1, long rows:  reduce_rows_kernel, several blocks per row when rows are few, then the
//                           same kernel over the per-block partials;
//   inner == 1, short rows: reduce_short_rows_kernel, a logical warp per row (rows shorter than a
//                           block, or enough of them to fill the device);
//   inner > 1:              reduce_columns_kernel, a thread per column, chunked along n when
//                           columns are few, then the same kernel over the partials.
//
// The streamed form, which reduces tiles of host arrays and combines their partial results, is in
// reduce_tiler.cu.
#include <algorithm>

#include "primitives.cuh"
#include "reduce/reduce.cuh"
#include "reduce/reduce_kernels.cuh"

namespace gp {
namespace {

// Element k of a row is lifted at index base + k (reduce_ops.cuh).
template <class Op, class In, class Acc, class Out>
int reduce_rows(int device, Op op, const In *in, Out *out, int64_t rows, int64_t n, int64_t base, gp_error *err)
{
    constexpr int threads = ReduceTuning::threads;
    const cudaStream_t stream = work_stream();
    const unsigned grid_rows = static_cast<unsigned>(std::min(rows, LaunchLimits::max_grid_y));

    int width = 1;
    while (width < warp_threads && width < n) width *= 2;
    const int64_t device_threads =
        static_cast<int64_t>(multiprocessor_count(device)) * ReduceTuning::grid_threads_per_sm;
    if (n <= ReduceTuning::warp_rows_max_n && (n < threads || rows * width >= device_threads)) {
        int64_t blocks = ceil_div(rows * width, threads);
        const int64_t max_blocks =
            static_cast<int64_t>(multiprocessor_count(device)) * ReduceTuning::short_rows_blocks_per_sm;
        if (blocks > max_blocks) blocks = max_blocks;
        reduce_short_rows_kernel<Op, In, Acc, Out>
            <<<static_cast<unsigned>(blocks), threads, 0, stream>>>(in, out, rows, n, width, base, op);
        GP_CHECK_LAUNCH(err, "reduce_short_rows_kernel");
        return 0;
    }

    // Share rows among blocks until the whole device is busy a few times over (so faster SMs take
    // more blocks), never below a few vectors per thread.
    const int64_t device_blocks = static_cast<int64_t>(multiprocessor_count(device)) *
                                  resident_blocks_per_sm(device, reduce_rows_kernel<Op, In, Acc, Acc>) *
                                  ReduceTuning::oversubscription;
    int64_t per_row = ceil_div(device_blocks, rows);
    const int64_t min_chunk = static_cast<int64_t>(threads) * std::max(Vec16<In>::size, 1) * ReduceTuning::unroll;
    if (per_row > ceil_div(n, min_chunk)) per_row = ceil_div(n, min_chunk);
    if (per_row < 1 || n <= ReduceTuning::warp_rows_max_n) per_row = 1;  // a short row: one block

    if (per_row == 1) {
        reduce_rows_kernel<Op, In, Acc, Out>
            <<<dim3(1, grid_rows), threads, 0, stream>>>(in, out, rows, n, base, op);
        GP_CHECK_LAUNCH(err, "reduce_rows_kernel");
        return 0;
    }
    DeviceBuffer partials;
    if (partials.allocate(sizeof(Acc) * rows * per_row, err)) return -1;
    reduce_rows_kernel<Op, In, Acc, Acc><<<dim3(static_cast<unsigned>(per_row), grid_rows), threads,
                                           0, stream>>>(in, partials.as<Acc>(), rows, n, base, op);
    GP_CHECK_LAUNCH(err, "reduce_rows_kernel");
    return reduce_rows<partials_of<Op>, Acc, Acc, Out>(device, partials_op_of(op), partials.as<const Acc>(), out, rows,
                                                       per_row, 0, err);
}

template <class Op, class In, class Acc, class Out>
int reduce_columns(int device, Op op, const In *in, Out *out, int64_t outer, int64_t n, int64_t inner, int64_t base,
                   gp_error *err)
{
    const cudaStream_t stream = work_stream();
    const ColumnGrid geometry =
        column_grid(device, resident_blocks_per_sm(device, reduce_columns_kernel<Op, In, Acc, Acc>), outer, n, inner);
    if (geometry.chunks == 1) {
        reduce_columns_kernel<Op, In, Acc, Out>
            <<<geometry.grid, ReduceTuning::threads, 0, stream>>>(in, out, outer, n, inner, n, base, op);
        GP_CHECK_LAUNCH(err, "reduce_columns_kernel");
        return 0;
    }
    DeviceBuffer partials;
    if (partials.allocate(sizeof(Acc) * outer * geometry.chunks * inner, err)) return -1;
    reduce_columns_kernel<Op, In, Acc, Acc><<<geometry.grid, ReduceTuning::threads, 0, stream>>>(
        in, partials.as<Acc>(), outer, n, inner, geometry.chunk, base, op);
    GP_CHECK_LAUNCH(err, "reduce_columns_kernel");
    return reduce_columns<partials_of<Op>, Acc, Acc, Out>(device, partials_op_of(op), partials.as<const Acc>(), out,
                                                          outer, geometry.chunks, inner, 0, err);
}

template <class Op, class In, class Acc, class Out>
int reduce_on(int device, Op op, const gp_reduce_args &args, int64_t base, const void *in, void *out, gp_error *err)
{
    const In *typed_in = static_cast<const In *>(in);
    Out *typed_out = static_cast<Out *>(out);
    if (args.inner == 1)
        return reduce_rows<Op, In, Acc, Out>(device, op, typed_in, typed_out, args.outer, args.n, base, err);
    return reduce_columns<Op, In, Acc, Out>(device, op, typed_in, typed_out, args.outer, args.n, args.inner, base, err);
}

// The form's input and output: elements and results, or partial results (Acc) on either side.
template <class Op, class In, class Acc, class Out>
int reduce_typed(int device, const gp_reduce_args &args, const ReduceForm &form, const void *in, void *out,
                 gp_error *err)
{
    using Partials = partials_of<Op>;
    const Op op = make_op<Op>(args);
    const Partials partials = partials_op_of(op);
    if (form.partials_in)
        return form.partials_out ? reduce_on<Partials, Acc, Acc, Acc>(device, partials, args, 0, in, out, err)
                                 : reduce_on<Partials, Acc, Acc, Out>(device, partials, args, 0, in, out, err);
    return form.partials_out ? reduce_on<Op, In, Acc, Acc>(device, op, args, form.index_base, in, out, err)
                             : reduce_on<Op, In, Acc, Out>(device, op, args, form.index_base, in, out, err);
}

// Calls f(type_tag<Op>{}, type_tag<In>{}, type_tag<Acc>{}, type_tag<Out>{}) with the reduction's
// operator and types: sum and prod by the accumulator rule (dispatch_accumulator), floats in double
// (widened_float), var, std and mean from Moments to the call's float dtype, the others by
// reduce_types; skip_nan's operators for float inputs.
template <class F> int dispatch_reduce(const gp_reduce_args &args, gp_error *err, F &&f)
{
    return dispatch_dtype(args.in_dtype, err, [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        // Float sums and products accumulate in double whatever their result dtype, as the CPU
        // backend's do: a thread's running float32 sum of a 2^28-element array (~128 elements a lane)
        // was 7x further from the exact sum than NumPy's pairwise sum (H200, uniform data), and
        // products drift (widened_float).  The kernel converts ~4 elements a cycle an SM at the
        // roofline, a quarter of sm_90's rate for float to double.
        const auto in_double = [&](auto op_tag) {
            return dispatch_accumulator<In>(args.out_dtype, err, [&](auto acc_tag, auto out_tag) {
                return f(op_tag, in_tag, type_tag<widened_float<typename decltype(acc_tag)::type>>{}, out_tag);
            });
        };
        const auto moments = [&](auto op_tag) {
            switch (args.out_dtype) {
            case GP_FLOAT16: return f(op_tag, in_tag, type_tag<Moments>{}, type_tag<__half>{});
            case GP_FLOAT32: return f(op_tag, in_tag, type_tag<Moments>{}, type_tag<float>{});
            case GP_FLOAT64: return f(op_tag, in_tag, type_tag<Moments>{}, type_tag<double>{});
            default: return fail(err, GP_ERR_INVALID, "var/std: the result dtype must be a float");
            }
        };
        const auto own = [&](auto op_tag) {
            using Types = reduce_types<typename decltype(op_tag)::type, In>;
            return f(op_tag, in_tag, type_tag<typename Types::acc>{}, type_tag<typename Types::out>{});
        };
        // skip_nan on float inputs: the operator's NaN-skipping form (integers have no NaN).
        const auto nan_rule = [&](auto plain_tag, auto skipping_tag, auto &&route) {
            if constexpr (cuda::std::is_floating_point_v<In> || cuda::std::is_same_v<In, __half>)
                if (args.skip_nan) return route(skipping_tag);
            return route(plain_tag);
        };
        const auto ignoring_nan = [&](auto op_tag, auto &&route) {
            using Op = typename decltype(op_tag)::type;
            return nan_rule(op_tag, type_tag<IgnoreNan<Op>>{}, route);
        };
        switch (args.op) {
        case GP_SUM: return ignoring_nan(type_tag<SumOp>{}, in_double);
        case GP_PROD: return ignoring_nan(type_tag<ProdOp>{}, in_double);
        case GP_MIN: return ignoring_nan(type_tag<MinOp>{}, own);
        case GP_MAX: return ignoring_nan(type_tag<MaxOp>{}, own);
        case GP_ARGMIN: return ignoring_nan(type_tag<ArgMinOp>{}, own);
        case GP_ARGMAX: return ignoring_nan(type_tag<ArgMaxOp>{}, own);
        case GP_ANY: return own(type_tag<AnyOp>{});
        case GP_ALL: return own(type_tag<AllOp>{});
        case GP_COUNT_NONZERO: return own(type_tag<CountNonzeroOp>{});
        case GP_VAR: return nan_rule(type_tag<VarOp<>>{}, type_tag<VarOp<true>>{}, moments);
        case GP_STD: return nan_rule(type_tag<StdOp<>>{}, type_tag<StdOp<true>>{}, moments);
        case GP_MEAN: return nan_rule(type_tag<MeanOp<>>{}, type_tag<MeanOp<true>>{}, moments);
        default: return fail(err, GP_ERR_INVALID, "unknown reduction");
        }
    });
}

}  // namespace

int launch_reduce(int device, const gp_reduce_args &args, const void *in, void *out, gp_error *err,
                  const ReduceForm &form)
{
    return dispatch_reduce(args, err, [&](auto op_tag, auto in_tag, auto acc_tag, auto out_tag) {
        return reduce_typed<typename decltype(op_tag)::type, typename decltype(in_tag)::type,
                            typename decltype(acc_tag)::type, typename decltype(out_tag)::type>(device, args, form, in,
                                                                                               out, err);
    });
}

int reduce_partial_bytes(const gp_reduce_args &args, gp_error *err)
{
    return dispatch_reduce(args, err, [](auto, auto, auto acc_tag, auto) {
        return static_cast<int>(sizeof(typename decltype(acc_tag)::type));
    });
}

int reduce_resident(int device, const gp_call &call, gp_error *err)
{
    return launch_reduce(device, call.reduce, call.in, call.out, err);
}

}  // namespace gp
