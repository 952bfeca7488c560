/*
** test_runtime.c: the device runtime (device/runtime.h) and the IndexShare
** launcher (device/index_share_device.h) on a GPU, against the oracle.
**
** runtime:      guarded buffers catch overruns on either side; the scratch
**               pool keeps addresses and refuses to grow while capturing;
**               capture and replay of a small kernel, and its replays
**               timed held and not; the capture-error word is set by a
**               captured kernel, read and reset; host work is refused while
**               capturing.
** index_share:  a table of cases (f32/f16/bf16, growing and capacity, 1 or 3
**               outputs, i32/i64, 1 or N index heads) compared byte for byte
**               with oracle_index_share_run, with junk-filled outputs and
**               intact canaries; every index rule and the contract give the
**               oracle's op_error; capture is refused before a warm pass; a
**               captured replay equals the oracle and raises the latch iff the
**               oracle rejects the replayed indices -- including an index in
**               [valid_len, cache_seq) in capacity mode, the seed's divergence.
**
** Without a GPU (or without CUDA) every GPU test skips, naming the reason,
** and the binary exits 77 so CTest reports it skipped; the one test that
** runs anyway checks that creating a runtime fails cleanly with a message.
*/
#include "device/device.h"
#include "device/index_share_device.h"
#include "device/kernels/index_share_abi.h"
#include "device/launch_skip.h"
#include "device/runtime.h"
#include "device/tests/gpu_test_support.h"
#include "oracle/index_share.h"
#include "oracle/numerics/numerics.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------ */

static int gpu_available(char *reason, size_t len) {
  device_info info;
  device_probe(&info);
  if (!info.available) snprintf(reason, len, "%s", info.reason);
  return info.available;
}

/* ---- runtime ----------------------------------------------------------------------- */

Test(runtime, create_fails_cleanly_without_a_device) {
  device_runtime *rt = (device_runtime *)1;
  char err[2048] = "", reason[512];
  if (gpu_available(reason, sizeof reason)) {
    cr_expect_neq(device_runtime_create(-1, &rt, err, sizeof err), 0);
    cr_expect_null(rt);
    cr_expect_not_null(strstr(err, "out of range"), "%s", err);
    return;
  }
  cr_expect_neq(device_runtime_create(0, &rt, err, sizeof err), 0);
  cr_expect_null(rt);
  cr_expect_gt(strlen(err), 0, "no reason given");
  cr_log_info("no GPU, as expected: %s", err);
}

/* Needs NVRTC, not a GPU. */
Test(runtime, index_share_compiles_to_an_sm90_cubin_with_every_kernel) {
  static const char *const names[] = {IS_KERNEL_FRONTIER, IS_KERNEL_PRESENT, IS_KERNEL_PRESENT_CAPACITY,
                                      IS_KERNEL_VALIDATE, IS_KERNEL_ROWS};
  gpu_test_expect_cubin(IS_KERNEL_FILE, names, sizeof names / sizeof names[0]);
}

Test(runtime, buffer_canaries_detect_overruns) {
  device_runtime *rt = gpu_test_runtime_or_skip();
  device_buffer buf, view;
  unsigned char host[64], back[64];
  unsigned damage = 99;
  long first_bad[2];
  size_t i;

  GPU_RT_OK(rt, device_buffer_alloc(rt, 40, &buf));
  cr_expect_eq((uintptr_t)buf.dptr % 256, 0, "payload not 256-byte aligned");
  GPU_RT_OK(rt, device_buffer_download(rt, &buf, back, 40));
  for (i = 0; i < 40; i++) cr_expect_eq(back[i], DEVICE_JUNK_BYTE, "payload byte %zu not junk", i);
  GPU_RT_OK(rt, device_buffer_check(rt, &buf, &damage, first_bad));
  cr_expect_eq(damage, 0);

  /* a full, in-bounds write leaves both canaries intact */
  memset(host, 0x11, sizeof host);
  GPU_RT_OK(rt, device_buffer_upload(rt, &buf, host, 40));
  GPU_RT_OK(rt, device_buffer_check(rt, &buf, &damage, first_bad));
  cr_expect_eq(damage, 0);

  /* one byte past the end */
  view = buf;
  view.bytes = 41;
  GPU_RT_OK(rt, device_buffer_upload(rt, &view, host, 41));
  GPU_RT_OK(rt, device_buffer_check(rt, &buf, &damage, first_bad));
  cr_expect_eq(damage, DEVICE_GUARD_AFTER);
  cr_expect_eq(first_bad[0], -1);
  cr_expect_eq(first_bad[1], 0);

  /* and one byte before the start */
  view.dptr = (unsigned char *)buf.dptr - 1;
  view.bytes = 1;
  GPU_RT_OK(rt, device_buffer_upload(rt, &view, host, 1));
  GPU_RT_OK(rt, device_buffer_check(rt, &buf, &damage, first_bad));
  cr_expect_eq(damage, DEVICE_GUARD_BEFORE | DEVICE_GUARD_AFTER);
  cr_expect_eq(first_bad[0], DEVICE_GUARD_BYTES - 1);

  /* oversize copies are refused, not performed */
  cr_expect_neq(device_buffer_upload(rt, &buf, host, 64), 0);
  cr_expect_not_null(strstr(device_runtime_error(rt), "64 bytes"), "%s", device_runtime_error(rt));
  device_buffer_free(&buf);
  cr_expect_null(buf.base);
  device_runtime_destroy(rt);
}

Test(runtime, pool_keeps_addresses_and_refuses_growth_while_capturing) {
  device_runtime *rt = gpu_test_runtime_or_skip();
  device_pool *pool;
  void *a, *again, *b;
  int n_damaged = -1;
  char report[512];
  unsigned char back[16];

  GPU_RT_OK(rt, device_pool_create(rt, &pool));
  GPU_RT_OK(rt, device_pool_slot(pool, "scores", 100, &a));
  GPU_RT_OK(rt, device_pool_slot(pool, "scores", 60, &again));
  cr_expect_eq(a, again, "a smaller request moved the slot");
  GPU_RT_OK(rt, device_pool_slot(pool, "scores", 100, &again));
  cr_expect_eq(a, again);
  GPU_RT_OK(rt, device_pool_slot(pool, "status", 16, &b));
  GPU_RT_OK(rt, device_pool_fill(pool, 0x3c));
  GPU_RT_OK(rt, device_runtime_copy_to_host(rt, back, b, sizeof back));
  cr_expect_eq(back[0], 0x3c);
  cr_expect_eq(back[15], 0x3c);

  GPU_RT_OK(rt, device_runtime_capture_begin(rt));
  cr_expect_eq(device_runtime_is_capturing(rt), 1);
  cr_expect_eq(device_pool_slot(pool, "scores", 100, &again), 0, "%s", device_runtime_error(rt));
  cr_expect_eq(a, again, "the slot moved while capturing");
  cr_expect_neq(device_pool_slot(pool, "scores", 200, &again), 0);
  cr_expect_not_null(strstr(device_runtime_error(rt), "'scores' needs 200 bytes but holds 100"), "%s",
                     device_runtime_error(rt));
  cr_expect_neq(device_pool_slot(pool, "fresh", 8, &again), 0);
  cr_expect_not_null(strstr(device_runtime_error(rt), "'fresh'"), "%s", device_runtime_error(rt));
  cr_expect_neq(device_pool_fill(pool, 0), 0, "fill while capturing");
  gpu_test_capture_end_any(rt);

  GPU_RT_OK(rt, device_pool_slot(pool, "scores", 200, &again));
  cr_expect_eq(device_pool_slot_bytes(pool, "scores"), 200);
  cr_expect_eq(device_pool_slot_bytes(pool, "nope"), 0);
  GPU_RT_OK(rt, device_pool_check(pool, &n_damaged, report, sizeof report));
  cr_expect_eq(n_damaged, 0, "%s", report);
  device_pool_destroy(pool);
  device_runtime_destroy(rt);
}

/*
** The small kernel the capture tests launch: IndexShare's f32 present build
** of one row (past ++ current), its buffers and its arguments.
*/
enum { N_PAST = 3, N_CUR = 2, DIM = 4, N_OUT = (N_PAST + N_CUR) * DIM };
typedef struct present_kernel {
  device_buffer past, cur, out;
  void *kernel;
  const void *p_past, *p_cur;
  void *p_out;
  int storage;
  long long batch, heads, past_seq, cur_seq, dim;
  void *args[9];
} present_kernel;

static void present_kernel_open(device_runtime *rt, present_kernel *f) {
  void *const args[] = {&f->p_past, &f->p_cur, &f->p_out,    &f->storage, &f->batch,
                        &f->heads,  &f->past_seq, &f->cur_seq, &f->dim};
  memset(f, 0, sizeof *f);
  f->storage = IS_STORAGE_F32;
  f->batch = f->heads = 1, f->past_seq = N_PAST, f->cur_seq = N_CUR, f->dim = DIM;
  memcpy(f->args, args, sizeof args);
  GPU_RT_OK(rt, device_runtime_kernel(rt, IS_KERNEL_FILE, IS_KERNEL_PRESENT, &f->kernel));
  GPU_RT_OK(rt, device_buffer_alloc(rt, N_PAST * DIM * sizeof(float), &f->past));
  GPU_RT_OK(rt, device_buffer_alloc(rt, N_CUR * DIM * sizeof(float), &f->cur));
  GPU_RT_OK(rt, device_buffer_alloc(rt, N_OUT * sizeof(float), &f->out));
  f->p_past = f->past.dptr, f->p_cur = f->cur.dptr, f->p_out = f->out.dptr;
}

/* Uploads past and current rows made from seeds, and fills the output with junk. */
static void present_kernel_inputs(device_runtime *rt, present_kernel *f, int seed, float *h_past, float *h_cur) {
  int i;
  for (i = 0; i < N_PAST * DIM; i++) h_past[i] = gpu_test_value(seed, i);
  for (i = 0; i < N_CUR * DIM; i++) h_cur[i] = gpu_test_value(seed + 10, i);
  GPU_RT_OK(rt, device_buffer_upload(rt, &f->past, h_past, N_PAST * DIM * sizeof(float)));
  GPU_RT_OK(rt, device_buffer_upload(rt, &f->cur, h_cur, N_CUR * DIM * sizeof(float)));
  GPU_RT_OK(rt, device_buffer_fill(rt, &f->out, DEVICE_JUNK_BYTE));
}

static void present_kernel_close(present_kernel *f) {
  device_buffer_free(&f->past);
  device_buffer_free(&f->cur);
  device_buffer_free(&f->out);
}

/* A captured f32 present build (past ++ current) replays with new inputs, and times its replays. */
Test(runtime, capture_and_replay_a_small_kernel) {
  device_runtime *rt = gpu_test_runtime_or_skip();
  present_kernel f;
  device_graph *g = NULL;
  void *kernel;
  float h_past[N_PAST * DIM], h_cur[N_CUR * DIM], h_out[N_OUT];
  int round, held, gave_up;
  float ms;

  present_kernel_open(rt, &f);
  GPU_RT_OK(rt, device_runtime_capture_begin(rt));
  GPU_RT_OK(rt, device_runtime_launch(rt, f.kernel, IS_KERNEL_PRESENT, 1, 64, f.args));
  GPU_RT_OK(rt, device_runtime_capture_end(rt, &g));

  for (round = 0; round < 2; round++) {
    present_kernel_inputs(rt, &f, 10 + round, h_past, h_cur);
    GPU_RT_OK(rt, device_graph_replay(rt, g));
    GPU_RT_OK(rt, device_buffer_download(rt, &f.out, h_out, sizeof h_out));
    cr_expect_eq(memcmp(h_out, h_past, sizeof h_past), 0, "round %d: past rows differ", round);
    cr_expect_eq(memcmp(h_out + N_PAST * DIM, h_cur, sizeof h_cur), 0, "round %d: current rows differ",
                 round);
  }
  /* timed replays, held behind bench_hold.cu and not: the graph still runs, the hold is released in time */
  for (held = 0; held < 2; held++) {
    GPU_RT_OK(rt, device_buffer_fill(rt, &f.out, DEVICE_JUNK_BYTE));
    GPU_RT_OK(rt, device_graph_time(rt, g, held, &ms, &gave_up));
    cr_expect(ms > 0.0f && ms < 1000.0f, "held %d: %g ms", held, ms);
    cr_expect_eq(gave_up, 0, "held %d: the hold gave up before the host released it", held);
    GPU_RT_OK(rt, device_buffer_download(rt, &f.out, h_out, sizeof h_out));
    cr_expect_eq(memcmp(h_out + N_PAST * DIM, h_cur, sizeof h_cur), 0, "held %d: the timed replay did not run", held);
  }
  /* launching a cached kernel needs no loading, so it is legal in capture too */
  GPU_RT_OK(rt, device_runtime_capture_begin(rt));
  cr_expect_neq(device_graph_time(rt, g, 1, &ms, &gave_up), 0, "a timed replay while capturing");
  cr_expect_neq(device_runtime_kernel(rt, IS_KERNEL_FILE, "no_such_kernel", &kernel), 0);
  cr_expect_not_null(strstr(device_runtime_error(rt), "before capture"), "%s", device_runtime_error(rt));
  GPU_RT_OK(rt, device_runtime_kernel(rt, IS_KERNEL_FILE, IS_KERNEL_PRESENT, &kernel));
  gpu_test_capture_end_any(rt);
  device_graph_destroy(g);
  present_kernel_close(&f);
  device_runtime_destroy(rt);
}

/*
** bench --skip-kernels: a kernel on the runtime's skip list is left out of a
** capture (its replays leave the output as it was) but runs eagerly; a
** chained launch whose kernels before it were left out is captured as the
** graph's first kernel; with no list, the capture holds the kernel again.
*/
Test(runtime, skipped_kernels_are_left_out_of_captures_only) {
  device_runtime *rt = gpu_test_runtime_or_skip();
  present_kernel f;
  device_graph *g = NULL;
  launch_skip skip;
  float h_past[N_PAST * DIM], h_cur[N_CUR * DIM], h_out[N_OUT];
  unsigned char junk[N_OUT * sizeof(float)];
  char err[256];

  present_kernel_open(rt, &f);
  memset(junk, DEVICE_JUNK_BYTE, sizeof junk);
  cr_assert_eq(launch_skip_parse(&skip, IS_KERNEL_PRESENT, err, sizeof err), 0, "%s", err);
  device_runtime_set_skip(rt, &skip);

  /* eager: runs */
  present_kernel_inputs(rt, &f, 30, h_past, h_cur);
  GPU_RT_OK(rt, device_runtime_launch(rt, f.kernel, IS_KERNEL_PRESENT, 1, 64, f.args));
  GPU_RT_OK(rt, device_buffer_download(rt, &f.out, h_out, sizeof h_out));
  cr_expect_eq(memcmp(h_out + N_PAST * DIM, h_cur, sizeof h_cur), 0, "the eager launch did not run");
  cr_expect_eq(skip.left_out[0], 0, "an eager launch is never left out");

  /* captured: left out */
  GPU_RT_OK(rt, device_runtime_capture_begin(rt));
  GPU_RT_OK(rt, device_runtime_launch(rt, f.kernel, IS_KERNEL_PRESENT, 1, 64, f.args));
  GPU_RT_OK(rt, device_runtime_capture_end(rt, &g));
  cr_expect_eq(skip.left_out[0], 1);
  GPU_RT_OK(rt, device_buffer_fill(rt, &f.out, DEVICE_JUNK_BYTE));
  GPU_RT_OK(rt, device_graph_replay(rt, g));
  GPU_RT_OK(rt, device_buffer_download(rt, &f.out, h_out, sizeof h_out));
  cr_expect_eq(memcmp(h_out, junk, sizeof junk), 0, "the replay ran a kernel left out of its graph");
  device_graph_destroy(g), g = NULL;

  /* a chained launch of the same kernel under another name, after one left out: the graph's first */
  GPU_RT_OK(rt, device_runtime_capture_begin(rt));
  GPU_RT_OK(rt, device_runtime_launch(rt, f.kernel, IS_KERNEL_PRESENT, 1, 64, f.args));
  GPU_RT_OK(rt, device_runtime_launch_as(rt, f.kernel, "the_same_kernel_renamed", 1, 64, f.args,
                                         DEVICE_LAUNCH_CHAINED));
  GPU_RT_OK(rt, device_runtime_capture_end(rt, &g));
  GPU_RT_OK(rt, device_buffer_fill(rt, &f.out, DEVICE_JUNK_BYTE));
  GPU_RT_OK(rt, device_graph_replay(rt, g));
  GPU_RT_OK(rt, device_buffer_download(rt, &f.out, h_out, sizeof h_out));
  cr_expect_eq(memcmp(h_out + N_PAST * DIM, h_cur, sizeof h_cur), 0, "the chained launch after a left-out one");
  cr_expect_eq(skip.left_out[0], 2);
  device_graph_destroy(g), g = NULL;

  /* no list: captured again */
  device_runtime_set_skip(rt, NULL);
  GPU_RT_OK(rt, device_runtime_capture_begin(rt));
  GPU_RT_OK(rt, device_runtime_launch(rt, f.kernel, IS_KERNEL_PRESENT, 1, 64, f.args));
  GPU_RT_OK(rt, device_runtime_capture_end(rt, &g));
  GPU_RT_OK(rt, device_buffer_fill(rt, &f.out, DEVICE_JUNK_BYTE));
  GPU_RT_OK(rt, device_graph_replay(rt, g));
  GPU_RT_OK(rt, device_buffer_download(rt, &f.out, h_out, sizeof h_out));
  cr_expect_eq(memcmp(h_out, h_past, sizeof h_past), 0, "without the list the replay runs the kernel");
  cr_expect_eq(skip.left_out[0], 2);
  device_graph_destroy(g);
  present_kernel_close(&f);
  device_runtime_destroy(rt);
}

/* The validation kernel, captured with the latch, sets it only on a bad row. */
Test(runtime, capture_error_word_set_reset_read) {
  enum { WIDTH = 4 };
  device_runtime *rt = gpu_test_runtime_or_skip();
  device_buffer idx, status;
  device_graph *g = NULL;
  void *kernel;
  const int good[WIDTH] = {0, 2, 5, -1}, bad[WIDTH] = {0, 2, 2, -1};
  const void *p_idx;
  long long *p_status;
  unsigned *latch = device_runtime_latch_ptr(rt), value = 77;
  int index_is_i64 = 0;
  long long batch = 1, heads = 1, q_seq = 1, width = WIDTH, bound = 8;
  const long long *bound_per_batch = NULL;
  void *args[] = {&p_idx, &index_is_i64, &batch, &heads, &q_seq, &width, &bound,
                  &bound_per_batch, &p_status, &latch};

  GPU_RT_OK(rt, device_runtime_kernel(rt, IS_KERNEL_FILE, IS_KERNEL_VALIDATE, &kernel));
  GPU_RT_OK(rt, device_buffer_alloc(rt, sizeof good, &idx));
  GPU_RT_OK(rt, device_buffer_alloc(rt, IS_STATUS_WORDS * sizeof(long long), &status));
  p_idx = idx.dptr, p_status = status.dptr;
  GPU_RT_OK(rt, device_runtime_latch_read(rt, &value));
  cr_expect_eq(value, 0, "a fresh runtime's latch is 0");

  GPU_RT_OK(rt, device_runtime_capture_begin(rt));
  GPU_RT_OK(rt, device_runtime_launch(rt, kernel, IS_KERNEL_VALIDATE, 1, IS_VALIDATE_THREADS, args));
  cr_expect_neq(device_runtime_latch_read(rt, &value), 0, "latch read while capturing");
  cr_expect_neq(device_runtime_latch_reset(rt), 0, "latch reset while capturing");
  GPU_RT_OK(rt, device_runtime_capture_end(rt, &g));

  GPU_RT_OK(rt, device_buffer_upload(rt, &idx, good, sizeof good));
  GPU_RT_OK(rt, device_graph_replay(rt, g));
  GPU_RT_OK(rt, device_runtime_latch_read(rt, &value));
  cr_expect_eq(value, 0, "a good row raised the latch");

  GPU_RT_OK(rt, device_buffer_upload(rt, &idx, bad, sizeof bad));
  GPU_RT_OK(rt, device_graph_replay(rt, g));
  GPU_RT_OK(rt, device_runtime_latch_read(rt, &value));
  cr_expect_eq(value, IS_LATCH_INDEX_BIT, "a duplicate did not raise the latch: 0x%x", value);

  /* the latch is sticky until reset */
  GPU_RT_OK(rt, device_buffer_upload(rt, &idx, good, sizeof good));
  GPU_RT_OK(rt, device_graph_replay(rt, g));
  GPU_RT_OK(rt, device_runtime_latch_read(rt, &value));
  cr_expect_eq(value, IS_LATCH_INDEX_BIT);
  GPU_RT_OK(rt, device_runtime_latch_reset(rt));
  GPU_RT_OK(rt, device_runtime_latch_read(rt, &value));
  cr_expect_eq(value, 0);
  device_graph_destroy(g);
  device_buffer_free(&idx);
  device_buffer_free(&status);
  device_runtime_destroy(rt);
}

Test(runtime, host_work_is_refused_while_capturing) {
  device_runtime *rt = gpu_test_runtime_or_skip();
  device_buffer buf, none;
  device_graph *g = NULL;
  unsigned char host[8] = {0};
  unsigned damage;
  GPU_RT_OK(rt, device_buffer_alloc(rt, sizeof host, &buf));
  GPU_RT_OK(rt, device_runtime_capture_begin(rt));
  cr_expect_neq(device_runtime_capture_begin(rt), 0, "a second capture_begin");
  cr_expect_neq(device_runtime_sync(rt), 0);
  cr_expect_neq(device_buffer_alloc(rt, 8, &none), 0);
  cr_expect_null(none.base);
  cr_expect_neq(device_buffer_upload(rt, &buf, host, sizeof host), 0);
  cr_expect_neq(device_buffer_download(rt, &buf, host, sizeof host), 0);
  cr_expect_neq(device_buffer_check(rt, &buf, &damage, NULL), 0);
  cr_expect_not_null(strstr(device_runtime_error(rt), "capturing"), "%s", device_runtime_error(rt));
  gpu_test_capture_end_any(rt);
  cr_expect_neq(device_runtime_capture_end(rt, &g), 0, "capture_end without a capture");
  cr_expect_null(g);
  device_buffer_free(&buf);
  device_runtime_destroy(rt);
}

/* ---- IndexShare cases ----------------------------------------------------------- */

/* One case's geometry.  bias_rank 4: [B, 1, 1, cache] (capacity) or [B, 1, Sq, total]. */
typedef struct is_case {
  const char *name;
  dtype dt, index_dt;
  int capacity, n_outputs;
  long long batch, heads, kv_heads, q_seq, cur_seq, past_seq, head_size, width, index_heads;
  int bias_rank; /* 0 (none), 2 ([Sq, cache]) or 4 */
  int line;
} is_case;

#define CASE(...) {__VA_ARGS__, __LINE__}
static const is_case is_cases[] = {
    /* name, dt, index_dt, capacity, n_out, B, N, Nkv, Sq, Sc, Sp, H, K, IH, bias_rank */
    CASE("f32.grow.out3.i32", DTYPE_F32, DTYPE_I32, 0, 3, 2, 4, 2, 3, 3, 5, 24, 6, 1, 2),
    CASE("f32.grow.out1.i64.heads", DTYPE_F32, DTYPE_I64, 0, 1, 2, 4, 2, 2, 2, 4, 16, 5, 4, 4),
    CASE("f32.grow.nopast.nobias", DTYPE_F32, DTYPE_I32, 0, 3, 1, 2, 1, 4, 6, 0, 8, 4, 2, 0),
    CASE("bf16.cap.out3.i64.heads", DTYPE_BF16, DTYPE_I64, 1, 3, 2, 4, 2, 1, 1, 8, 16, 5, 4, 4),
    CASE("bf16.grow.out1.i32", DTYPE_BF16, DTYPE_I32, 0, 1, 2, 2, 2, 3, 2, 6, 160, 7, 1, 2),
    CASE("f16.cap.out3.i32.prefill", DTYPE_F16, DTYPE_I32, 1, 3, 2, 2, 1, 2, 2, 9, 32, 6, 1, 4),
    CASE("f32.cap.out3.wide", DTYPE_F32, DTYPE_I32, 1, 3, 1, 2, 2, 1, 1, 300, 8, 200, 1, 4),
};
#define IS_CASE_COUNT (sizeof is_cases / sizeof is_cases[0])

/* Host tensors, the oracle's outputs, and their device mirrors. */
typedef struct is_fixture {
  const is_case *c;
  index_share_attrs attrs;
  tensor in[IS_INPUT_COUNT], want[IS_OUTPUT_COUNT];
  long long valid_len[8]; /* capacity: per batch; growing: total_seq */
  device_buffer d_in[IS_INPUT_COUNT], d_out[IS_OUTPUT_COUNT];
  device_tensor t_in[IS_INPUT_COUNT], t_out[IS_OUTPUT_COUNT];
  const device_tensor *p_in[IS_INPUT_COUNT];
  device_tensor *p_out[IS_OUTPUT_COUNT];
  const tensor *h_in[IS_INPUT_COUNT];
  tensor *h_want[IS_OUTPUT_COUNT];
} is_fixture;

static void set4(tensor *t, dtype dt, long long a, long long b, long long c, long long d) {
  t->dt = dt;
  t->rank = 4;
  t->shape[0] = a, t->shape[1] = b, t->shape[2] = c, t->shape[3] = d;
  cr_assert_eq(tensor_alloc(t), 0);
}

static void fill_float(tensor *t, unsigned seed) {
  long long i, n = tensor_numel(t);
  for (i = 0; i < n; i++) tensor_store_f32(t, i, gpu_test_value(seed, i));
}

static void store_index(tensor *t, long long i, long long v) {
  if (t->dt == DTYPE_I64)
    ((int64_t *)t->data)[i] = v;
  else
    ((int32_t *)t->data)[i] = (int32_t)v;
}

/*
** Valid rows: an increasing choice from [lo, bound) (lo = 1 for batch 1, so
** its key 0, which holds a NaN payload, is never read), at least one, -1 after.
** Capacity case with 4 index heads: (b 0, h 3) selects only key 2, whose bias
** is -inf, an all-masked row.
*/
static void fill_indices(is_fixture *f) {
  const is_case *c = f->c;
  tensor *t = &f->in[IS_IN_INDICES];
  long long b, h, q, s, k;
  for (b = 0; b < c->batch; b++)
    for (h = 0; h < c->index_heads; h++)
      for (q = 0; q < c->q_seq; q++) {
        long long base = ((b * c->index_heads + h) * c->q_seq + q) * c->width, n = 0;
        long long bound = f->valid_len[b], lo = b == 1 ? 1 : 0;
        unsigned row = (unsigned)(base * 31 + 7);
        if (c->capacity && c->index_heads == 4 && b == 0 && h == 3) {
          store_index(t, base + n++, 2);
        } else {
          for (k = lo; k < bound && n < c->width; k++)
            if (gpu_test_mix(row ^ (unsigned)k * 0x85ebca6bu) % 3 != 0) store_index(t, base + n++, k);
          if (n == 0) store_index(t, base + n++, bound - 1);
        }
        for (s = n; s < c->width; s++) store_index(t, base + s, -1);
      }
}

/* The bias: finite below the frontier (a few -inf inside it), -inf beyond. */
static void fill_bias(is_fixture *f) {
  const is_case *c = f->c;
  tensor *t = &f->in[IS_IN_BIAS];
  long long cache = t->shape[3], n = tensor_numel(t), i;
  for (i = 0; i < n; i++) {
    long long k = i % cache, b = c->bias_rank == 4 ? i / (cache * t->shape[2]) : 0;
    float v = gpu_test_value(77, i) * 0.5f;
    if (c->capacity && k >= f->valid_len[b]) v = nx_f32_from_bits(0xff800000u);
    if (k == 2 && b == 0) v = nx_f32_from_bits(0xff800000u); /* masked inside the frontier */
    tensor_store_f32(t, i, v);
  }
}

/* Plants a NaN payload at past/current key and value row 0 of batch 1. */
static void plant_nan(is_fixture *f) {
  const is_case *c = f->c;
  int which = c->past_seq ? IS_IN_PAST_KEY : IS_IN_KEY, j;
  if (c->batch < 2) return;
  for (j = 0; j < 2; j++) {
    tensor *t = &f->in[which + j * (IS_IN_VALUE - IS_IN_KEY)];
    long long at = t->shape[1] * t->shape[2] * t->shape[3]; /* [1, 0, 0, 0] */
    if (t->dt == DTYPE_F32)
      ((uint32_t *)t->data)[at] = 0x7fa00001u;
    else
      ((uint16_t *)t->data)[at] = 0x7fa1u;
  }
}

static void fixture_build(is_fixture *f, const is_case *c) {
  long long total = c->past_seq + c->cur_seq, cache = c->capacity ? c->past_seq : total, b;
  int i;
  memset(f, 0, sizeof *f);
  f->c = c;
  f->attrs.num_heads = c->heads;
  f->attrs.kv_num_heads = c->kv_heads;
  cr_assert_leq(c->batch, 8);
  /* capacity: batch 0 holds 5 valid rows (cache - 37 of a long cache), batch 1 is full */
  for (b = 0; b < c->batch; b++)
    f->valid_len[b] = !c->capacity ? total : b ? cache : cache > 64 ? cache - 37 : cache < 5 ? cache : 5;
  set4(&f->in[IS_IN_QUERY], c->dt, c->batch, c->heads, c->q_seq, c->head_size);
  set4(&f->in[IS_IN_KEY], c->dt, c->batch, c->kv_heads, c->cur_seq, c->head_size);
  set4(&f->in[IS_IN_VALUE], c->dt, c->batch, c->kv_heads, c->cur_seq, c->head_size);
  if (c->past_seq) {
    set4(&f->in[IS_IN_PAST_KEY], c->dt, c->batch, c->kv_heads, c->past_seq, c->head_size);
    set4(&f->in[IS_IN_PAST_VALUE], c->dt, c->batch, c->kv_heads, c->past_seq, c->head_size);
  }
  set4(&f->in[IS_IN_INDICES], c->index_dt, c->batch, c->index_heads, c->q_seq, c->width);
  if (c->bias_rank == 4) set4(&f->in[IS_IN_BIAS], c->dt, c->batch, 1, c->capacity ? 1 : c->q_seq, cache);
  if (c->bias_rank == 2) {
    set4(&f->in[IS_IN_BIAS], c->dt, 1, 1, c->q_seq, cache);
    f->in[IS_IN_BIAS].rank = 2;
    f->in[IS_IN_BIAS].shape[0] = c->q_seq, f->in[IS_IN_BIAS].shape[1] = cache;
  }
  for (i = 0; i < IS_INPUT_COUNT; i++)
    if (f->in[i].dt && dtype_is_float(f->in[i].dt) && i != IS_IN_BIAS) fill_float(&f->in[i], 100 + (unsigned)i);
  if (c->bias_rank) fill_bias(f);
  fill_indices(f);
  plant_nan(f);
  set4(&f->want[IS_OUT_Y], c->dt, c->batch, c->heads, c->q_seq, c->head_size);
  if (c->n_outputs == 3) {
    set4(&f->want[IS_OUT_PRESENT_KEY], c->dt, c->batch, c->kv_heads, cache, c->head_size);
    set4(&f->want[IS_OUT_PRESENT_VALUE], c->dt, c->batch, c->kv_heads, cache, c->head_size);
  }
  for (i = 0; i < IS_INPUT_COUNT; i++) f->h_in[i] = &f->in[i];
  for (i = 0; i < IS_OUTPUT_COUNT; i++) f->h_want[i] = &f->want[i];
}

/* Runs the oracle into want; returns its rc, error in *err. */
static int fixture_oracle(is_fixture *f, op_error *err) {
  return oracle_index_share_run(&f->attrs, f->h_in, IS_INPUT_COUNT, f->h_want, f->c->n_outputs, NULL, err);
}

/* Device buffers for every tensor; inputs uploaded, outputs junk. */
static void fixture_upload(device_runtime *rt, is_fixture *f) {
  int i;
  for (i = 0; i < IS_INPUT_COUNT; i++) {
    f->p_in[i] = NULL;
    if (!f->in[i].dt) continue;
    GPU_RT_OK(rt, device_buffer_alloc(rt, tensor_bytes(&f->in[i]), &f->d_in[i]));
    GPU_RT_OK(rt, device_buffer_upload(rt, &f->d_in[i], f->in[i].data, tensor_bytes(&f->in[i])));
    f->t_in[i].meta = f->in[i];
    f->t_in[i].meta.data = NULL;
    f->t_in[i].dptr = f->d_in[i].dptr;
    f->p_in[i] = &f->t_in[i];
  }
  for (i = 0; i < f->c->n_outputs; i++) {
    GPU_RT_OK(rt, device_buffer_alloc(rt, tensor_bytes(&f->want[i]), &f->d_out[i]));
    f->t_out[i].meta = f->want[i];
    f->t_out[i].meta.data = NULL;
    f->t_out[i].dptr = f->d_out[i].dptr;
    f->p_out[i] = &f->t_out[i];
  }
}

static void fixture_fill_outputs(device_runtime *rt, is_fixture *f, int byte) {
  int i;
  for (i = 0; i < f->c->n_outputs; i++) GPU_RT_OK(rt, device_buffer_fill(rt, &f->d_out[i], byte));
}

static void fixture_free(is_fixture *f) {
  int i;
  for (i = 0; i < IS_INPUT_COUNT; i++) {
    tensor_free(&f->in[i]);
    device_buffer_free(&f->d_in[i]);
  }
  for (i = 0; i < IS_OUTPUT_COUNT; i++) {
    tensor_free(&f->want[i]);
    device_buffer_free(&f->d_out[i]);
  }
}

static const char *const output_names[IS_OUTPUT_COUNT] = {"Y", "present_key", "present_value"};

/* Every output byte equals the oracle's; every canary (inputs too) and the scratch intact. */
static void fixture_compare(device_runtime *rt, is_fixture *f, device_index_share *k, const char *when) {
  char report[1024];
  int i;
  for (i = 0; i < f->c->n_outputs; i++) {
    size_t bytes = tensor_bytes(&f->want[i]), at;
    unsigned char *got = malloc(bytes ? bytes : 1);
    const unsigned char *want = f->want[i].data;
    cr_assert_not_null(got);
    GPU_RT_OK(rt, device_buffer_download(rt, &f->d_out[i], got, bytes));
    for (at = 0; at < bytes && got[at] == want[at]; at++) continue;
    cr_expect_eq(at, bytes, "%s:%d %s (%s): %s differs first at byte %zu of %zu: device 0x%02x, oracle 0x%02x",
                 __FILE__, f->c->line, f->c->name, when, output_names[i], at, bytes,
                 at < bytes ? got[at] : 0, at < bytes ? want[at] : 0);
    free(got);
  }
  for (i = 0; i < IS_INPUT_COUNT + IS_OUTPUT_COUNT; i++) {
    const device_buffer *buf = i < IS_INPUT_COUNT ? &f->d_in[i] : &f->d_out[i - IS_INPUT_COUNT];
    unsigned damage;
    if (!buf->base) continue;
    GPU_RT_OK(rt, device_buffer_check(rt, buf, &damage, NULL));
    cr_expect_eq(damage, 0, "%s (%s): canary of %s %d overwritten (0x%x)", f->c->name, when,
                 i < IS_INPUT_COUNT ? "input" : "output", i % IS_INPUT_COUNT, damage);
  }
  cr_expect_eq(device_index_share_scratch_check(k, report, sizeof report), 0, "%s (%s): %s", f->c->name,
               when, report);
}

static device_index_share *is_open(device_runtime *rt, const index_share_attrs *attrs) {
  device_index_share *k = NULL;
  char err[4096];
  cr_assert_eq(device_index_share_create(rt, attrs, &k, err, sizeof err), 0, "create: %s", err);
  return k;
}

Test(index_share, every_case_matches_the_oracle_byte_for_byte) {
  device_runtime *rt = gpu_test_runtime_or_skip();
  size_t ci;
  for (ci = 0; ci < IS_CASE_COUNT; ci++) {
    is_fixture f;
    device_index_share *k;
    op_error oerr, derr;
    char reason[256];
    int rc, pass;
    static const int junk[2] = {DEVICE_JUNK_BYTE, 0x5a};
    fixture_build(&f, &is_cases[ci]);
    cr_assert_eq(fixture_oracle(&f, &oerr), 0, "%s: oracle rejected the case: %s", f.c->name, oerr.message);
    fixture_upload(rt, &f);
    k = is_open(rt, &f.attrs);
    cr_expect_eq(device_index_share_capture_ready(k, reason, sizeof reason), 0);
    cr_expect_not_null(strstr(reason, "eager"), "%s", reason);
    for (pass = 0; pass < 2; pass++) { /* two junk patterns: an unwritten byte cannot match both */
      fixture_fill_outputs(rt, &f, junk[pass]);
      cr_expect_eq(device_index_share_scratch_fill(k, junk[pass]), 0);
      rc = device_index_share_execute(k, f.p_in, IS_INPUT_COUNT, f.p_out, f.c->n_outputs, &derr);
      cr_assert_eq(rc, DEVICE_IS_OK, "%s: execute rc %d: %s", f.c->name, rc, derr.message);
      fixture_compare(rt, &f, k, pass ? "eager, junk 0x5a" : "eager, junk 0xa5");
    }
    cr_expect_eq(device_index_share_capture_ready(k, NULL, 0), 1);
    device_index_share_destroy(k);
    fixture_free(&f);
  }
  device_runtime_destroy(rt);
}

/* One planted index error: row (b, h, q) of the indices gets `values` from column 0. */
typedef struct index_poison {
  const char *name;
  long long b, h, q;
  long long values[4]; /* -9 ends the list early; absent columns keep their value */
  int use_bound;       /* values[use_bound - 1] is replaced by the row's bound */
  int line;
} index_poison;

#define POISON(...) {__VA_ARGS__, __LINE__}
static const index_poison poisons[] = {
    POISON("sentinel", 1, 0, 0, {0, -2, -9, -9}, 0),
    POISON("after_padding", 0, 0, 0, {0, -1, 3, -9}, 0),
    POISON("out_of_range (bound)", 1, 0, 0, {0, 0, -9, -9}, 2),
    POISON("duplicate", 0, 0, 0, {1, 3, 3, -9}, 0),
    POISON("not_increasing", 1, 0, 0, {1, 4, 2, -9}, 0),
    POISON("all_padding", 0, 0, 0, {-1, -1, -1, -1}, 0),
};
#define POISON_COUNT (sizeof poisons / sizeof poisons[0])

/* Writes p into the host indices (a copy of the good ones in saved) and uploads them. */
static void poison_apply(device_runtime *rt, is_fixture *f, const index_poison *p, const void *saved) {
  tensor *t = &f->in[IS_IN_INDICES];
  const is_case *c = f->c;
  long long h = p->h < c->index_heads ? p->h : 0;
  long long base = ((p->b * c->index_heads + h) * c->q_seq + p->q) * c->width, s;
  memcpy(t->data, saved, tensor_bytes(t));
  for (s = 0; s < 4 && s < c->width && p->values[s] != -9; s++)
    store_index(t, base + s, p->use_bound == s + 1 ? f->valid_len[p->b] : p->values[s]);
  if (p->values[0] == -1) /* all padding: the whole row */
    for (s = 0; s < c->width; s++) store_index(t, base + s, -1);
  GPU_RT_OK(rt, device_buffer_upload(rt, &f->d_in[IS_IN_INDICES], t->data, tensor_bytes(t)));
}

static void *indices_copy(const is_fixture *f) {
  size_t bytes = tensor_bytes(&f->in[IS_IN_INDICES]);
  void *saved = malloc(bytes);
  cr_assert_not_null(saved);
  memcpy(saved, f->in[IS_IN_INDICES].data, bytes);
  return saved;
}

Test(index_share, index_errors_match_the_oracle) {
  static const size_t case_ids[] = {0, 3}; /* f32 growing, bf16 capacity */
  device_runtime *rt = gpu_test_runtime_or_skip();
  size_t ci, pi;
  for (ci = 0; ci < sizeof case_ids / sizeof case_ids[0]; ci++) {
    is_fixture f;
    device_index_share *k;
    void *saved;
    fixture_build(&f, &is_cases[case_ids[ci]]);
    fixture_upload(rt, &f);
    k = is_open(rt, &f.attrs);
    saved = indices_copy(&f);
    for (pi = 0; pi < POISON_COUNT; pi++) {
      op_error oerr, derr;
      char what[160];
      int orc, drc;
      poison_apply(rt, &f, &poisons[pi], saved);
      snprintf(what, sizeof what, "%s:%d %s / %s", __FILE__, poisons[pi].line, f.c->name, poisons[pi].name);
      orc = fixture_oracle(&f, &oerr);
      cr_expect_eq(orc, -1, "%s: the oracle accepted the poison", what);
      cr_expect_eq(oerr.cls, OP_ERR_INDEX, "%s: %s", what, oerr.message);
      drc = device_index_share_execute(k, f.p_in, IS_INPUT_COUNT, f.p_out, f.c->n_outputs, &derr);
      cr_expect_eq(drc, DEVICE_IS_OP_ERROR, "%s: device rc %d: %s", what, drc, derr.message);
      gpu_test_expect_same_error(&derr, &oerr, what);
    }
    /* capacity: an index in [valid_len, cache_seq) is rejected (seed divergence) */
    if (f.c->capacity) {
      op_error oerr, derr;
      cr_assert_lt(f.valid_len[0], f.in[IS_IN_PAST_KEY].shape[2]);
      memcpy(f.in[IS_IN_INDICES].data, saved, tensor_bytes(&f.in[IS_IN_INDICES]));
      store_index(&f.in[IS_IN_INDICES], 0, f.valid_len[0]); /* row (0, 0, 0), column 0 */
      GPU_RT_OK(rt, device_buffer_upload(rt, &f.d_in[IS_IN_INDICES], f.in[IS_IN_INDICES].data,
                                     tensor_bytes(&f.in[IS_IN_INDICES])));
      cr_expect_eq(fixture_oracle(&f, &oerr), -1);
      cr_expect_eq(device_index_share_execute(k, f.p_in, IS_INPUT_COUNT, f.p_out, f.c->n_outputs, &derr),
                   DEVICE_IS_OP_ERROR, "%s", derr.message);
      gpu_test_expect_same_error(&derr, &oerr, "capacity index == valid_len < cache_seq");
    }
    free(saved);
    device_index_share_destroy(k);
    fixture_free(&f);
  }
  device_runtime_destroy(rt);
}

Test(index_share, contract_errors_match_the_oracle_without_launching) {
  device_runtime *rt = gpu_test_runtime_or_skip();
  is_fixture f;
  device_index_share *k;
  op_error oerr, derr;
  fixture_build(&f, &is_cases[0]);
  fixture_upload(rt, &f);
  k = is_open(rt, &f.attrs);
  /* value of the wrong dtype, then a present of the wrong length */
  f.in[IS_IN_VALUE].dt = f.t_in[IS_IN_VALUE].meta.dt = DTYPE_F16;
  cr_expect_eq(fixture_oracle(&f, &oerr), -1);
  cr_expect_eq(device_index_share_execute(k, f.p_in, IS_INPUT_COUNT, f.p_out, 3, &derr), DEVICE_IS_OP_ERROR);
  gpu_test_expect_same_error(&derr, &oerr, "value dtype");
  f.in[IS_IN_VALUE].dt = f.t_in[IS_IN_VALUE].meta.dt = DTYPE_F32;
  f.want[IS_OUT_PRESENT_KEY].shape[2]++;
  f.t_out[IS_OUT_PRESENT_KEY].meta.shape[2]++;
  cr_expect_eq(fixture_oracle(&f, &oerr), -1);
  cr_expect_eq(device_index_share_execute(k, f.p_in, IS_INPUT_COUNT, f.p_out, 3, &derr), DEVICE_IS_OP_ERROR);
  gpu_test_expect_same_error(&derr, &oerr, "present shape");
  f.want[IS_OUT_PRESENT_KEY].shape[2]--;
  f.t_out[IS_OUT_PRESENT_KEY].meta.shape[2]--;
  cr_expect_eq(device_index_share_execute(k, f.p_in, 5, f.p_out, 3, &derr), DEVICE_IS_OP_ERROR);
  cr_expect_eq(derr.cls, OP_ERR_CONTRACT, "%s", derr.message);
  cr_expect_eq(device_index_share_capture_ready(k, NULL, 0), 0, "a failed pass warmed the instance");
  /* capture is refused, with the reason, until a pass succeeds (bias dropped: 6 inputs) */
  GPU_RT_OK(rt, device_runtime_capture_begin(rt));
  cr_expect_eq(device_index_share_execute(k, f.p_in, 6, f.p_out, 3, &derr), DEVICE_IS_FAILED);
  gpu_test_capture_end_any(rt);
  cr_expect_not_null(strstr(derr.message, "eager pass"), "%s", derr.message);
  device_index_share_destroy(k);
  fixture_free(&f);
  device_runtime_destroy(rt);
}

/*
** Warm eager pass, capture, replay: outputs equal the oracle's, latch 0.  Then
** each poison: the latch is raised iff the oracle rejects; the good indices
** again (after a reset) give the oracle's outputs and latch 0.
*/
Test(index_share, captured_replay_matches_oracle_and_latches_bad_rows) {
  static const size_t case_ids[] = {0, 1, 3, 5};
  device_runtime *rt = gpu_test_runtime_or_skip();
  size_t ci, pi;
  for (ci = 0; ci < sizeof case_ids / sizeof case_ids[0]; ci++) {
    is_fixture f;
    device_index_share *k;
    device_graph *g = NULL;
    op_error oerr, derr;
    unsigned latch = 99;
    void *saved;
    char what[160];
    int rc;
    fixture_build(&f, &is_cases[case_ids[ci]]);
    cr_assert_eq(fixture_oracle(&f, &oerr), 0, "%s", oerr.message);
    fixture_upload(rt, &f);
    k = is_open(rt, &f.attrs);
    saved = indices_copy(&f);

    rc = device_index_share_execute(k, f.p_in, IS_INPUT_COUNT, f.p_out, f.c->n_outputs, &derr);
    cr_assert_eq(rc, DEVICE_IS_OK, "%s warm-up: %s", f.c->name, derr.message);
    cr_assert_eq(device_index_share_capture_ready(k, NULL, 0), 1);
    GPU_RT_OK(rt, device_runtime_latch_reset(rt));
    GPU_RT_OK(rt, device_runtime_capture_begin(rt));
    rc = device_index_share_execute(k, f.p_in, IS_INPUT_COUNT, f.p_out, f.c->n_outputs, &derr);
    GPU_RT_OK(rt, device_runtime_capture_end(rt, &g));
    cr_assert_eq(rc, DEVICE_IS_OK, "%s capture: %s", f.c->name, derr.message);

    fixture_fill_outputs(rt, &f, DEVICE_JUNK_BYTE);
    GPU_RT_OK(rt, device_graph_replay(rt, g));
    GPU_RT_OK(rt, device_runtime_latch_read(rt, &latch));
    cr_expect_eq(latch, 0, "%s: good replay raised the latch", f.c->name);
    fixture_compare(rt, &f, k, "replay");

    for (pi = 0; pi < POISON_COUNT + f.c->capacity; pi++) {
      int oracle_rejects;
      if (pi < POISON_COUNT) {
        poison_apply(rt, &f, &poisons[pi], saved);
        snprintf(what, sizeof what, "%s / replay %s", f.c->name, poisons[pi].name);
      } else { /* capacity only: valid_len[0] <= index < cache_seq */
        memcpy(f.in[IS_IN_INDICES].data, saved, tensor_bytes(&f.in[IS_IN_INDICES]));
        store_index(&f.in[IS_IN_INDICES], 0, f.valid_len[0]);
        GPU_RT_OK(rt, device_buffer_upload(rt, &f.d_in[IS_IN_INDICES], f.in[IS_IN_INDICES].data,
                                       tensor_bytes(&f.in[IS_IN_INDICES])));
        snprintf(what, sizeof what, "%s / replay index == valid_len < cache_seq", f.c->name);
      }
      oracle_rejects = fixture_oracle(&f, &oerr) != 0;
      cr_expect(oracle_rejects, "%s: the oracle accepted the poison", what);
      GPU_RT_OK(rt, device_runtime_latch_reset(rt));
      GPU_RT_OK(rt, device_graph_replay(rt, g));
      GPU_RT_OK(rt, device_runtime_latch_read(rt, &latch));
      cr_expect_eq(latch, oracle_rejects ? IS_LATCH_INDEX_BIT : 0u, "%s: latch 0x%x", what, latch);
      cr_expect_eq(device_index_share_scratch_check(k, what, sizeof what), 0, "poisoned replay: %s", what);
    }

    memcpy(f.in[IS_IN_INDICES].data, saved, tensor_bytes(&f.in[IS_IN_INDICES]));
    GPU_RT_OK(rt, device_buffer_upload(rt, &f.d_in[IS_IN_INDICES], saved, tensor_bytes(&f.in[IS_IN_INDICES])));
    cr_assert_eq(fixture_oracle(&f, &oerr), 0, "%s", oerr.message);
    GPU_RT_OK(rt, device_runtime_latch_reset(rt));
    fixture_fill_outputs(rt, &f, 0x5a);
    GPU_RT_OK(rt, device_graph_replay(rt, g));
    GPU_RT_OK(rt, device_runtime_latch_read(rt, &latch));
    cr_expect_eq(latch, 0, "%s: restored replay raised the latch", f.c->name);
    fixture_compare(rt, &f, k, "replay after poison");

    device_graph_destroy(g);
    free(saved);
    device_index_share_destroy(k);
    fixture_free(&f);
  }
  device_runtime_destroy(rt);
}

Test(index_share, capture_with_larger_shapes_names_the_slot) {
  device_runtime *rt = gpu_test_runtime_or_skip();
  is_case longer = is_cases[1]; /* one output: the present lives in scratch */
  is_fixture small, large;
  device_index_share *k;
  op_error derr;
  longer.name = "f32.grow.out1.i64.heads, past + 8";
  longer.past_seq += 8;
  fixture_build(&small, &is_cases[1]);
  fixture_build(&large, &longer);
  fixture_upload(rt, &small);
  fixture_upload(rt, &large);
  k = is_open(rt, &small.attrs);
  cr_assert_eq(device_index_share_execute(k, small.p_in, IS_INPUT_COUNT, small.p_out, 1, &derr), DEVICE_IS_OK,
               "%s", derr.message);
  GPU_RT_OK(rt, device_runtime_capture_begin(rt));
  cr_expect_eq(device_index_share_execute(k, large.p_in, IS_INPUT_COUNT, large.p_out, 1, &derr),
               DEVICE_IS_FAILED);
  gpu_test_capture_end_any(rt);
  cr_expect_not_null(strstr(derr.message, "'present_key'"), "%s", derr.message);
  cr_expect_eq(derr.cls, OP_OK);
  /* eager, the same larger shapes grow the pool and run */
  cr_expect_eq(device_index_share_execute(k, large.p_in, IS_INPUT_COUNT, large.p_out, 1, &derr), DEVICE_IS_OK,
               "%s", derr.message);
  device_index_share_destroy(k);
  fixture_free(&small);
  fixture_free(&large);
  device_runtime_destroy(rt);
}
