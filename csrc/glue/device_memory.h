/* Device memory for gpuprims._core (device_memory.c): the Buffer type (one allocation from
 * gpuprims' caching allocator), DLPack capsules both ways, stream ordering with other libraries,
 * copies and the allocator's statistics.  gpuprims.DeviceArray is built on these. */
#ifndef GP_GLUE_DEVICE_MEMORY_H
#define GP_GLUE_DEVICE_MEMORY_H

#include <Python.h>

extern PyTypeObject gp_buffer_type;
extern PyTypeObject gp_dlpack_holder_type;
extern PyMethodDef gp_device_memory_methods[];

#endif
