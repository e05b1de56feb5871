// Device discovery, selection and CUDA error translation.
#include <cstdio>
#include <cstring>
#include <mutex>

#include "gpuprims_cuda.h"
#include "runtime.cuh"

namespace gp {

static void write_message(gp_error *err, gp_status status, const char *message)
{
    err->status = status;
    std::snprintf(err->message, sizeof err->message, "%s", message);
}

int fail(gp_error *err, gp_status status, const char *message)
{
    write_message(err, status, message);
    return -1;
}

int fail(gp_error *err, cudaError_t code, const char *what)
{
    cudaGetLastError();  // clear a non-sticky error so the next call starts clean
    gp_status status = code == cudaErrorMemoryAllocation ? GP_ERR_NOMEM : GP_ERR_DEVICE;
    char message[sizeof err->message];
    std::snprintf(message, sizeof message, "CUDA error in %s: %s (%s, code %d)", what,
                  cudaGetErrorString(code), cudaGetErrorName(code), (int)code);
    write_message(err, status, message);
    return -1;
}

// The first cudaGetDeviceCount decides once whether CUDA is usable at all; with no driver it
// returns cudaErrorInsufficientDriver, which must mean "no GPU", not a failure.
static std::once_flag count_once;
static int cached_count = 0;
static cudaError_t cached_count_error = cudaSuccess;

static int device_count_cached()
{
    std::call_once(count_once, [] {
        cached_count_error = cudaGetDeviceCount(&cached_count);
        if (cached_count_error != cudaSuccess) {
            cached_count = 0;
            cudaGetLastError();
        }
    });
    return cached_count;
}

constexpr int max_devices = 64;
static int sm_counts[max_devices];  // 0 until queried; a benign race writes the same value

int use_device(int device, gp_error *err)
{
    int count = device_count_cached();
    if (device < 0 || device >= count) {
        char message[128];
        std::snprintf(message, sizeof message, "CUDA device %d does not exist (%d available)",
                      device, count);
        return fail(err, GP_ERR_INVALID, message);
    }
    GP_CUDA_TRY(cudaSetDevice(device), err, "cudaSetDevice");
    return 0;
}

int multiprocessor_count(int device)
{
    if (device < 0 || device >= max_devices) return 1;
    if (sm_counts[device] == 0) {
        int value = 0;
        if (cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
            value <= 0) {
            cudaGetLastError();
            value = 1;
        }
        sm_counts[device] = value;
    }
    return sm_counts[device];
}

}  // namespace gp

extern "C" int gp_cuda_device_count(gp_error *err)
{
    int count = gp::device_count_cached();
    if (count == 0) {
        if (gp::cached_count_error != cudaSuccess)
            gp::fail(err, gp::cached_count_error, "cudaGetDeviceCount");
        else
            gp::fail(err, GP_ERR_DEVICE, "no CUDA device found");
    }
    return count;
}

extern "C" int gp_cuda_device_props_get(int device, gp_cuda_device_props *props, gp_error *err)
{
    if (gp::use_device(device, err)) return -1;
    cudaDeviceProp prop;
    GP_CUDA_TRY(cudaGetDeviceProperties(&prop, device), err, "cudaGetDeviceProperties");
    std::memset(props, 0, sizeof *props);
    std::snprintf(props->name, sizeof props->name, "%s", prop.name);
    props->major = prop.major;
    props->minor = prop.minor;
    props->multiprocessors = prop.multiProcessorCount;
    props->total_memory = prop.totalGlobalMem;
    GP_CUDA_TRY(cudaDriverGetVersion(&props->driver_version), err, "cudaDriverGetVersion");
    GP_CUDA_TRY(cudaRuntimeGetVersion(&props->runtime_version), err, "cudaRuntimeGetVersion");
    return 0;
}

extern "C" int gp_cuda_compiled_runtime_version(void) { return CUDART_VERSION; }
