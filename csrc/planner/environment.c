/* gp_environment_now (environment.h): the GPUPRIMS_ settings, scanned again only when the
 * environment changed. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "planner/environment.h"

extern char **environ; /* POSIX */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char **scanned_environ;  /* environ at the last scan */
static char **scanned_entries;  /* its entry pointers then (malloc'd), NULL-terminated */
static size_t scanned_capacity; /* entries scanned_entries can hold, its NULL included */
static gp_environment scanned;  /* the settings found then */

/* Whether environ still holds the entries of the last scan. */
static int unchanged(void)
{
    if (environ != scanned_environ || scanned_entries == NULL) return 0;
    if (environ == NULL) return 1; /* cleared then and now */
    size_t i = 0;
    for (; environ[i] != NULL; ++i)
        if (environ[i] != scanned_entries[i]) return 0;
    return scanned_entries[i] == NULL;
}

static gp_environment scan(void)
{
    static const char prefix[] = "GPUPRIMS_";
    static const struct {
        const char *name; /* after the prefix, with its '=' */
        size_t offset;
    } variables[] = {
        {"DEVICE=", offsetof(gp_environment, device)},
        {"COSTS=", offsetof(gp_environment, costs)},
        {"MAX_DEVICE_BYTES=", offsetof(gp_environment, max_device_bytes)},
        {"STREAM_MIN_BYTES=", offsetof(gp_environment, stream_min_bytes)},
        {"STREAM_CHUNK_BYTES=", offsetof(gp_environment, stream_chunk_bytes)},
        {"STREAM_FAIL_TILE=", offsetof(gp_environment, stream_fail_tile)},
    };
    gp_environment found = {0};
    for (char **entry = environ; entry != NULL && *entry != NULL; ++entry) {
        if ((*entry)[0] != 'G' || strncmp(*entry, prefix, sizeof prefix - 1) != 0) continue; /* most differ at once */
        const char *rest = *entry + sizeof prefix - 1;
        for (size_t v = 0; v < sizeof variables / sizeof variables[0]; ++v) {
            const size_t length = strlen(variables[v].name);
            const char **value = (const char **)((char *)&found + variables[v].offset);
            if (*value == NULL && strncmp(rest, variables[v].name, length) == 0) *value = rest + length;
        }
    }
    /* An empty value counts as unset, as everywhere in gpuprims. */
    for (size_t v = 0; v < sizeof variables / sizeof variables[0]; ++v) {
        const char **value = (const char **)((char *)&found + variables[v].offset);
        if (*value != NULL && **value == '\0') *value = NULL;
    }
    return found;
}

/* Remembers environ's entries for unchanged(); when memory runs out, nothing is remembered and
 * the next call scans again. */
static void remember_entries(void)
{
    size_t count = 0;
    while (environ != NULL && environ[count] != NULL) ++count;
    if (count + 1 > scanned_capacity) {
        char **grown = realloc(scanned_entries, (count + 1) * sizeof *grown);
        if (grown == NULL) {
            free(scanned_entries);
            scanned_entries = NULL;
            scanned_capacity = 0;
            return;
        }
        scanned_entries = grown;
        scanned_capacity = count + 1;
    }
    if (count > 0) memcpy(scanned_entries, environ, count * sizeof *scanned_entries);
    scanned_entries[count] = NULL;
    scanned_environ = environ;
}

gp_environment gp_environment_now(void)
{
    pthread_mutex_lock(&lock);
    if (!unchanged()) {
        scanned = scan();
        remember_entries();
    }
    const gp_environment now = scanned;
    pthread_mutex_unlock(&lock);
    return now;
}
