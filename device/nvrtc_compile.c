/*
** nvrtc_compile.c: NVRTC with the pinned options (see nvrtc_compile.h).
**
** One path, nvrtc_compile_program, serves PTX and CUBIN: it builds the option
** list (pinned, then overrides, then the include dir), registers every
** embedded header, compiles, and copies out the code and the log.
*/
#include "device/nvrtc_compile.h"
#include "device/kernel_sources.h"

#include <nvrtc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The CUDA toolkit's include dir, for <cuda_bf16.h>; set by device/CMakeLists.txt. */
#ifndef BITGATE_CUDA_INCLUDE_DIR
#define BITGATE_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

const char *const nvrtc_pinned_options[] = {
    "--gpu-architecture=compute_90",
    "--fmad=false", /* NVRTC's default --fmad=true turns acc += a*b into fma.rn.f32 */
    "--ftz=false",
    "--prec-div=true",
    "--prec-sqrt=true",
    "-std=c++17",
};
const int nvrtc_pinned_option_count =
    (int)(sizeof nvrtc_pinned_options / sizeof nvrtc_pinned_options[0]);

#define NVRTC_MAX_OPTIONS 64

/* Replaces out->log with a formatted message followed by `detail` (may be NULL). */
static int nvrtc_fail(nvrtc_output *out, const char *detail, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int nvrtc_fail(nvrtc_output *out, const char *detail, const char *fmt, ...) {
  char head[512];
  size_t len;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  if (!detail) detail = "";
  len = strlen(head) + 1 + strlen(detail) + 1;
  free(out->log);
  out->log = malloc(len);
  if (out->log) snprintf(out->log, len, "%s%s%s", head, *detail ? "\n" : "", detail);
  return 1;
}

/* Length of an option's key: the text before '=', or all of it. */
static size_t option_key_len(const char *opt) {
  const char *eq = strchr(opt, '=');
  return eq ? (size_t)(eq - opt) : strlen(opt);
}

/* Pinned options with overrides applied, then -I; returns the count or -1. */
static int nvrtc_build_options(const char **opts, const char *const *extra, int n_extra) {
  static const char include_opt[] = "-I" BITGATE_CUDA_INCLUDE_DIR;
  int n = 0, i, j;
  for (i = 0; i < nvrtc_pinned_option_count; i++) opts[n++] = nvrtc_pinned_options[i];
  for (i = 0; i < n_extra; i++) {
    size_t key = option_key_len(extra[i]);
    for (j = 0; j < n; j++)
      if (option_key_len(opts[j]) == key && !strncmp(opts[j], extra[i], key)) break;
    if (j == n && n == NVRTC_MAX_OPTIONS - 1) return -1;
    opts[j] = extra[i];
    if (j == n) n++;
  }
  opts[n++] = include_opt;
  return n;
}

/* The NUL-terminated program log, malloc'd ("" when NVRTC has none). */
static char *nvrtc_program_log(nvrtcProgram prog) {
  size_t size = 0;
  char *log;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size == 0) size = 1;
  log = calloc(size, 1);
  if (log && size > 1 && nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) log[0] = '\0';
  return log;
}

/* Copies PTX (want_cubin 0) or CUBIN out of a compiled program into out->code. */
static nvrtcResult nvrtc_copy_code(nvrtcProgram prog, int want_cubin, nvrtc_output *out) {
  size_t size = 0;
  nvrtcResult res = want_cubin ? nvrtcGetCUBINSize(prog, &size) : nvrtcGetPTXSize(prog, &size);
  if (res != NVRTC_SUCCESS) return res;
  out->code = malloc(size + 1);
  if (!out->code) return NVRTC_ERROR_OUT_OF_MEMORY;
  res = want_cubin ? nvrtcGetCUBIN(prog, out->code) : nvrtcGetPTX(prog, out->code);
  out->code[size] = '\0';
  /* NVRTC's PTX size counts the NUL; report the text length */
  out->size = want_cubin ? size : strlen(out->code);
  return res;
}

static int nvrtc_compile_program(const char *name, const char *source,
                                 const char *const *extra, int n_extra, int want_cubin,
                                 nvrtc_output *out) {
  const char *opts[NVRTC_MAX_OPTIONS];
  const char **header_names = NULL, **header_texts = NULL;
  nvrtcProgram prog = NULL;
  nvrtcResult res;
  int n_opts, n_headers = 0, n_sources, i, rc = 1;

  memset(out, 0, sizeof *out);
  if (kernel_tree_error() || kernel_plant_error()) { /* the tree's first: a plant applies over it */
    nvrtc_fail(out, NULL, "%s", kernel_tree_error() ? kernel_tree_error() : kernel_plant_error());
    goto done;
  }
  if (!source) {
    const struct kernel_source *src = kernel_source_find(name);
    if (!src) {
      nvrtc_fail(out, NULL, "no kernel source named '%s'", name);
      goto done;
    }
    source = src->text;
  }
  n_opts = nvrtc_build_options(opts, extra, n_extra);
  if (n_opts < 0) {
    nvrtc_fail(out, NULL, "%s: too many NVRTC options", name);
    goto done;
  }

  n_sources = kernel_source_total();
  header_names = calloc((size_t)n_sources + 1, sizeof *header_names);
  header_texts = calloc((size_t)n_sources + 1, sizeof *header_texts);
  if (!header_names || !header_texts) {
    nvrtc_fail(out, NULL, "%s: out of memory", name);
    goto done;
  }
  for (i = 0; i < n_sources; i++) {
    const struct kernel_source *src = kernel_source_at(i);
    size_t len = strlen(src->name);
    if (len < 2 || strcmp(src->name + len - 2, ".h")) continue;
    header_names[n_headers] = src->name;
    header_texts[n_headers++] = src->text;
  }

  res = nvrtcCreateProgram(&prog, source, name, n_headers, header_texts, header_names);
  if (res != NVRTC_SUCCESS) {
    nvrtc_fail(out, NULL, "nvrtcCreateProgram(%s): %s", name, nvrtcGetErrorString(res));
    goto done;
  }
  res = nvrtcCompileProgram(prog, n_opts, opts);
  out->log = nvrtc_program_log(prog);
  if (res != NVRTC_SUCCESS) {
    char *log = out->log;
    out->log = NULL;
    nvrtc_fail(out, log, "nvrtcCompileProgram(%s): %s", name, nvrtcGetErrorString(res));
    free(log);
    goto done;
  }
  res = nvrtc_copy_code(prog, want_cubin, out);
  if (res != NVRTC_SUCCESS) {
    nvrtc_fail(out, NULL, "%s: reading the %s: %s", name, want_cubin ? "CUBIN" : "PTX",
               nvrtcGetErrorString(res));
    free(out->code);
    out->code = NULL;
    out->size = 0;
    goto done;
  }
  rc = 0;
done:
  if (prog) nvrtcDestroyProgram(&prog);
  free(header_names);
  free(header_texts);
  if (!out->log) out->log = calloc(1, 1);
  return rc;
}

int nvrtc_compile_ptx(const char *kernel_name, nvrtc_output *out) {
  return nvrtc_compile_program(kernel_name, NULL, NULL, 0, 0, out);
}

int nvrtc_compile_ptx_options(const char *source_name, const char *source,
                              const char *const *options, int n_options, nvrtc_output *out) {
  return nvrtc_compile_program(source_name, source, options, n_options, 0, out);
}

int nvrtc_compile_cubin(const char *kernel_name, int sm, nvrtc_output *out) {
  char arch[48];
  const char *options[1];
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d", sm);
  options[0] = arch;
  return nvrtc_compile_program(kernel_name, NULL, options, 1, 1, out);
}

