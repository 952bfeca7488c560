/*
** device_variant.h: which kernels a launcher instance runs (issue 8).
**
**   DEVICE_VARIANT_FAST       the production kernels (csa128.cu, csa4.cu,
**                             index_share.cu): every independent output in
**                             parallel, each sum in the oracle's order;
**   DEVICE_VARIANT_REFERENCE  the seed's serial design kept as a baseline
**                             (csa128_reference.cu, csa4_reference.cu,
**                             index_share_reference.cu; their kernels share
**                             the fast ones' names and argument lists).
**
** Both produce the oracle's bytes and both are gated byte for byte.  A
** launcher takes the variant at creation (device_*_create_variant; the
** plain device_*_create is FAST, the default) and keeps it for its life.
** Plain C, header only.
*/
#ifndef DEVICE_DEVICE_VARIANT_H
#define DEVICE_DEVICE_VARIANT_H

#include <string.h>

typedef enum device_variant {
  DEVICE_VARIANT_FAST = 0, /* zero, so a zeroed struct means the default */
  DEVICE_VARIANT_REFERENCE,
  DEVICE_VARIANT_COUNT
} device_variant;

/* "fast", "reference"; "?" otherwise. */
static inline const char *device_variant_name(device_variant v) {
  return v == DEVICE_VARIANT_FAST ? "fast" : v == DEVICE_VARIANT_REFERENCE ? "reference" : "?";
}

/* "fast" or "reference" into *out: 0, or -1 for any other text. */
static inline int device_variant_parse(const char *text, device_variant *out) {
  if (!strcmp(text, "fast")) *out = DEVICE_VARIANT_FAST;
  else if (!strcmp(text, "reference")) *out = DEVICE_VARIANT_REFERENCE;
  else return -1;
  return 0;
}

#endif /* DEVICE_DEVICE_VARIANT_H */
