/*
** nvrtc_output.c: freeing a compile result, in builds with and without NVRTC.
*/
#include "device/nvrtc_compile.h"

#include <stdlib.h>

void nvrtc_output_free(nvrtc_output *out) {
  if (!out) return;
  free(out->code);
  free(out->log);
  out->code = out->log = NULL;
  out->size = 0;
}
