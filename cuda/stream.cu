// The stream gpuprims orders its work on.
//
// gpuprims uses the per-thread default stream (cudaStreamPerThread): each host thread gets its own
// stream that does not serialise with other threads' work, so two Python threads calling gpuprims
// with the GIL released run concurrently, and no stream has to be created, cached or destroyed.
// It is also a stream every CUDA library can name (the value 2 in __cuda_array_interface__ and
// DLPack), which the device-array interop relies on.
#include "runtime.cuh"

namespace gp {

cudaStream_t work_stream() { return cudaStreamPerThread; }

int synchronize(gp_error *err, const char *what)
{
    GP_CUDA_TRY(cudaStreamSynchronize(work_stream()), err, what);
    return 0;
}

}  // namespace gp
