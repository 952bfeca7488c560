/*
** nvrtc_compile.h: compile kernel sources with NVRTC under the pinned options
** (DESIGN.md "The frozen numerics", point 3).
**
** Pinned: --gpu-architecture=compute_90 (PTX; a CUBIN uses sm_XX of the
** device instead), --fmad=false, --ftz=false, --prec-div=true,
** --prec-sqrt=true, -std=c++17.  Never --use_fast_math.  Every embedded
** header (the numerics headers, the .h files of device/kernels) is handed to
** NVRTC as an in-memory header under its file name, so `#include "numerics.h"`
** compiles exactly the text the binary was built with; -I<CUDA include dir>
** lets kernels include <cuda_bf16.h> and <cuda_fp16.h>.
**
** Every function fills *out: code on success, and always a log (NVRTC's
** program log, or a message saying what failed, NVRTC's log included).
** Release it with nvrtc_output_free.  In a build without the CUDA toolkit
** every compile fails with a message saying so (device_none.c).
*/
#ifndef DEVICE_NVRTC_COMPILE_H
#define DEVICE_NVRTC_COMPILE_H

#include <stddef.h>

typedef struct nvrtc_output {
  char *code;  /* PTX text (NUL-terminated) or CUBIN bytes; NULL on failure */
  size_t size; /* bytes of code; for PTX without the NUL */
  char *log;   /* NVRTC's log or the error message; never NULL after a call */
} nvrtc_output;

/* The pinned options, in the order they are passed; [0] is the architecture. */
extern const char *const nvrtc_pinned_options[];
extern const int nvrtc_pinned_option_count;

/* Compiles the embedded kernel `kernel_name` ("numerics_probe.cu") to PTX. */
int nvrtc_compile_ptx(const char *kernel_name, nvrtc_output *out);

/*
** Compiles to PTX with overriding or extra options.  source NULL: the
** embedded file source_name; otherwise source is the text and source_name
** only names it in messages.  An option whose key (text before '=') equals a
** pinned option's replaces it ("--fmad=true" replaces "--fmad=false"); any
** other is appended.  The tests use this to plant bad builds.
*/
int nvrtc_compile_ptx_options(const char *source_name, const char *source,
                              const char *const *options, int n_options, nvrtc_output *out);

/* Compiles the embedded kernel to a CUBIN for sm_<sm> (90 for an H200). */
int nvrtc_compile_cubin(const char *kernel_name, int sm, nvrtc_output *out);

void nvrtc_output_free(nvrtc_output *out);

#endif /* DEVICE_NVRTC_COMPILE_H */
