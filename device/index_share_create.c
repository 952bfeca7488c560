/*
** index_share_create.c: the IndexShare launcher's life cycle (see
** index_share_device.h): creating an instance of a kernel variant
** (device_variant.h), which decides the module each kernel is loaded from,
** and destroying it.  The launches are index_share_device.c's; both files
** share the instance through index_share_internal.h.
*/
#include "device/index_share_device.h"
#include "device/index_share_internal.h"
#include "device/kernels/index_share_abi.h"
#include "device/kernels/reference_abi.h"

#include <stdio.h>
#include <stdlib.h>

const char *const is_kernel_names[IS_K_COUNT] = {
    [IS_K_FRONTIER] = IS_KERNEL_FRONTIER,
    [IS_K_PRESENT] = IS_KERNEL_PRESENT,
    [IS_K_PRESENT_CAPACITY] = IS_KERNEL_PRESENT_CAPACITY,
    [IS_K_VALIDATE] = IS_KERNEL_VALIDATE,
    [IS_K_ROWS] = IS_KERNEL_ROWS,
    [IS_K_ROWS_ONE] = IS_KERNEL_ROWS_ONE,
};

int device_index_share_create(device_runtime *rt, const index_share_attrs *attrs,
                              device_index_share **out, char *err, size_t err_len) {
  return device_index_share_create_variant(rt, attrs, DEVICE_VARIANT_FAST, out, err, err_len);
}

/* The module of kernel id: the reference variant replaces the frontier and the rows kernels only. */
static const char *is_kernel_file(device_variant v, int id) {
  return v == DEVICE_VARIANT_REFERENCE && (id == IS_K_FRONTIER || id == IS_K_ROWS) ? IS_REFERENCE_FILE
                                                                                   : IS_KERNEL_FILE;
}

int device_index_share_create_variant(device_runtime *rt, const index_share_attrs *attrs,
                                      device_variant variant, device_index_share **out, char *err,
                                      size_t err_len) {
  device_index_share *k = calloc(1, sizeof *k);
  int i;
  *out = NULL;
  if (!k) {
    snprintf(err, err_len, "device_index_share_create: out of memory");
    return 1;
  }
  k->rt = rt;
  k->attrs = *attrs;
  k->variant = variant;
  if (device_pool_create(rt, &k->pool)) goto fail;
  for (i = 0; i < IS_K_COUNT; i++)
    if (device_runtime_kernel(rt, is_kernel_file(variant, i), is_kernel_names[i], &k->kernels[i])) goto fail;
  *out = k;
  return 0;
fail:
  snprintf(err, err_len, "%s", device_runtime_error(rt));
  device_index_share_destroy(k);
  return 1;
}

void device_index_share_destroy(device_index_share *k) {
  if (!k) return;
  device_pool_destroy(k->pool);
  free(k);
}
