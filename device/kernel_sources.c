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
** numerics header changes it, and so does a planted bug (below).
*/
#include "device/device.h"
#include "device/kernel_sources.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/*
** A planted bug (BITGATE_PLANT="FILE:OLD=>NEW"): the first OLD in the
** embedded FILE becomes NEW before anything reads the source, so the kernel
** hash, the PTX audit and NVRTC all see the planted text.  It exists to show
** that the harness catches, localises and shrinks a real kernel defect; the
** run's provenance names it (kernel_plant_description).
*/
static struct kernel_source planted;
static char plant_error[256], plant_description[320];
static pthread_once_t plant_once = PTHREAD_ONCE_INIT;

static int plant_fail(const char *spec, const char *why) {
  snprintf(plant_error, sizeof plant_error, "BITGATE_PLANT='%.120s': %s", spec, why);
  return -1;
}

static int plant_try(void) {
  const char *spec = getenv("BITGATE_PLANT"), *colon, *arrow, *at;
  const struct kernel_source *src = NULL;
  char file[128];
  size_t old_len, new_len, head;
  char *text;
  int i;
  if (!spec || !*spec) return 0;
  colon = strchr(spec, ':');
  arrow = colon ? strstr(colon + 1, "=>") : NULL;
  if (!colon || !arrow || arrow == colon + 1 || (size_t)(colon - spec) >= sizeof file)
    return plant_fail(spec, "expected FILE:OLD=>NEW with a non-empty OLD");
  snprintf(file, sizeof file, "%.*s", (int)(colon - spec), spec);
  for (i = 0; i < kernel_source_count && !src; i++)
    if (!strcmp(kernel_sources[i].name, file)) src = &kernel_sources[i];
  if (!src) return plant_fail(spec, "no embedded kernel source of that name");
  old_len = (size_t)(arrow - colon - 1);
  new_len = strlen(arrow + 2);
  for (at = src->text; *at && strncmp(at, colon + 1, old_len); at++) {}
  if (!*at) return plant_fail(spec, "OLD does not occur in the file");
  head = (size_t)(at - src->text);
  if (!(text = malloc(src->size - old_len + new_len + 1))) return plant_fail(spec, "out of memory");
  memcpy(text, src->text, head);
  memcpy(text + head, arrow + 2, new_len);
  memcpy(text + head + new_len, at + old_len, src->size - head - old_len + 1);
  planted = *src;
  planted.text = text;
  planted.size = src->size - old_len + new_len;
  snprintf(plant_description, sizeof plant_description, "planted bug in %s: '%.*s' => '%.120s'", file,
           (int)(old_len < 120 ? old_len : 120), colon + 1, arrow + 2);
  return 0;
}

static void plant_apply(void) { (void)plant_try(); }

const char *kernel_plant_error(void) {
  pthread_once(&plant_once, plant_apply);
  return plant_error[0] ? plant_error : NULL;
}

const char *kernel_plant_description(void) {
  pthread_once(&plant_once, plant_apply);
  return plant_description[0] ? plant_description : NULL;
}

const struct kernel_source *kernel_source_find(const char *name) {
  int i;
  pthread_once(&plant_once, plant_apply);
  if (planted.text && !strcmp(planted.name, name)) return &planted;
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
    const struct kernel_source *src = kernel_source_find(kernel_sources[i].name); /* planted text, if any */
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
