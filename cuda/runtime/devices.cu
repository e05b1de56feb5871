// Device discovery and selection, the table of per-device state, and CUDA error translation.
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

#include "gpuprims_cuda.h"
#include "runtime/runtime.cuh"

namespace gp {

int fail(gp_error *err, gp_status status, const char *message) { return gp_fail(err, status, message); }

int fail(gp_error *err, cudaError_t code, const char *what)
{
    cudaGetLastError();  // clear a non-sticky error so the next call starts clean
    const gp_status status = code == cudaErrorMemoryAllocation ? GP_ERR_NOMEM : GP_ERR_DEVICE;
    char message[sizeof err->message];
    std::snprintf(message, sizeof message, "CUDA error in %s: %s (%s, code %d)", what, cudaGetErrorString(code),
                  cudaGetErrorName(code), static_cast<int>(code));
    return gp_fail(err, status, message);
}

namespace {

// The devices, counted once: the first cudaGetDeviceCount decides whether CUDA is usable at all.
// With no driver it returns cudaErrorInsufficientDriver, which must mean "no GPU", not a failure.
// One DeviceState per device, each created on the device's first use.
struct DeviceTable {
    int count = 0;
    cudaError_t count_error = cudaSuccess;
    std::unique_ptr<DeviceState[]> states;
};

const DeviceTable &devices()
{
    static std::once_flag once;
    static DeviceTable table;
    std::call_once(once, [] {
        table.count_error = cudaGetDeviceCount(&table.count);
        if (table.count_error != cudaSuccess) {
            table.count = 0;
            cudaGetLastError();
        }
        if (table.count > 0) table.states.reset(new DeviceState[table.count]);
    });
    return table;
}

// Fills a device's entry; runs once per device, with the device current (the work stream is
// created on the current device).
void create_state(int device, DeviceState &state)
{
    int multiprocessors = 0;
    if (cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device) == cudaSuccess &&
        multiprocessors > 0)
        state.multiprocessors = multiprocessors;
    else
        cudaGetLastError();  // launches are then sized for one SM: slower, still correct
    int max_shared = 0;
    if (cudaDeviceGetAttribute(&max_shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) == cudaSuccess &&
        max_shared > state.max_dynamic_shared)
        state.max_dynamic_shared = max_shared;
    else
        cudaGetLastError();
    if (cudaDeviceGetAttribute(&state.compute_major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
        state.compute_major = 0;  // the kernels every architecture has run
        cudaGetLastError();
    }
    state.work = create_work_stream();
    state.pool_error = create_memory_pool(device, &state.pool);
}

}  // namespace

int use_device(int device, gp_error *err)
{
    const DeviceTable &table = devices();
    if (device < 0 || device >= table.count) {
        char message[128];
        std::snprintf(message, sizeof message, "CUDA device %d does not exist (%d available)", device, table.count);
        return fail(err, GP_ERR_INVALID, message);
    }
    GP_CUDA_TRY(cudaSetDevice(device), err, "cudaSetDevice");
    DeviceState &state = table.states[device];
    std::call_once(state.created, [&] { create_state(device, state); });
    return 0;
}

DeviceState &device_state(int device) { return devices().states[device]; }

int multiprocessor_count(int device) { return device_state(device).multiprocessors; }

int max_dynamic_shared_bytes(int device) { return device_state(device).max_dynamic_shared; }

int compute_capability_major(int device) { return device_state(device).compute_major; }

int blocks_per_sm(int device, const void *kernel, int threads, size_t shared, gp_error *err, int &blocks)
{
    DeviceState &state = device_state(device);
    const auto key = std::make_tuple(kernel, threads, shared);
    std::lock_guard<std::mutex> lock(state.occupancy_mutex);
    const auto known = state.occupancy.find(key);
    if (known != state.occupancy.end()) {
        blocks = known->second;
        return 0;
    }
    if (shared > default_dynamic_shared_bytes) {
        if (shared > static_cast<size_t>(state.max_dynamic_shared))
            return fail(err, GP_ERR_INVALID, "a tile needs more shared memory than the device has");
        GP_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, state.max_dynamic_shared),
                    err, "cudaFuncSetAttribute");
    }
    int per_sm = 0;
    GP_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared), err,
                "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    blocks = per_sm > 0 ? per_sm : 1;
    state.occupancy.emplace(key, blocks);
    return 0;
}

}  // namespace gp

extern "C" int gp_cuda_device_count(gp_error *err)
{
    const gp::DeviceTable &table = gp::devices();
    if (table.count > 0) return table.count;
    // The runtime reports "driver version is insufficient" for an old driver and for none at all;
    // with none, the driver version it reads is 0.
    int driver_version = -1;
    if (table.count_error == cudaSuccess) {
        gp::fail(err, GP_ERR_DEVICE, "no CUDA device found");
    } else if (table.count_error == cudaErrorInsufficientDriver &&
               cudaDriverGetVersion(&driver_version) == cudaSuccess && driver_version == 0) {
        gp::fail(err, GP_ERR_DEVICE, "no NVIDIA driver found (libcuda.so.1 is not installed or cannot be loaded)");
    } else {
        gp::fail(err, table.count_error, "cudaGetDeviceCount");
    }
    return 0;
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
