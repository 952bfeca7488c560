/*
** ptx_audit.h: `bitgate audit`, the PTX rules that keep NVRTC's output
** bit-exact (DESIGN.md "The frozen numerics", point 3).  Needs no GPU.
**
** A PTX instruction is a finding when it breaks any of these rules:
**   approx      any `.approx` modifier (ex2/lg2/sin/cos/rcp/rsqrt/sqrt/div
**               .approx: CUDA's fast intrinsics, __expf, --use_fast_math);
**   ftz         any `.ftz` modifier (flush-to-zero; --ftz=true);
**   fma         fma or mad on a floating type (f16/bf16/f32/f64, packed too),
**               beyond the kernel's allowance (0 unless listed in ptx_audit.c;
**               when exceeded, every one is reported);
**   bare-arith  add/sub/mul on a floating type with no rounding modifier
**               (.rn/.rz/.rm/.rp): ptxas may fuse those into an FMA;
**   div-full    div.full.f32, an approximate (2 ulp) division;
**   libdevice   a call into a libdevice function (__nv_*).
** One finding per offending instruction, naming every rule it breaks.
*/
#ifndef DEVICE_PTX_AUDIT_H
#define DEVICE_PTX_AUDIT_H

#include <stdio.h>

enum ptx_rule {
  PTX_RULE_APPROX = 1u << 0,
  PTX_RULE_FTZ = 1u << 1,
  PTX_RULE_FMA = 1u << 2,
  PTX_RULE_BARE_ARITH = 1u << 3,
  PTX_RULE_DIV_FULL = 1u << 4,
  PTX_RULE_LIBDEVICE = 1u << 5
};

typedef struct ptx_finding {
  int line;          /* 1-based line in the PTX text */
  unsigned rules;    /* enum ptx_rule bits broken by this instruction */
  char text[160];    /* the PTX line, comments and indentation removed */
} ptx_finding;

typedef struct ptx_audit_result {
  char source_name[128]; /* the kernel file the PTX came from */
  int n_instructions;    /* PTX instructions seen */
  int n_fma;             /* floating fma/mad seen, allowed or not */
  int n_findings;
  ptx_finding *findings; /* n_findings entries, malloc'd */
} ptx_audit_result;

/* Exit statuses of ptx_audit_all_kernels. */
enum ptx_audit_status {
  PTX_AUDIT_CLEAN = 0,
  PTX_AUDIT_FINDINGS = 1, /* a finding, or a kernel that did not compile */
  PTX_AUDIT_NO_NVRTC = 3, /* this build has no NVRTC; nothing was audited */
  PTX_AUDIT_NOT_WRITTEN = 4 /* a kernel's PTX could not be written to ptx_dir (the line says why) */
};

/*
** Audits PTX text compiled from source_name.  allowed_fma is the number of
** floating FMAs the kernel may contain on purpose (0 for every kernel today).
** Fills *out (release with ptx_audit_result_free) and returns the number of
** findings, or -1 when out of memory.
*/
int ptx_audit_run(const char *ptx, const char *source_name, int allowed_fma,
                  ptx_audit_result *out);

void ptx_audit_result_free(ptx_audit_result *r);

/* The FMA allowance of a kernel file: 0 unless ptx_audit.c lists it. */
int ptx_audit_fma_allowance(const char *source_name);

/* "approx, ftz" for a set of rule bits, into buf. */
const char *ptx_audit_rule_names(unsigned rules, char *buf, size_t len);

/* Prints "  FILE:ptx:LINE: RULES: INSTRUCTION". */
void ptx_finding_print(FILE *out, const char *source_name, const ptx_finding *f);

/*
** Compiles every embedded .cu (or only `only_kernel`, when not NULL) with the
** pinned options, audits its PTX, and prints one line per kernel to out
** ("ok numerics_probe.cu: N instructions", or "FAIL ..." and each finding).
** With ptx_dir (not NULL) it also writes each kernel's PTX there as
** NAME.ptx, for reading it or handing it to ptxas and a disassembler
** (ci/sass.sh).  Returns an enum ptx_audit_status: NOT_WRITTEN over FINDINGS.
*/
int ptx_audit_all_kernels(FILE *out, const char *only_kernel, const char *ptx_dir);

#endif /* DEVICE_PTX_AUDIT_H */
