/*
** kernel_sources.c: lookup in the embedded kernel-source table
** (device/kernel_sources.h) and the kernel hash of device.h.
**
** The table itself is generated at build time (cmake/EmbedFiles.cmake) into
** build/gen/; this file only reads it, so it is the same in every build, with
** or without the CUDA toolkit.
**
** The kernel hash is XXH3-128 over, for every embedded file in table order,
** its name, a NUL, its contents and a NUL; printed as 32 lowercase hex digits
** (XXH128's canonical, big-endian form).  Any change to a kernel or to a
** numerics header changes it.
*/
#include "device/device.h"
#include "device/kernel_sources.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

const struct kernel_source *kernel_source_find(const char *name) {
  int i;
  for (i = 0; i < kernel_source_count; i++)
    if (!strcmp(kernel_sources[i].name, name)) return &kernel_sources[i];
  return NULL;
}

static char kernel_hash_hex[33];
static pthread_once_t kernel_hash_once = PTHREAD_ONCE_INIT;

static void kernel_hash_compute(void) {
  XXH3_state_t state;
  XXH128_canonical_t digest;
  int i;
  XXH3_128bits_reset(&state);
  for (i = 0; i < kernel_source_count; i++) {
    const struct kernel_source *src = &kernel_sources[i];
    XXH3_128bits_update(&state, src->name, strlen(src->name) + 1); /* with its NUL */
    XXH3_128bits_update(&state, src->text, src->size + 1);
  }
  XXH128_canonicalFromHash(&digest, XXH3_128bits_digest(&state));
  for (i = 0; i < 16; i++)
    snprintf(kernel_hash_hex + 2 * i, 3, "%02x", (unsigned)digest.digest[i]);
}

const char *device_kernel_hash(void) {
  pthread_once(&kernel_hash_once, kernel_hash_compute);
  return kernel_hash_hex;
}
