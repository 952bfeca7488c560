/*
** kernel_sources.c: the files NVRTC compiles (device/kernel_sources.h) and
** the kernel hash of device.h.
**
** The embedded table is generated at build time (cmake/EmbedFiles.cmake)
** into build/gen/; this file only reads it, so it is the same in every
** build, with or without the CUDA toolkit.  On first use it settles the set
** once for the process: the embedded files or a kernel tree's
** (BITGATE_KERNEL_TREE, kernel_tree.c), then a planted bug over them.
**
** The kernel hash is XXH3-128 over, for every file of the set in order, its
** name, a NUL, its contents and a NUL; printed as 32 lowercase hex digits
** (XXH128's canonical, big-endian form).  Any change to a kernel or to a
** numerics header changes it, and so do a tree that differs and a planted
** bug.  With neither it is the hash of the embedded files.
*/
#include "device/device.h"
#include "device/kernel_sources.h"
#include "device/kernel_tree.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static const struct kernel_source *set = kernel_sources_embedded; /* what NVRTC sees */
static int set_count;
static kernel_tree tree; /* held for the process's life: set points into it */
static struct kernel_source *planted_set; /* the set's copy with one file planted */
static char tree_error[640], tree_description[1024];
static char plant_error[256], plant_description[320];
static pthread_once_t set_once = PTHREAD_ONCE_INIT;

/* BITGATE_KERNEL_TREE: the tree's files replace the embedded ones, or tree_error says why not. */
static void use_tree(void) {
  const char *dir = getenv("BITGATE_KERNEL_TREE");
  char what[sizeof tree_description - 64];
  if (!dir || !*dir) return; /* empty is unset, as for BITGATE_PLANT */
  if (kernel_tree_load(&tree, dir, kernel_sources_embedded, kernel_sources_embedded_count, kernel_host_includes,
                       kernel_host_include_count, tree_error, sizeof tree_error) != 0)
    return;
  set = tree.files, set_count = tree.n;
  kernel_tree_describe(&tree, kernel_sources_embedded, what, sizeof what);
  snprintf(tree_description, sizeof tree_description, "kernel tree %s: %s", dir, what);
}

/*
** A planted bug (BITGATE_PLANT="FILE:OLD=>NEW"): the first OLD in FILE
** becomes NEW before anything reads the source, so the kernel hash, the PTX
** audit and NVRTC all see the planted text.  It exists to show that the
** harness catches, localises and shrinks a real kernel defect; the run's
** provenance names it (kernel_plant_description).
*/
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
  for (i = 0; i < set_count && !src; i++)
    if (!strcmp(set[i].name, file)) src = &set[i];
  if (!src) return plant_fail(spec, "no kernel source of that name");
  old_len = (size_t)(arrow - colon - 1);
  new_len = strlen(arrow + 2);
  for (at = src->text; *at && strncmp(at, colon + 1, old_len); at++) {}
  if (!*at) return plant_fail(spec, "OLD does not occur in the file");
  head = (size_t)(at - src->text);
  if (!(planted_set = malloc((size_t)set_count * sizeof *planted_set)) ||
      !(text = malloc(src->size - old_len + new_len + 1))) {
    free(planted_set), planted_set = NULL;
    return plant_fail(spec, "out of memory");
  }
  memcpy(text, src->text, head);
  memcpy(text + head, arrow + 2, new_len);
  memcpy(text + head + new_len, at + old_len, src->size - head - old_len + 1);
  memcpy(planted_set, set, (size_t)set_count * sizeof *planted_set);
  i = (int)(src - set);
  planted_set[i].text = text;
  planted_set[i].size = src->size - old_len + new_len;
  set = planted_set;
  snprintf(plant_description, sizeof plant_description, "planted bug in %s: '%.*s' => '%.120s'", file,
           (int)(old_len < 120 ? old_len : 120), colon + 1, arrow + 2);
  return 0;
}

static void settle_set(void) {
  set_count = kernel_sources_embedded_count;
  use_tree();
  (void)plant_try();
}

int kernel_source_total(void) {
  pthread_once(&set_once, settle_set);
  return set_count;
}

const struct kernel_source *kernel_source_at(int i) {
  pthread_once(&set_once, settle_set);
  return i >= 0 && i < set_count ? &set[i] : NULL;
}

const struct kernel_source *kernel_source_find(const char *name) {
  int i;
  pthread_once(&set_once, settle_set);
  for (i = 0; i < set_count; i++)
    if (!strcmp(set[i].name, name)) return &set[i];
  return NULL;
}

const char *kernel_plant_error(void) {
  pthread_once(&set_once, settle_set);
  return plant_error[0] ? plant_error : NULL;
}

const char *kernel_plant_description(void) {
  pthread_once(&set_once, settle_set);
  return plant_description[0] ? plant_description : NULL;
}

const char *kernel_tree_error(void) {
  pthread_once(&set_once, settle_set);
  return tree_error[0] ? tree_error : NULL;
}

const char *kernel_tree_description(void) {
  pthread_once(&set_once, settle_set);
  return tree_description[0] ? tree_description : NULL;
}

void kernel_sources_print_origin(FILE *out, const char *indent) {
  if (kernel_tree_description()) fprintf(out, "%skernels: %s\n", indent, kernel_tree_description());
  if (kernel_plant_description()) fprintf(out, "%skernels: %s\n", indent, kernel_plant_description());
}

static char kernel_hash_hex[33];
static pthread_once_t kernel_hash_once = PTHREAD_ONCE_INIT;

static void kernel_hash_compute(void) {
  XXH3_state_t state;
  XXH128_canonical_t digest;
  int i, n = kernel_source_total();
  XXH3_128bits_reset(&state);
  for (i = 0; i < n; i++) {
    const struct kernel_source *src = kernel_source_at(i);
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
