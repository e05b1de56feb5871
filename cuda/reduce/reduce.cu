// Reductions (sum, prod, min, max) along the middle axis of (outer, n, inner).
//   inner == 1, long rows:  reduce_rows_kernel, several blocks per row when rows are few, then the
//                           same kernel over the per-block partials;
//   inner == 1, short rows: reduce_short_rows_kernel, a logical warp per row;
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

template <class Kernel> int resident_blocks_per_sm(Kernel kernel)
{
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, ReduceTuning::threads, 0) !=
            cudaSuccess || blocks < 1) {
        cudaGetLastError();
        blocks = 1;
    }
    return blocks;
}

template <class Op, class In, class Acc, class Out>
int reduce_rows(int device, const In *in, Out *out, int64_t rows, int64_t n, gp_error *err)
{
    constexpr int threads = ReduceTuning::threads;
    const cudaStream_t stream = work_stream();
    const unsigned grid_rows = static_cast<unsigned>(std::min(rows, LaunchLimits::max_grid_y));

    if (n <= ReduceTuning::warp_rows_max_n) {
        int width = 1;
        while (width < warp_threads && width < n) width *= 2;
        int64_t blocks = ceil_div(rows * width, threads);
        const int64_t max_blocks =
            static_cast<int64_t>(multiprocessor_count(device)) * ReduceTuning::short_rows_blocks_per_sm;
        if (blocks > max_blocks) blocks = max_blocks;
        reduce_short_rows_kernel<Op, In, Acc, Out>
            <<<static_cast<unsigned>(blocks), threads, 0, stream>>>(in, out, rows, n, width);
        GP_CHECK_LAUNCH(err, "reduce_short_rows_kernel");
        return 0;
    }

    // Share rows among blocks until the whole device is busy a few times over (so faster SMs take
    // more blocks), never below a few vectors per thread.
    const int64_t device_blocks = static_cast<int64_t>(multiprocessor_count(device)) *
                                  resident_blocks_per_sm(reduce_rows_kernel<Op, In, Acc, Acc>) *
                                  ReduceTuning::oversubscription;
    int64_t per_row = ceil_div(device_blocks, rows);
    const int64_t min_chunk = static_cast<int64_t>(threads) * Vec16<In>::size * ReduceTuning::unroll;
    if (per_row > ceil_div(n, min_chunk)) per_row = ceil_div(n, min_chunk);
    if (per_row < 1) per_row = 1;

    if (per_row == 1) {
        reduce_rows_kernel<Op, In, Acc, Out>
            <<<dim3(1, grid_rows), threads, 0, stream>>>(in, out, rows, n);
        GP_CHECK_LAUNCH(err, "reduce_rows_kernel");
        return 0;
    }
    DeviceBuffer partials;
    if (partials.allocate(sizeof(Acc) * rows * per_row, err)) return -1;
    reduce_rows_kernel<Op, In, Acc, Acc><<<dim3(static_cast<unsigned>(per_row), grid_rows), threads,
                                           0, stream>>>(in, partials.as<Acc>(), rows, n);
    GP_CHECK_LAUNCH(err, "reduce_rows_kernel");
    return reduce_rows<Op, Acc, Acc, Out>(device, partials.as<const Acc>(), out, rows, per_row, err);
}

template <class Op, class In, class Acc, class Out>
int reduce_columns(int device, const In *in, Out *out, int64_t outer, int64_t n, int64_t inner, gp_error *err)
{
    const cudaStream_t stream = work_stream();
    const ColumnGrid geometry = column_grid(device, outer, n, inner);
    if (geometry.chunks == 1) {
        reduce_columns_kernel<Op, In, Acc, Out>
            <<<geometry.grid, ReduceTuning::threads, 0, stream>>>(in, out, outer, n, inner, n);
        GP_CHECK_LAUNCH(err, "reduce_columns_kernel");
        return 0;
    }
    DeviceBuffer partials;
    if (partials.allocate(sizeof(Acc) * outer * geometry.chunks * inner, err)) return -1;
    reduce_columns_kernel<Op, In, Acc, Acc><<<geometry.grid, ReduceTuning::threads, 0, stream>>>(
        in, partials.as<Acc>(), outer, n, inner, geometry.chunk);
    GP_CHECK_LAUNCH(err, "reduce_columns_kernel");
    return reduce_columns<Op, Acc, Acc, Out>(device, partials.as<const Acc>(), out, outer,
                                             geometry.chunks, inner, err);
}

template <class Op, class In, class Acc, class Out>
int reduce_typed(int device, const gp_reduce_args &args, const void *in, void *out, gp_error *err)
{
    const In *typed_in = static_cast<const In *>(in);
    Out *typed_out = static_cast<Out *>(out);
    if (args.inner == 1) return reduce_rows<Op, In, Acc, Out>(device, typed_in, typed_out, args.outer, args.n, err);
    return reduce_columns<Op, In, Acc, Out>(device, typed_in, typed_out, args.outer, args.n, args.inner, err);
}

// Sum and product accumulate by the accumulator rule (dispatch_accumulator).
template <class Op, class In>
int reduce_accumulate(int device, const gp_reduce_args &args, const void *in, void *out, gp_error *err)
{
    return dispatch_accumulator<In>(args.out_dtype, err, [&](auto acc_tag, auto out_tag) {
        using Acc = typename decltype(acc_tag)::type;
        using Out = typename decltype(out_tag)::type;
        return reduce_typed<Op, In, Acc, Out>(device, args, in, out, err);
    });
}

// Min and max keep the input's dtype.
template <class Op, class In>
int reduce_compare(int device, const gp_reduce_args &args, const void *in, void *out, gp_error *err)
{
    return reduce_typed<Op, In, typename minmax_accumulator<In>::type, In>(device, args, in, out, err);
}

}  // namespace

int launch_reduce(int device, const gp_reduce_args &args, const void *in, void *out, gp_error *err)
{
    return dispatch_dtype(args.in_dtype, err, [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        switch (args.op) {
        case GP_SUM: return reduce_accumulate<SumOp, In>(device, args, in, out, err);
        case GP_PROD: return reduce_accumulate<ProdOp, In>(device, args, in, out, err);
        case GP_MIN: return reduce_compare<MinOp, In>(device, args, in, out, err);
        case GP_MAX: return reduce_compare<MaxOp, In>(device, args, in, out, err);
        default: return fail(err, GP_ERR_INVALID, "unknown reduction");
        }
    });
}

int reduce_resident(int device, const gp_call &call, gp_error *err)
{
    return launch_reduce(device, call.reduce, call.in, call.out, err);
}

}  // namespace gp
