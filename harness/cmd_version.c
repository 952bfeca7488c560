/*
** cmd_version.c: `bitgate version` and `bitgate --version`.
**
** Prints what a bug report needs: bitgate, oracle and numerics versions, the
** NVRTC version (or "none"), the git revision the binary was built from, the
** kernels' hash and where they come from (embedded, or a kernel tree and
** what it changes), and whether a GPU is present (with the reason when it
** is not).
*/
#include "device/device.h"
#include "device/kernel_sources.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "oracle/numerics/nx_base.h"
#include "oracle/oracle_version.h"

#include <stdio.h>

int cmd_version(int argc, char **argv) {
  device_info dev;
  int i;
  for (i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      printf("usage: bitgate version\n\n"
             "Prints versions, the git revision, the kernels' hash and origin, and the GPU.\n\n%s",
             EXIT_CODES_HELP);
      return EXIT_CODE_PASS;
    }
    return cli_usage_error("version", "unexpected argument '%s'", argv[i]);
  }
  device_probe(&dev);
  printf("bitgate %s\n", bitgate_version);
  printf("oracle %d\n", ORACLE_VERSION);
  printf("numerics %d\n", NX_NUMERICS_VERSION);
  printf("nvrtc %s\n", device_nvrtc_version());
  printf("git %s\n", bitgate_git_revision);
  if (kernel_tree_error())
    printf("kernels unusable (BITGATE_KERNEL_TREE: %s)\n", kernel_tree_error());
  else
    printf("kernels %s (%s)\n", device_kernel_hash(),
           kernel_tree_description() ? kernel_tree_description() : "embedded");
  if (kernel_plant_description()) printf("plant %s\n", kernel_plant_description());
  if (dev.available)
    printf("gpu %s (sm_%d%d, %d device%s, driver %d)\n", dev.name, dev.cc_major, dev.cc_minor,
           dev.device_count, dev.device_count == 1 ? "" : "s", dev.driver_version);
  else
    printf("gpu none (%s)\n", dev.reason);
  return EXIT_CODE_PASS;
}
