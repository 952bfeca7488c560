/*
** bench_floor.cu: kernels that do nothing, for the "launch floor" lines of
** `bitgate bench` (harness/bench_launch_floor.c).  A graph of them, timed as
** every bench line is, reads what this GPU and host charge for the launches
** alone, so that a line can be read as that floor plus its kernels' work.
**
** bench_floor_empty is one kernel's floor.  bench_floor_pass is what an
** attention pass is with its work left out: it lets the next pass launch
** (the passes' early release) and waits for the one before, so three of
** them, launched as csa_device_attention_plan launches the B = 1 passes,
** read the chain's launches and hand-overs and nothing else.
*/
#include "numerics.h"
#include "nx_csa.h"
#include "csa_kernel_common.h"

extern "C" __global__ void bench_floor_empty(void) {}

extern "C" __global__ void bench_floor_pass(void) {
  csa_chain_release();
  csa_chain_wait();
}
