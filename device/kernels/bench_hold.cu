/*
** bench_hold.cu: the kernel that holds a stream while the host queues a
** timed replay behind it (device_graph_time in runtime.h, `bitgate bench
** --timing held`).
**
** Why: a start event recorded on an idle stream completes at once, so the
** event pair of a replay also counts the host's own cudaGraphLaunch (0.5-1
** us on the H200 hosts), which no kernel change can remove.  With this kernel spinning first, the start event, the graph and
** the stop event are all queued before the GPU reaches the start event; the
** host then writes the release word and the events bracket the graph alone.
**
** One thread polls *release (host-mapped memory, hence volatile) until it
** is nonzero or limit_ns nanoseconds of %globaltimer have passed, and
** writes to *gave_up whether it stopped waiting unreleased: that replay's
** figure includes the submission and the host times it again.  The verdict
** is the last poll's, not a fresh read: a release landing just after the
** limit ran out would otherwise hide a give-up whose replay had already
** started on its own.
*/
static __device__ __forceinline__ unsigned long long bench_hold_now_ns(void) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

extern "C" __global__ void bench_hold(const volatile unsigned *release, unsigned *gave_up,
                                      unsigned long long limit_ns) {
  const unsigned long long start = bench_hold_now_ns();
  unsigned released;
  while ((released = *release) == 0u && bench_hold_now_ns() - start < limit_ns) {
  }
  *gave_up = released == 0u;
}
