/*
** gpu_test_main.c: the main of the GPU test binaries.  Criterion's own main,
** except that a run on a machine with no usable GPU exits 77, which CTest
** reports as skipped (every test in them skips with "skipped: no GPU").
*/
#include "device/device.h"

#include <criterion/criterion.h>

int main(int argc, char *argv[]) {
  struct criterion_test_set *tests = criterion_initialize();
  device_info info;
  int result = 0;
  if (criterion_handle_args(argc, argv, true)) result = !criterion_run_all_tests(tests);
  criterion_finalize(tests);
  /* probed only now: CUDA must not be initialised before the tests fork */
  device_probe(&info);
  if (result == 0 && !info.available) return 77;
  return result;
}
