/*
** test_device_probe.c: what device_probe says when no GPU is usable.  Runs on
** every machine with the CUDA toolkit, GPU or not: the case it checks is the
** one the machine is in.
**
** cudart says "CUDA driver version is insufficient for CUDA runtime version"
** both when the driver is too old and when there is no driver at all (a CI
** machine, a laptop); the probe's reason must tell the two apart first.
*/
#include "device/device.h"

#include <criterion/criterion.h>
#include <string.h>

Test(device_probe, an_unusable_device_has_a_reason_that_says_why_first) {
  device_info info;
  device_probe(&info);
  if (info.available) {
    cr_expect_gt(info.driver_version, 0, "a usable GPU has a driver");
    cr_expect_eq(info.reason[0], '\0', "no reason when available: '%s'", info.reason);
    return;
  }
  cr_expect_neq(info.reason[0], '\0', "an unusable device has a reason");
  if (info.driver_version == 0) {
    cr_expect(strncmp(info.reason, "no NVIDIA driver is installed, so no GPU is usable; ", 52) == 0,
              "no driver here (driver version 0), yet the reason is '%s'", info.reason);
  } else {
    cr_expect(strstr(info.reason, "no NVIDIA driver is installed") == NULL,
              "driver version %d here, yet the reason is '%s'", info.driver_version, info.reason);
  }
  cr_expect(strstr(info.reason, "cudaGetDevice") != NULL, /* cudaGetDeviceCount or cudaGetDeviceProperties */
            "cudart's own words stay: '%s'", info.reason);
}
