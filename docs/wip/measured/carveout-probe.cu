// carveout-probe.cu: does the kernel that held the stream (1 thread, no
// shared memory) cost the timed graph's first kernel an SM reconfiguration?
// One-kernel graphs of empty kernels by block shape and shared memory, timed
// as `bitgate bench --timing held` times a line, under four settings: no
// holding kernel, the holding kernel with no carveout preference, with the
// largest shared memory, and every kernel with the largest.  Standalone
// (docs/SPEED.md, forty-first round):
//   nvcc -O2 -arch=sm_90 -cudart static -o carveout carveout-probe.cu && ./carveout
// `./carveout loads` times instead, with the holding kernel and no carveout
// preference, empty kernels that first issue global loads whose values they
// never use: does a block wait for its loads before it may exit, as the
// index compressor's `index-empty` tree does (forty-second round)?
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <string>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

__device__ unsigned smids[4];
static __device__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }

extern "C" __global__ void hold(const volatile unsigned *release, unsigned long long limit) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  smids[0] = smid();
  for (;;) { if (*release) break; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); if (t - t0 > limit) break; }
}
extern "C" __global__ void empty(int flag) { if (flag == 12345) smids[1] = smid(); }
extern "C" __global__ void empty_smid(int flag) { if (threadIdx.x == 0 && blockIdx.x == 0) smids[1] = smid(); }
extern "C" __global__ void smem8(int flag) { __shared__ float s[2048]; if (flag == 12345) { s[threadIdx.x] = 1; __syncthreads(); smids[2] = (unsigned)s[threadIdx.x ^ 1]; } }
extern "C" __global__ void smem40(int flag) { __shared__ float s[10240]; if (flag == 12345) { s[threadIdx.x] = 1; __syncthreads(); smids[2] = (unsigned)s[threadIdx.x ^ 1]; } if (threadIdx.x == 0 && blockIdx.x == 0) smids[1] = smid(); }
extern "C" __global__ void dsmem(int flag) { extern __shared__ float s[]; if (flag == 12345) { s[threadIdx.x] = 1; __syncthreads(); smids[2] = (unsigned)s[threadIdx.x ^ 1]; } }

// One (or four independent) 32-bit loads a thread whose values are never
// used, then exit, as the index compressor's `index-empty` tree issues its
// ape, norm and angle-frequency loads before the decode step's early
// return; hot: the same addresses every replay (L2 hits); cold: a new 1 MiB
// slab a replay.  ld.volatile, or ptxas drops or sinks the loads.
static __device__ __forceinline__ float load_unused(const float *p) {
  float v;
  asm volatile("ld.volatile.global.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
  return v;
}
extern "C" __global__ void load1(const float *base, long long slab) { load_unused(base + slab * 262144 + threadIdx.x); }
extern "C" __global__ void load4(const float *base, long long slab) {
  const float *p = base + slab * 262144 + threadIdx.x;
  load_unused(p), load_unused(p + 65536), load_unused(p + 131072), load_unused(p + 196608);
}

// One replay of ge timed as `bench --timing held` times it: the holding
// kernel first (unless hold is false), the events around the graph, then the
// release; microseconds.
static float replay_us(cudaStream_t st, cudaEvent_t a, cudaEvent_t b, unsigned *words, unsigned *dwords,
                       cudaGraphExec_t ge, bool held) {
  words[0] = 0;
  if (held) { unsigned long long lim = 20000000ull; void *ha[] = {&dwords, &lim}; CK(cudaLaunchKernel((void *)hold, 1, 1, ha, 0, st)); }
  CK(cudaEventRecord(a, st)); CK(cudaGraphLaunch(ge, st)); CK(cudaEventRecord(b, st));
  __atomic_store_n(&words[0], 1u, __ATOMIC_SEQ_CST);
  CK(cudaStreamSynchronize(st));
  float t; CK(cudaEventElapsedTime(&t, a, b));
  return t * 1000.0f;
}

// The loads table: one-kernel graphs (1 x 288) behind the holding kernel.
static void loads_table(cudaStream_t st, cudaEvent_t a, cudaEvent_t b, unsigned *words, unsigned *dwords) {
  const int slabs = 256; /* 256 MiB, past the 50 MiB L2 */
  float *buf;
  CK(cudaMalloc((void **)&buf, (size_t)slabs << 20));
  CK(cudaMemset(buf, 0, (size_t)slabs << 20));
  struct { const char *name; void *fn; int cold; } rows[] = {
    {"empty", (void *)empty, 0}, {"1 load, hot", (void *)load1, 0}, {"1 load, cold", (void *)load1, 1},
    {"4 loads, hot", (void *)load4, 0}, {"4 loads, cold", (void *)load4, 1},
  };
  for (auto &r : rows) {
    long long slab = 0;
    int flag = 0;
    void *eargs[] = {&flag}, *largs[] = {&buf, &slab};
    std::vector<cudaGraphExec_t> ges;
    for (int k = 0; k < (r.cold ? 60 : 1); k++) { /* cold: a graph a slab, parameters baked in */
      cudaGraph_t g; cudaGraphExec_t ge;
      slab = k * 4 % slabs;
      CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
      CK(cudaLaunchKernel(r.fn, 1, 288, r.fn == (void *)empty ? eargs : largs, 0, st));
      CK(cudaStreamEndCapture(st, &g));
      CK(cudaGraphInstantiate(&ge, g, 0));
      CK(cudaGraphDestroy(g));
      ges.push_back(ge);
    }
    std::vector<float> us;
    for (int i = 0; i < 60; i++) {
      const float t = replay_us(st, a, b, words, dwords, ges[i % ges.size()], true);
      if (i >= 10) us.push_back(t);
    }
    std::sort(us.begin(), us.end());
    printf("loads  %-16s median %6.2f us  min %6.2f  q90 %6.2f\n", r.name, us[us.size() / 2], us[0], us[us.size() * 9 / 10]);
    for (auto ge : ges) CK(cudaGraphExecDestroy(ge));
  }
  CK(cudaFree(buf));
}

struct variant { const char *name; void *fn; int blocks, threads; size_t dyn; };

int main(int argc, char **argv) {
  unsigned *words, *dwords;
  CK(cudaHostAlloc((void **)&words, 8, cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer((void **)&dwords, words, 0));
  cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  if (argc > 1 && std::string(argv[1]) == "loads") return loads_table(st, a, b, words, dwords), 0;
  CK(cudaFuncSetAttribute((void *)dsmem, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
  variant vs[] = {
    {"empty 1x32", (void *)empty, 1, 32, 0},
    {"empty 1x288", (void *)empty, 1, 288, 0},
    {"smem 8K 1x288", (void *)smem8, 1, 288, 0},
    {"smem 40K 1x288", (void *)smem40, 1, 288, 0},
    {"dyn smem 100K 1x288", (void *)dsmem, 1, 288, 100 * 1024},
    {"smem 40K 80x256", (void *)smem40, 80, 256, 0},
    {"dyn smem 100K 128x256", (void *)dsmem, 128, 256, 100 * 1024},
  };
  const char *holds[] = {"no hold", "hold default", "hold max shared", "all max shared"};
  for (int h = 0; h < 4; h++) {
    if (h == 2) CK(cudaFuncSetAttribute((void *)hold, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    if (h == 3) {
      void *fns[] = {(void *)empty, (void *)smem8, (void *)smem40, (void *)dsmem};
      for (void *f : fns) CK(cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    }
    for (int vi = -1; vi < (int)(sizeof vs / sizeof vs[0]); vi++) {
      int flag = 0; void *args[] = {&flag};
      cudaGraph_t g; cudaGraphExec_t ge;
      const char *name;
      CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
      if (vi < 0) { /* two kernels: an smem-less grid, then the 80-block smem grid */
        name = "empty 132x32 + smem40 80x256";
        CK(cudaLaunchKernel((void *)empty, 132, 32, args, 0, st));
        CK(cudaLaunchKernel((void *)smem40, 80, 256, args, 0, st));
      } else {
        variant &v = vs[vi];
        name = v.name;
        CK(cudaLaunchKernel(v.fn, v.blocks, v.threads, args, v.dyn, st));
      }
      CK(cudaStreamEndCapture(st, &g));
      CK(cudaGraphInstantiate(&ge, g, 0));
      std::vector<float> ms;
      unsigned same = 0;
      for (int i = 0; i < 60; i++) {
        const float t = replay_us(st, a, b, words, dwords, ge, h != 0);
        if (i >= 10) ms.push_back(t);
        unsigned sm[4]; CK(cudaMemcpyFromSymbol(sm, smids, sizeof sm));
        same += sm[0] == sm[1];
      }
      std::sort(ms.begin(), ms.end());
      printf("%-18s %-30s median %6.2f us  min %6.2f  q90 %6.2f  (hold SM == smem40 block 0 SM: %u of 60)\n", holds[h], name, ms[ms.size() / 2], ms[0], ms[ms.size() * 9 / 10], same);
      CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
    }
  }
  return 0;
}
