/*
** cmd_audit.c: `bitgate audit [--kernel NAME] [--ptx-out DIR]`.
**
** Compiles every embedded kernel with NVRTC under the pinned options and
** audits its PTX (device/ptx_audit.h); prints one line per kernel and one per
** finding.  Exit codes (exit_codes.h): 0 clean, 1 findings or a kernel that
** does not compile, 2 usage error, 3 no NVRTC in this build.  Needs no GPU,
** so CI runs it on any machine with the CUDA toolkit.
*/
#include "harness/cmd_audit.h"
#include "device/device.h"
#include "device/kernel_sources.h"
#include "device/ptx_audit.h"
#include "harness/cli.h"
#include "harness/exit_codes.h"

#include <stdio.h>
#include <string.h>

static void audit_print_help(FILE *out) {
  fprintf(out,
          "usage: bitgate audit [--kernel NAME] [--ptx-out DIR]\n\n"
          "Compiles every embedded kernel (device/kernels/*.cu) with NVRTC under the\n"
          "pinned options and audits its PTX.  Needs NVRTC, not a GPU.  A finding is\n"
          "an .approx or .ftz instruction, a floating fma/mad beyond the kernel's\n"
          "allowance, a bare add/sub/mul on floats (no rounding modifier: ptxas may\n"
          "fuse it), div.full, or a call into libdevice.\n\n"
          "options:\n"
          "  --kernel NAME   audit only this kernel file, e.g. numerics_probe.cu\n"
          "  --ptx-out DIR   also write each kernel's PTX as DIR/NAME.ptx (an existing\n"
          "                  folder), e.g. for ci/sass.sh to read its SASS\n"
          "  --help          this text\n\n%s",
          EXIT_CODES_HELP);
}

static int is_embedded_kernel(const char *name) {
  size_t len = strlen(name);
  return len > 3 && !strcmp(name + len - 3, ".cu") && kernel_source_find(name) != NULL;
}

/* "a.cu, b.cu": the embedded kernel files, for the usage error. */
static const char *embedded_kernel_list(char *buf, size_t len) {
  size_t used = 0;
  int i;
  buf[0] = '\0';
  for (i = 0; i < kernel_source_total() && used < len; i++)
    if (is_embedded_kernel(kernel_source_at(i)->name))
      used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                               kernel_source_at(i)->name);
  return buf;
}

int cmd_audit(int argc, char **argv) {
  const char *kernel = NULL, *ptx_dir = NULL;
  char names[512];
  int i, got;
  for (i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      audit_print_help(stdout);
      return EXIT_CODE_PASS;
    }
    got = cli_option_value("audit", argc, argv, &i, "--kernel", &kernel);
    if (!got) got = cli_option_value("audit", argc, argv, &i, "--ptx-out", &ptx_dir);
    if (got < 0) return EXIT_CODE_USAGE;
    if (!got) return cli_usage_error("audit", "unexpected argument '%s'", argv[i]);
  }
  if (kernel && !is_embedded_kernel(kernel))
    return cli_usage_error("audit", "--kernel '%s' is not an embedded kernel (there are: %s)",
                           kernel, embedded_kernel_list(names, sizeof names));
  if (!device_built_with_cuda())
    return cli_env_error("audit",
                         "this build has no NVRTC (CUDA toolkit not found at configure time)");
  switch (ptx_audit_all_kernels(stdout, kernel, ptx_dir)) {
  case PTX_AUDIT_CLEAN: return EXIT_CODE_PASS;
  case PTX_AUDIT_NO_NVRTC: return EXIT_CODE_ENV; /* not reached: checked above */
  case PTX_AUDIT_NOT_WRITTEN: return EXIT_CODE_ENV;
  default: return EXIT_CODE_FAIL;
  }
}
