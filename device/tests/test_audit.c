/*
** test_audit.c: the PTX audit (device/ptx_audit.h) and the NVRTC compile path
** (device/nvrtc_compile.h).  Needs NVRTC, not a GPU; built only when the
** CUDA toolkit was found.
**
** Every embedded kernel must pass the audit under the pinned options, and
** every way of breaking the pinned numerics that DESIGN.md names must be
** caught: --fmad=true, --ftz=true, __expf, --use_fast_math, __fmaf_rn.
*/
#include "device/device.h"
#include "device/kernel_sources.h"
#include "device/nvrtc_compile.h"
#include "device/ptx_audit.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* acc += a*b: NVRTC's default --fmad=true turns it into fma.rn.f32. */
static const char dot_source[] =
    "extern \"C\" __global__ void dot(const float *a, const float *b, float *out, int n) {\n"
    "  float acc = 0.0f;\n"
    "  for (int i = 0; i < n; i++) acc += a[i] * b[i];\n"
    "  *out = acc;\n"
    "}\n";

static const char expf_fast_source[] =
    "extern \"C\" __global__ void k(const float *x, float *y) { *y = __expf(*x); }\n";

static const char sinf_source[] =
    "extern \"C\" __global__ void k(const float *x, float *y) { *y = sinf(*x); }\n";

static const char fmaf_source[] =
    "extern \"C\" __global__ void k(const float *x, float *y) {\n"
    "  *y = __fmaf_rn(x[0], x[1], x[2]);\n"
    "}\n";

static const char fma_f64_source[] =
    "extern \"C\" __global__ void k(const double *x, double *y) {\n"
    "  *y = __fma_rn(x[0], x[1], x[2]);\n"
    "}\n";

/* Prints r's findings, for the message of a failed assertion. */
static void print_findings(const ptx_audit_result *r) {
  int i;
  for (i = 0; i < r->n_findings; i++) ptx_finding_print(stderr, r->source_name, &r->findings[i]);
}

/* Findings that break `rule`. */
static int count_rule(const ptx_audit_result *r, unsigned rule) {
  int i, n = 0;
  for (i = 0; i < r->n_findings; i++) n += (r->findings[i].rules & rule) != 0;
  return n;
}

/* Compiles (source NULL: the embedded file) with extra options; returns the PTX. */
static char *compile_ptx(const char *name, const char *source, const char *const *options,
                         int n_options) {
  nvrtc_output out;
  char *ptx;
  int rc = nvrtc_compile_ptx_options(name, source, options, n_options, &out);
  cr_assert_eq(rc, 0, "%s did not compile:\n%s", name, out.log);
  ptx = out.code;
  out.code = NULL;
  nvrtc_output_free(&out);
  return ptx;
}

/* Compiles and audits with no FMA allowance; returns the number of findings. */
static int audit_build(const char *name, const char *source, const char *const *options,
                       int n_options, ptx_audit_result *r) {
  char *ptx = compile_ptx(name, source, options, n_options);
  int n = ptx_audit_run(ptx, name, 0, r);
  free(ptx);
  cr_assert_geq(n, 0, "ptx_audit_run ran out of memory");
  print_findings(r);
  return n;
}

/* ---- the pinned build is clean -------------------------------------------- */

Test(audit, every_embedded_kernel_passes_under_pinned_options) {
  int i, n_kernels = 0;
  for (i = 0; i < kernel_source_total(); i++) {
    const char *name = kernel_source_at(i)->name;
    size_t len = strlen(name);
    ptx_audit_result r;
    if (len < 3 || strcmp(name + len - 3, ".cu")) continue;
    n_kernels++;
    cr_expect_eq(audit_build(name, NULL, NULL, 0, &r), 0, "%s has %d audit findings", name,
                 r.n_findings);
    cr_expect_gt(r.n_instructions, 0, "%s: no instructions seen", name);
    ptx_audit_result_free(&r);
  }
  cr_assert_geq(n_kernels, 5, "expected the numerics kernels, index_share.cu, csa128.cu and csa4.cu embedded");
}

Test(audit, audit_all_kernels_reports_ok_per_kernel) {
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  int status;
  cr_assert_not_null(out);
  status = ptx_audit_all_kernels(out, NULL, NULL);
  fclose(out);
  fprintf(stderr, "%s", text);
  cr_expect_eq(status, PTX_AUDIT_CLEAN);
  cr_expect_not_null(strstr(text, "ok numerics_probe.cu: "), "%s", text);
  cr_expect_not_null(strstr(text, "ok numerics_sweep.cu: "), "%s", text);
  cr_expect_not_null(strstr(text, "ok csa128.cu: "), "%s", text);
  cr_expect_not_null(strstr(text, "ok csa4.cu: "), "%s", text);
  cr_expect_null(strstr(text, "FAIL"), "%s", text);
  free(text);
}

Test(audit, audit_all_kernels_filters_and_names_unknown_kernels) {
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  cr_assert_not_null(out);
  cr_expect_eq(ptx_audit_all_kernels(out, "numerics_probe.cu", NULL), PTX_AUDIT_CLEAN);
  cr_expect_eq(ptx_audit_all_kernels(out, "no_such_kernel.cu", NULL), PTX_AUDIT_FINDINGS);
  fclose(out);
  cr_expect_not_null(strstr(text, "ok numerics_probe.cu: "), "%s", text);
  cr_expect_null(strstr(text, "numerics_sweep.cu"), "%s", text);
  cr_expect_not_null(strstr(text, "FAIL no_such_kernel.cu: no kernel of that name"), "%s", text);
  free(text);
}

Test(audit, pinned_build_rounds_every_float_op_explicitly) {
  char *ptx = compile_ptx("dot.cu", dot_source, NULL, 0);
  cr_expect_not_null(strstr(ptx, "mul.rn.f32"), "%s", ptx);
  cr_expect_not_null(strstr(ptx, "add.rn.f32"), "%s", ptx);
  cr_expect_null(strstr(ptx, "fma."), "%s", ptx);
  free(ptx);
}

/* ---- planted bugs are caught ------------------------------------------------ */

Test(audit, catches_fmad_true_on_a_dot_product) {
  const char *options[] = {"--fmad=true"};
  ptx_audit_result r;
  cr_expect_gt(audit_build("dot.cu", dot_source, options, 1, &r), 0);
  cr_expect_gt(count_rule(&r, PTX_RULE_FMA), 0, "no fma finding under --fmad=true");
  ptx_audit_result_free(&r);
}

/* The numerics and the CSA kernels built on them: --fmad=true fuses somewhere in each. */
Test(audit, catches_fmad_true_on_the_numerics) {
  static const char *const kernels[] = {"numerics_probe.cu", "csa128.cu", "csa4.cu"};
  const char *options[] = {"--fmad=true"};
  size_t i;
  for (i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
    ptx_audit_result r;
    cr_expect_gt(audit_build(kernels[i], NULL, options, 1, &r), 0, "%s", kernels[i]);
    cr_expect_gt(count_rule(&r, PTX_RULE_FMA), 0, "%s: no fma finding under --fmad=true", kernels[i]);
    ptx_audit_result_free(&r);
  }
}

Test(audit, catches_ftz_true) {
  const char *options[] = {"--ftz=true"};
  ptx_audit_result r;
  cr_expect_gt(audit_build("dot.cu", dot_source, options, 1, &r), 0);
  cr_expect_gt(count_rule(&r, PTX_RULE_FTZ), 0, "no ftz finding under --ftz=true");
  ptx_audit_result_free(&r);
}

Test(audit, catches_fast_expf_intrinsic) {
  ptx_audit_result r;
  cr_expect_gt(audit_build("expf_fast.cu", expf_fast_source, NULL, 0, &r), 0);
  cr_expect_gt(count_rule(&r, PTX_RULE_APPROX), 0, "__expf not caught as .approx");
  ptx_audit_result_free(&r);
}

Test(audit, catches_use_fast_math) {
  const char *options[] = {"--use_fast_math"};
  ptx_audit_result r;
  cr_expect_gt(audit_build("sinf.cu", sinf_source, options, 1, &r), 0);
  cr_expect_gt(count_rule(&r, PTX_RULE_APPROX), 0, "--use_fast_math sinf not caught");
  ptx_audit_result_free(&r);
}

Test(audit, catches_explicit_fmaf_rn_under_pinned_options) {
  ptx_audit_result r;
  cr_expect_eq(audit_build("fmaf.cu", fmaf_source, NULL, 0, &r), 1);
  cr_expect_eq(count_rule(&r, PTX_RULE_FMA), 1);
  cr_expect_not_null(strstr(r.findings[0].text, "fma.rn.f32"), "%s", r.findings[0].text);
  ptx_audit_result_free(&r);
  cr_expect_eq(audit_build("fma_f64.cu", fma_f64_source, NULL, 0, &r), 1);
  cr_expect_eq(count_rule(&r, PTX_RULE_FMA), 1);
  ptx_audit_result_free(&r);
}

/* ---- the scanner on hand-written PTX --------------------------------------- */

static const char clean_ptx[] =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry k(\n"
    "\t.param .u64 k_param_0\n"
    ")\n"
    "{\n"
    "\t.reg .f32 \t%f<5>;\n"
    "\t.reg .b64 \t%rd<2>;\n"
    "\n"
    "\tld.param.u64 \t%rd1, [k_param_0];\n"
    "\tld.global.f32 \t%f1, [%rd1];\n"
    "\tadd.rn.f32 \t%f2, %f1, %f1;\n"
    "\tmul.rn.f32 \t%f3, %f2, %f1;  // add.f32 in a comment is no instruction\n"
    "\t/* mul.f32 and fma.rn.f32\n"
    "\t   in a block comment neither */\n"
    "\t{ cvt.rn.bf16.f32 %rs1, %f3;}\n"
    "$L__BB0_1:\n"
    "\tst.global.f32 \t[%rd1], %f3;\n"
    "\tret;\n"
    "}\n";

Test(audit, clean_ptx_snippet_has_no_findings) {
  ptx_audit_result r;
  cr_expect_eq(ptx_audit_run(clean_ptx, "clean.ptx", 0, &r), 0);
  print_findings(&r);
  cr_expect_eq(r.n_instructions, 7, "instructions: %d", r.n_instructions);
  ptx_audit_result_free(&r);
}

Test(audit, bare_add_f32_is_exactly_one_finding) {
  static const char marker[] = "\tadd.rn.f32 \t%f2, %f1, %f1;\n";
  char ptx[sizeof clean_ptx + 64];
  const char *at = strstr(clean_ptx, marker);
  size_t head;
  ptx_audit_result r;
  cr_assert_not_null(at);
  head = (size_t)(at - clean_ptx) + strlen(marker);
  /* insert "add.f32" as line 15, after the add.rn.f32 on line 14 */
  snprintf(ptx, sizeof ptx, "%.*s\tadd.f32 \t%%f4, %%f2, %%f1;\n%s", (int)head, clean_ptx,
           clean_ptx + head);
  cr_assert_eq(ptx_audit_run(ptx, "dirty.ptx", 0, &r), 1);
  cr_expect_eq(r.findings[0].line, 15);
  cr_expect_eq(r.findings[0].rules, PTX_RULE_BARE_ARITH);
  cr_expect_str_eq(r.findings[0].text, "add.f32 %f4, %f2, %f1;");
  ptx_audit_result_free(&r);
}

/* One PTX line and the rules it must break, with where the row is written. */
static const struct rule_case {
  const char *line;
  unsigned rules;
  int src_line;
} rule_cases[] = {
#define T(line, rules) {line, rules, __LINE__}
    T("add.f32 %f1, %f2, %f3;", PTX_RULE_BARE_ARITH),
    T("@%p1 sub.f64 %fd1, %fd2, %fd3;", PTX_RULE_BARE_ARITH),
    T("@!%p2 bra $L__BB0_3;", 0),
    T("$L__BB0_2: mul.f32 %f1, %f2, %f3;", PTX_RULE_BARE_ARITH),
    T("mul.rn.f64 %fd1, %fd2, %fd3;", 0),
    T("add.rz.f32 %f1, %f2, %f3;", 0),
    T("add.sat.f32 %f1, %f2, %f3;", PTX_RULE_BARE_ARITH),
    T("sub.f16x2 %r1, %r2, %r3;", PTX_RULE_BARE_ARITH),
    T("add.rn.f32x2 %rd1, %rd2, %rd3;", 0),
    T("fma.rn.f32 %f1, %f2, %f3, %f4;", PTX_RULE_FMA),
    T("fma.rn.f64 %fd1, %fd2, %fd3, %fd4;", PTX_RULE_FMA),
    T("mad.rn.f32 %f1, %f2, %f3, %f4;", PTX_RULE_FMA),
    T("fma.rn.ftz.f32 %f1, %f2, %f3, %f4;", PTX_RULE_FMA | PTX_RULE_FTZ),
    T("mad.lo.s32 %r1, %r2, %r3, %r4;", 0),
    T("mul.wide.u32 %rd1, %r1, 4;", 0),
    T("add.s64 %rd1, %rd2, %rd3;", 0),
    T("ex2.approx.ftz.f32 %f1, %f2;", PTX_RULE_APPROX | PTX_RULE_FTZ),
    T("ex2.approx.f32 %f1, %f2;", PTX_RULE_APPROX),
    T("lg2.approx.f32 %f1, %f2;", PTX_RULE_APPROX),
    T("sin.approx.f32 %f1, %f2;", PTX_RULE_APPROX),
    T("rcp.approx.ftz.f64 %fd1, %fd2;", PTX_RULE_APPROX | PTX_RULE_FTZ),
    T("rsqrt.approx.f32 %f1, %f2;", PTX_RULE_APPROX),
    T("sqrt.approx.f32 %f1, %f2;", PTX_RULE_APPROX),
    T("sqrt.rn.f32 %f1, %f2;", 0),
    T("div.rn.f32 %f1, %f2, %f3;", 0),
    T("div.full.f32 %f1, %f2, %f3;", PTX_RULE_DIV_FULL),
    T("setp.lt.ftz.f32 %p1, %f1, %f2;", PTX_RULE_FTZ),
    T("cvt.rn.f32.f64 %f1, %fd1;", 0),
    T("{ cvt.rn.bf16.f32 %rs1, %f1;}", 0),
    T("{ add.f32 %f1, %f2, %f3; mul.f32 %f4, %f1, %f1; }", PTX_RULE_BARE_ARITH),
    T("neg.f32 %f1, %f2;", 0),
    T("mov.b64 {%r1, %r2}, %rd1;", 0),
    T("call.uni (retval0), __nv_expf, (param0);", PTX_RULE_LIBDEVICE),
    T("call.uni (retval0), vprintf, (param0, param1);", 0),
    T(".global .align 8 .b8 table[16] = {0, 0, 0, 0, 0, 0, 240, 63};", 0),
#undef T
};

Test(audit, rules_table) {
  size_t i;
  for (i = 0; i < sizeof rule_cases / sizeof rule_cases[0]; i++) {
    const struct rule_case *c = &rule_cases[i];
    char ptx[256];
    ptx_audit_result r;
    unsigned got = 0;
    int j;
    snprintf(ptx, sizeof ptx, "{\n\t%s\n}\n", c->line);
    cr_assert_geq(ptx_audit_run(ptx, "table.ptx", 0, &r), 0);
    for (j = 0; j < r.n_findings; j++) {
      got |= r.findings[j].rules;
      cr_expect_eq(r.findings[j].line, 2, "%s:%d: finding on line %d", __FILE__, c->src_line,
                   r.findings[j].line);
    }
    cr_expect_eq(got, c->rules, "%s:%d: '%s': rules 0x%x, expected 0x%x", __FILE__,
                 c->src_line, c->line, got, c->rules);
    ptx_audit_result_free(&r);
  }
}

Test(audit, fma_allowance_reports_all_only_when_exceeded) {
  static const char two_fmas[] = "{\n\tfma.rn.f32 %f1, %f2, %f3, %f4;\n"
                                 "\tfma.rn.f32 %f5, %f1, %f3, %f4;\n"
                                 "\tfma.rn.ftz.f32 %f6, %f1, %f3, %f4;\n}\n";
  ptx_audit_result r;
  /* three fmas, one also ftz: allowance 3 leaves the ftz, 2 reports all three */
  cr_expect_eq(ptx_audit_run(two_fmas, "fmas.ptx", 3, &r), 1);
  cr_expect_eq(r.findings[0].rules, PTX_RULE_FTZ);
  cr_expect_eq(r.n_fma, 3);
  ptx_audit_result_free(&r);
  cr_expect_eq(ptx_audit_run(two_fmas, "fmas.ptx", 2, &r), 3);
  ptx_audit_result_free(&r);
  cr_expect_eq(ptx_audit_fma_allowance("numerics_probe.cu"), 0);
}

/* ---- the compile path -------------------------------------------------------- */

Test(nvrtc, compile_error_returns_nvrtcs_log) {
  nvrtc_output out;
  cr_expect_neq(nvrtc_compile_ptx_options("broken.cu", "this is not CUDA;\n", NULL, 0, &out), 0);
  cr_expect_null(out.code);
  cr_assert_not_null(out.log);
  cr_expect_not_null(strstr(out.log, "broken.cu"), "%s", out.log);
  cr_expect_not_null(strstr(out.log, "error"), "%s", out.log);
  nvrtc_output_free(&out);
}

Test(nvrtc, unknown_embedded_kernel_is_an_error) {
  nvrtc_output out;
  cr_expect_neq(nvrtc_compile_ptx("no_such_kernel.cu", &out), 0);
  cr_expect_not_null(strstr(out.log, "no_such_kernel.cu"), "%s", out.log);
  nvrtc_output_free(&out);
}

Test(nvrtc, pinned_options_and_version) {
  cr_expect_str_eq(device_nvrtc_options(), "--gpu-architecture=compute_90 --fmad=false "
                                           "--ftz=false --prec-div=true --prec-sqrt=true "
                                           "-std=c++17");
  cr_expect_str_neq(device_nvrtc_version(), "none");
  cr_expect_eq(device_built_with_cuda(), 1);
}

Test(nvrtc, sweep_kernel_compiles_to_an_sm90_cubin) {
  nvrtc_output out;
  int rc = nvrtc_compile_cubin("numerics_sweep.cu", 90, &out);
  cr_assert_eq(rc, 0, "%s", out.log);
  cr_expect_gt(out.size, 4);
  cr_expect_eq(memcmp(out.code, "\177ELF", 4), 0, "a CUBIN is an ELF file");
  nvrtc_output_free(&out);
}

Test(nvrtc, ptx_targets_compute_90) {
  nvrtc_output out;
  cr_assert_eq(nvrtc_compile_ptx("numerics_probe.cu", &out), 0, "%s", out.log);
  cr_expect_not_null(strstr(out.code, ".target sm_90"));
  cr_expect_eq(out.size, strlen(out.code));
  nvrtc_output_free(&out);
}

/* ---- the embedded table ---------------------------------------------------- */

Test(kernel_sources, finds_kernels_and_headers) {
  const struct kernel_source *src = kernel_source_find("numerics.h");
  cr_assert_not_null(src);
  cr_expect_str_eq(src->path, "oracle/numerics/numerics.h");
  cr_expect_eq(strlen(src->text), src->size);
  cr_expect_not_null(kernel_source_find("numerics_sweep_funcs.h"));
  cr_expect_not_null(kernel_source_find("numerics_probe.cu"));
  cr_expect_null(kernel_source_find("nope.cu"));
}

Test(kernel_sources, hash_is_32_hex_digits_and_stable) {
  const char *hash = device_kernel_hash();
  size_t i;
  cr_assert_eq(strlen(hash), 32, "'%s'", hash);
  for (i = 0; i < 32; i++) cr_expect(strchr("0123456789abcdef", hash[i]) != NULL, "'%s'", hash);
  cr_expect_str_eq(device_kernel_hash(), hash);
}

Test(audit, audit_writes_each_kernels_ptx_where_asked) {
  char dir[] = "/tmp/bitgate_ptx_XXXXXX", path[128], line[256], *text = NULL;
  size_t size = 0;
  FILE *out, *ptx;
  int found_entry = 0;
  cr_assert_not_null(mkdtemp(dir));
  out = open_memstream(&text, &size);
  cr_assert_not_null(out);
  cr_expect_eq(ptx_audit_all_kernels(out, "numerics_probe.cu", dir), PTX_AUDIT_CLEAN);
  snprintf(path, sizeof path, "%s/numerics_probe.cu.ptx", dir);
  ptx = fopen(path, "r");
  cr_assert_not_null(ptx, "no %s", path);
  while (fgets(line, sizeof line, ptx)) found_entry |= strstr(line, ".entry") != NULL;
  fclose(ptx);
  cr_expect(found_entry, "%s holds no .entry", path);
  remove(path);
  rmdir(dir);
  /* a folder that is not there: the kernel is still audited, and the line says what was not written */
  cr_expect_eq(ptx_audit_all_kernels(out, "numerics_probe.cu", dir), PTX_AUDIT_NOT_WRITTEN);
  fclose(out);
  cr_expect_not_null(strstr(text, "ptx numerics_probe.cu: "), "%s", text);
  cr_expect_not_null(strstr(text, "FAIL numerics_probe.cu: cannot write its PTX to"), "%s", text);
  cr_expect_not_null(strstr(text, "ok numerics_probe.cu: "), "%s", text);
  free(text);
}
