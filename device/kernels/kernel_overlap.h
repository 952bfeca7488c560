/*
** kernel_overlap.h: programmatic dependent launch (sm_90), for the fast
** kernels of every operator.  device_runtime_launch_overlapped lets a kernel
** start while the one before it on the stream is still finishing, so a
** step's chain of short kernels does not pay a whole launch gap per kernel.
** What keeps that exact: every kernel launched so calls kernel_overlap_begin
** before its first memory access, and griddepcontrol.wait returns only once
** the previous grid has completed and its writes are visible; so each kernel
** still sees its predecessors' outputs whole, as with a plain launch.
** Launched plainly (the reference variant, the tests' own launches) both
** instructions do nothing.
*/
#ifndef KERNEL_OVERLAP_H
#define KERNEL_OVERLAP_H

static __device__ __forceinline__ void kernel_overlap_begin(void) {
  /* The next kernel may be scheduled once every block of this one has begun... */
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  /* ...and this one reads nothing until the previous kernel is done. */
  asm volatile("griddepcontrol.wait;" ::: "memory");
}

#endif /* KERNEL_OVERLAP_H */
