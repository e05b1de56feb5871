// Reductions (sum, prod, min, max) along the middle axis of (outer, n, inner).
//   inner == 1, long rows:  reduce_rows_kernel, several blocks per row when rows are few, then the
//                           same kernel over the per-block partials;
//   inner == 1, short rows: reduce_short_rows_kernel, a logical warp per row;
//   inner > 1:              reduce_columns_kernel, a thread per column, chunked along n when
//                           columns are few, then the same kernel over the partials.
#include "gpuprims_cuda.h"
#include "pipeline.cuh"
#include "reduce_kernels.cuh"

namespace gp {

template <class Kernel> static int resident_blocks_per_sm(Kernel kernel)
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
static int reduce_rows(int device, const In *in, Out *out, int64_t rows, int64_t n, gp_error *err)
{
    constexpr int threads = ReduceTuning::threads;
    const cudaStream_t stream = work_stream();
    const unsigned grid_rows = static_cast<unsigned>(rows < 65535 ? rows : 65535);

    if (n <= ReduceTuning::warp_rows_max_n) {
        int width = 1;
        while (width < 32 && width < n) width *= 2;
        int64_t blocks = ceil_div(rows * width, threads);
        const int64_t max_blocks = static_cast<int64_t>(multiprocessor_count(device)) * 64;
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
static int reduce_columns(int device, const In *in, Out *out, int64_t outer, int64_t n, int64_t inner,
                          gp_error *err)
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
static int reduce_typed(int device, const gp_reduce_desc &desc, gp_error *err)
{
    const In *in = static_cast<const In *>(desc.in);
    Out *out = static_cast<Out *>(desc.out);
    if (desc.inner == 1) return reduce_rows<Op, In, Acc, Out>(device, in, out, desc.outer, desc.n, err);
    return reduce_columns<Op, In, Acc, Out>(device, in, out, desc.outer, desc.n, desc.inner, err);
}

template <class Op, class In> static int reduce_accumulate(int device, const gp_reduce_desc &desc,
                                                           gp_error *err)
{
    return dispatch_accumulator<In>(desc.out_dtype, err, [&](auto acc_tag, auto out_tag) {
        using Acc = typename decltype(acc_tag)::type;
        using Out = typename decltype(out_tag)::type;
        return reduce_typed<Op, In, Acc, Out>(device, desc, err);
    });
}

template <class Op, class In> static int reduce_compare(int device, const gp_reduce_desc &desc,
                                                        gp_error *err)
{
    return reduce_typed<Op, In, typename minmax_accumulator<In>::type, In>(device, desc, err);
}

static int check_desc(const gp_reduce_desc *desc, gp_error *err)
{
    if (!gp_reduce_supported(desc->op, desc->in_dtype, desc->out_dtype))
        return fail(err, GP_ERR_INVALID, "unsupported reduction dtype pair");
    if (desc->outer < 1 || desc->n < 1 || desc->inner < 1)
        return fail(err, GP_ERR_INVALID, "reduction of an empty array reached the CUDA backend");
    return 0;
}

}  // namespace gp

extern "C" int gp_cuda_reduce_resident(int device, const gp_reduce_desc *desc, gp_error *err)
{
    using namespace gp;
    if (check_desc(desc, err) || use_device(device, err)) return -1;
    return dispatch_dtype(desc->in_dtype, err, [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        switch (desc->op) {
        case GP_SUM: return reduce_accumulate<SumOp, In>(device, *desc, err);
        case GP_PROD: return reduce_accumulate<ProdOp, In>(device, *desc, err);
        case GP_MIN: return reduce_compare<MinOp, In>(device, *desc, err);
        case GP_MAX: return reduce_compare<MaxOp, In>(device, *desc, err);
        default: return fail(err, GP_ERR_INVALID, "unknown reduction");
        }
    });
}

extern "C" int gp_cuda_reduce(int device, const gp_reduce_desc *desc, gp_error *err)
{
    using namespace gp;
    if (check_desc(desc, err) || use_device(device, err)) return -1;
    const size_t in_bytes = static_cast<size_t>(gp_dtype_size(desc->in_dtype)) * desc->outer * desc->n * desc->inner;
    const size_t out_bytes = static_cast<size_t>(gp_dtype_size(desc->out_dtype)) * desc->outer * desc->inner;
    if (should_stream(GP_STREAMED_REDUCE, in_bytes, out_bytes, desc->outer * desc->n * desc->inner)) return stream_reduce(device, desc, err);
    return with_device_copies(desc->in, in_bytes, desc->out, out_bytes, err,
                              [&](const void *device_in, void *device_out) {
                                  gp_reduce_desc resident = *desc;
                                  resident.in = device_in;
                                  resident.out = device_out;
                                  return gp_cuda_reduce_resident(device, &resident, err);
                              });
}
