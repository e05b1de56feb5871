/* The CPU backend's settings for gpuprims._core (cpu_settings.c): its thread count and its
 * instruction set. */
#ifndef GP_GLUE_CPU_SETTINGS_H
#define GP_GLUE_CPU_SETTINGS_H

#include <Python.h>

extern PyMethodDef gp_cpu_settings_methods[];

#endif
