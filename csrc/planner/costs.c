/* The cost model (costs.h): the bus's constants, the estimates, and GPUPRIMS_COSTS. */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/costs.h"

/* The bus, fitted on the H100 machine (PCIe 5; the calibration run of primitives.c): to_device
 * (+ synchronize) and DeviceArray.get of pageable float32, 2^8..2^22 elements, allocation and page
 * faults included; to_device of pinned arrays up to 2^26; streamed calls of every op, 2^24..2^26,
 * from pageable memory (the engine's host threads copy through pinned staging). */
static const double h2d_gbps = 11.05, d2h_gbps = 8.72, pinned_gbps = 54.8, stream_fixed_us = 446.0,
                    stream_gbps = 47.0;

/* A constant's name and where it lives: in gp_costs (shared) or in gp_primitive_costs. */
typedef struct {
    const char *name;
    size_t offset;
} cost_field;

static const cost_field shared_fields[] = {
    {"h2d_gbps", offsetof(gp_costs, h2d_gbps)},
    {"d2h_gbps", offsetof(gp_costs, d2h_gbps)},
    {"pinned_gbps", offsetof(gp_costs, pinned_gbps)},
    {"stream_fixed_us", offsetof(gp_costs, stream_fixed_us)},
    {"stream_gbps", offsetof(gp_costs, stream_gbps)},
    {"fresh_min_bytes", offsetof(gp_costs, fresh_min_bytes)},
};

static const cost_field primitive_fields[] = {
    {"cpu_fixed_us", offsetof(gp_primitive_costs, cpu_fixed_us)},
    {"cpu_gbps", offsetof(gp_primitive_costs, cpu_gbps)},
    {"cpu_gmacs", offsetof(gp_primitive_costs, cpu_gmacs)},
    {"cpu_fresh_gbps", offsetof(gp_primitive_costs, cpu_fresh_gbps)},
    {"cuda_fixed_us", offsetof(gp_primitive_costs, cuda_fixed_us)},
    {"cuda_gmacs", offsetof(gp_primitive_costs, cuda_gmacs)},
    {"stream_min_bytes", offsetof(gp_primitive_costs, stream_min_bytes)},
};

/* The field `name` names in one of the tables, or NULL. */
static double *find_field(const cost_field *fields, size_t count, void *base, const char *name, size_t length)
{
    for (size_t f = 0; f < count; ++f)
        if (strlen(fields[f].name) == length && strncmp(fields[f].name, name, length) == 0)
            return (double *)((char *)base + fields[f].offset);
    return NULL;
}

/* The constant "primitive.field" or "field" names, or NULL. */
static double *find_constant(gp_costs *costs, const char *name, size_t length)
{
    const char *dot = memchr(name, '.', length);
    if (dot == NULL)
        return find_field(shared_fields, sizeof shared_fields / sizeof *shared_fields, costs, name, length);
    for (int p = 0; p < GP_NUM_PRIMITIVES; ++p) {
        const char *primitive = gp_primitives[p].name;
        if (strlen(primitive) == (size_t)(dot - name) && strncmp(primitive, name, (size_t)(dot - name)) == 0)
            return find_field(primitive_fields, sizeof primitive_fields / sizeof *primitive_fields,
                              &costs->primitive[p], dot + 1, length - (size_t)(dot - name) - 1);
    }
    return NULL;
}

/* [*text, *text + *length) without the spaces around it. */
static void trim(const char **text, size_t *length)
{
    while (*length > 0 && isspace((unsigned char)**text)) ++*text, --*length;
    while (*length > 0 && isspace((unsigned char)(*text)[*length - 1])) --*length;
}

/* Applies one "name=value" item of GPUPRIMS_COSTS (spaces around the name and the value allowed). */
static int apply_override(gp_costs *costs, const char *item, size_t length, gp_error *err)
{
    const char *equals = memchr(item, '=', length);
    const char *name = item, *number_text = equals ? equals + 1 : item + length;
    size_t name_length = equals ? (size_t)(equals - item) : length;
    size_t number_length = (size_t)(item + length - number_text);
    trim(&name, &name_length);
    trim(&number_text, &number_length);
    double *constant = equals ? find_constant(costs, name, name_length) : NULL;
    char value[64] = "";
    if (number_length < sizeof value) memcpy(value, number_text, number_length);
    char *end = NULL;
    const double number = strtod(value, &end);
    if (constant == NULL || end == value || *end != '\0' || !(number >= 0.0)) {
        char message[sizeof err->message];
        snprintf(message, sizeof message,
                 "GPUPRIMS_COSTS: cannot read %.*s (want name=value with a non-negative number; names: "
                 "h2d_gbps, d2h_gbps, pinned_gbps, stream_fixed_us, stream_gbps, fresh_min_bytes, and "
                 "<primitive>.cpu_fixed_us, .cpu_gbps, .cpu_gmacs, .cpu_fresh_gbps, .cuda_fixed_us, .cuda_gmacs, "
                 ".stream_min_bytes "
                 "for reduce, scan, correlate, copy)",
                 (int)(length < 80 ? length : 80), item);
        return gp_fail(err, GP_ERR_INVALID, message);
    }
    *constant = number;
    return 0;
}

int gp_costs_current(gp_costs *costs, const char *setting, gp_error *err)
{
    for (int p = 0; p < GP_NUM_PRIMITIVES; ++p) costs->primitive[p] = gp_primitives[p].costs;
    costs->h2d_gbps = h2d_gbps;
    costs->d2h_gbps = d2h_gbps;
    costs->pinned_gbps = pinned_gbps;
    costs->stream_fixed_us = stream_fixed_us;
    costs->stream_gbps = stream_gbps;
    costs->fresh_min_bytes = (double)GP_FRESH_MIN_BYTES;
    for (const char *item = setting; item != NULL && *item != '\0';) {
        const char *comma = strchr(item, ',');
        const char *text = item;
        size_t length = comma ? (size_t)(comma - item) : strlen(item);
        trim(&text, &length);
        if (length > 0 && apply_override(costs, text, length, err)) return -1;
        item = comma ? comma + 1 : NULL;
    }
    return 0;
}

/* Microseconds to move `bytes` at `gbps` bytes per ns (nothing at a rate of 0: not counted). */
static double transfer_us(double bytes, double gbps) { return gbps > 0.0 ? bytes / gbps / 1e3 : 0.0; }

/* Microseconds of faulting in a new pageable result's fresh pages, on either route (the host threads
 * do it first: gp_plan's touch_result). */
static double fresh_pages_us(const gp_costs *costs, gp_primitive primitive, const gp_traffic *t)
{
    const double fresh_bytes = (double)t->out_bytes >= costs->fresh_min_bytes ? (double)t->out_bytes : 0.0;
    return transfer_us(fresh_bytes, costs->primitive[primitive].cpu_fresh_gbps);
}

double gp_cost_cpu_us(const gp_costs *costs, gp_primitive primitive, const gp_traffic *t)
{
    const gp_primitive_costs *c = &costs->primitive[primitive];
    return c->cpu_fixed_us + transfer_us((double)t->in_bytes + (double)t->out_bytes, c->cpu_gbps) +
           transfer_us(t->macs, c->cpu_gmacs) + fresh_pages_us(costs, primitive, t);
}

double gp_cost_cuda_us(const gp_costs *costs, gp_primitive primitive, const gp_traffic *t, gp_route route,
                       int input_pinned, int result_pinned)
{
    const gp_primitive_costs *c = &costs->primitive[primitive];
    const double compute = transfer_us(t->macs, c->cuda_gmacs);
    if (route == GP_ROUTE_STREAMED) {
        const double in = transfer_us((double)t->in_bytes, input_pinned ? costs->pinned_gbps : costs->stream_gbps);
        const double out = transfer_us((double)t->out_bytes, result_pinned ? costs->pinned_gbps : costs->stream_gbps);
        const double fresh = result_pinned ? 0.0 : fresh_pages_us(costs, primitive, t);
        return costs->stream_fixed_us + (in > out ? in : out) + compute + fresh;
    }
    return c->cuda_fixed_us + transfer_us((double)t->in_bytes, input_pinned ? costs->pinned_gbps : costs->h2d_gbps) +
           transfer_us((double)t->out_bytes, costs->d2h_gbps) + compute;
}
