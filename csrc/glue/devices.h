/* Device queries of gpuprims._core (devices.c): the usable GPUs, their properties, how the extension
 * was built, and the default-device setting. */
#ifndef GP_GLUE_DEVICES_H
#define GP_GLUE_DEVICES_H

#include <Python.h>

extern PyMethodDef gp_device_methods[];

#endif
