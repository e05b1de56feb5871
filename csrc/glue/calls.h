/* The call entries of gpuprims._core (calls.c), one per primitive, registered by module.c. */
#ifndef GP_GLUE_CALLS_H
#define GP_GLUE_CALLS_H

#include <Python.h>

extern PyMethodDef gp_call_methods[];

#endif
