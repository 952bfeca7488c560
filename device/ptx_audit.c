/*
** ptx_audit.c: the PTX rules of ptx_audit.h, and `bitgate audit` over every
** embedded kernel.
**
** The scanner reads PTX line by line.  It removes comments, splits a line into
** statements at ';', '{' and '}' (inline asm puts "{ cvt...; }" on one line),
** drops a leading label ("$L__BB0_3:") and a guard predicate ("@%p1",
** "@!%p1"), and takes a statement that then starts with a lowercase letter as
** an instruction whose opcode is the first word: "add.rn.f32" is the base
** "add" with the modifiers "rn" and "f32".  Directives start with '.', and
** operand fragments such as "%r1, %r2}" start with '%' or ','; neither counts.
**
** This file needs no NVRTC itself: ptx_audit_run is plain text processing,
** and ptx_audit_all_kernels reports PTX_AUDIT_NO_NVRTC in a build without it.
*/
#include "device/ptx_audit.h"
#include "device/device.h"
#include "device/kernel_sources.h"
#include "device/nvrtc_compile.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
** Kernels allowed to contain floating FMAs on purpose, with how many.  Empty:
** no kernel of this project writes one yet.  An entry needs a comment saying
** which FMAs, and why the oracle does the same.
*/
static const struct {
  const char *source_name;
  int allowed_fma;
} fma_allowances[] = {
    {NULL, 0},
};

int ptx_audit_fma_allowance(const char *source_name) {
  int i;
  for (i = 0; fma_allowances[i].source_name; i++)
    if (!strcmp(fma_allowances[i].source_name, source_name)) return fma_allowances[i].allowed_fma;
  return 0;
}

/* in the bit order of enum ptx_rule */
static const char *const rule_names[] = {"approx", "ftz", "fma", "bare-arith", "div-full",
                                         "libdevice"};
#define RULE_COUNT ((int)(sizeof rule_names / sizeof rule_names[0]))

const char *ptx_audit_rule_names(unsigned rules, char *buf, size_t len) {
  size_t used = 0;
  int i;
  if (len) buf[0] = '\0';
  for (i = 0; i < RULE_COUNT; i++) {
    if (!(rules & (1u << i)) || used >= len) continue;
    used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", rule_names[i]);
  }
  return buf;
}

void ptx_finding_print(FILE *out, const char *source_name, const ptx_finding *f) {
  char rules[96];
  fprintf(out, "  %s:ptx:%d: %s: %s\n", source_name, f->line,
          ptx_audit_rule_names(f->rules, rules, sizeof rules), f->text);
}

/* ---- the scanner ---------------------------------------------------- */

/* Does the dot-separated opcode contain the modifier `mod`? */
static int opcode_has(const char *opcode, const char *mod) {
  size_t n = strlen(mod);
  const char *p = strchr(opcode, '.');
  while (p) {
    if (!strncmp(p + 1, mod, n) && (p[1 + n] == '.' || p[1 + n] == '\0')) return 1;
    p = strchr(p + 1, '.');
  }
  return 0;
}

static int opcode_base_is(const char *opcode, const char *base) {
  size_t n = strlen(base);
  return !strncmp(opcode, base, n) && (opcode[n] == '.' || opcode[n] == '\0');
}

static int opcode_is_floating(const char *opcode) {
  static const char *const types[] = {"f16", "f16x2", "bf16", "bf16x2", "f32", "f32x2", "f64"};
  size_t i;
  for (i = 0; i < sizeof types / sizeof types[0]; i++)
    if (opcode_has(opcode, types[i])) return 1;
  return 0;
}

static int opcode_has_rounding(const char *opcode) {
  return opcode_has(opcode, "rn") || opcode_has(opcode, "rz") || opcode_has(opcode, "rm") ||
         opcode_has(opcode, "rp");
}

/* The rules broken by one instruction; statement is its full text. */
static unsigned instruction_rules(const char *opcode, const char *statement) {
  unsigned rules = 0;
  int floating = opcode_is_floating(opcode);
  if (opcode_has(opcode, "approx")) rules |= PTX_RULE_APPROX;
  if (opcode_has(opcode, "ftz")) rules |= PTX_RULE_FTZ;
  if (floating && (opcode_base_is(opcode, "fma") || opcode_base_is(opcode, "mad")))
    rules |= PTX_RULE_FMA;
  if (floating && !opcode_has_rounding(opcode) &&
      (opcode_base_is(opcode, "add") || opcode_base_is(opcode, "sub") ||
       opcode_base_is(opcode, "mul")))
    rules |= PTX_RULE_BARE_ARITH;
  if (opcode_base_is(opcode, "div") && opcode_has(opcode, "full")) rules |= PTX_RULE_DIV_FULL;
  if (opcode_base_is(opcode, "call") && strstr(statement, "__nv_")) rules |= PTX_RULE_LIBDEVICE;
  return rules;
}

static int is_label_char(int c) { return isalnum(c) || c == '_' || c == '$'; }

/* Skips a leading "label:" and "@pred"; returns where the instruction starts. */
static const char *statement_skip_prefix(const char *s) {
  const char *p = s;
  while (*p == ' ' || *p == '\t') p++;
  if (*p == '$' || *p == '_' || isalpha((unsigned char)*p)) {
    const char *q = p;
    while (is_label_char((unsigned char)*q)) q++;
    while (*q == ' ' || *q == '\t') q++;
    if (*q == ':') p = q + 1;
  }
  while (*p == ' ' || *p == '\t') p++;
  if (*p == '@') {
    while (*p && *p != ' ' && *p != '\t') p++;
    while (*p == ' ' || *p == '\t') p++;
  }
  return p;
}

typedef struct audit_scan {
  ptx_audit_result *out;
  int capacity;
  int failed; /* out of memory */
} audit_scan;

static void scan_add_finding(audit_scan *scan, int line, unsigned rules, const char *text) {
  ptx_audit_result *r = scan->out;
  ptx_finding *f;
  size_t i, n = 0;
  if (r->n_findings == scan->capacity) {
    int capacity = scan->capacity ? 2 * scan->capacity : 16;
    ptx_finding *grown = realloc(r->findings, (size_t)capacity * sizeof *grown);
    if (!grown) {
      scan->failed = 1;
      return;
    }
    r->findings = grown;
    scan->capacity = capacity;
  }
  f = &r->findings[r->n_findings++];
  f->line = line;
  f->rules = rules;
  /* the line with runs of blanks collapsed to one space */
  for (i = 0; text[i] && n + 1 < sizeof f->text; i++) {
    int blank = text[i] == ' ' || text[i] == '\t';
    if (blank && (n == 0 || f->text[n - 1] == ' ')) continue;
    f->text[n++] = blank ? ' ' : text[i];
  }
  while (n && f->text[n - 1] == ' ') n--;
  f->text[n] = '\0';
}

/* One statement (text between separators, NUL-terminated in place). */
static void scan_statement(audit_scan *scan, char *stmt, int line, const char *line_text) {
  const char *p = statement_skip_prefix(stmt);
  char opcode[64];
  size_t n = 0;
  unsigned rules;
  if (!islower((unsigned char)*p)) return; /* directive, operand fragment, blank */
  while (p[n] && p[n] != ' ' && p[n] != '\t' && n + 1 < sizeof opcode) {
    opcode[n] = p[n];
    n++;
  }
  opcode[n] = '\0';
  scan->out->n_instructions++;
  rules = instruction_rules(opcode, p);
  if (rules & PTX_RULE_FMA) scan->out->n_fma++;
  if (rules) scan_add_finding(scan, line, rules, line_text);
}

/* Removes comments from line in place; *in_block carries a block comment on. */
static void strip_comments(char *line, int *in_block) {
  char *r = line, *w = line;
  while (*r) {
    if (*in_block) {
      if (r[0] == '*' && r[1] == '/') *in_block = 0, r += 2;
      else r++;
    } else if (r[0] == '/' && r[1] == '/') {
      break;
    } else if (r[0] == '/' && r[1] == '*') {
      *in_block = 1, r += 2;
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
}

static void scan_line(audit_scan *scan, char *line, int line_no, char *text_copy) {
  char *p = line, *start = line;
  const char *text = text_copy;
  strcpy(text_copy, line);
  while (*text == ' ' || *text == '\t') text++;
  for (;; p++) {
    if (*p == ';' || *p == '{' || *p == '}' || *p == '\0') {
      int end = *p == '\0';
      *p = '\0';
      scan_statement(scan, start, line_no, text);
      if (end) break;
      start = p + 1;
    }
  }
}

int ptx_audit_run(const char *ptx, const char *source_name, int allowed_fma,
                  ptx_audit_result *out) {
  audit_scan scan = {out, 0, 0};
  char *line = NULL, *text = NULL;
  size_t line_cap = 0;
  int line_no = 0, in_block = 0, i, kept;
  const char *p = ptx;

  memset(out, 0, sizeof *out);
  snprintf(out->source_name, sizeof out->source_name, "%s", source_name);
  while (*p && !scan.failed) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    if (len + 1 > line_cap) {
      char *grown_line = realloc(line, len + 1), *grown_text;
      if (grown_line) line = grown_line;
      grown_text = grown_line ? realloc(text, len + 1) : NULL;
      if (grown_text) text = grown_text;
      if (!grown_line || !grown_text) {
        scan.failed = 1;
        break;
      }
      line_cap = len + 1;
    }
    memcpy(line, p, len);
    line[len] = '\0';
    line_no++;
    strip_comments(line, &in_block);
    scan_line(&scan, line, line_no, text);
    p += len + (eol != NULL);
  }
  free(line);
  free(text);
  if (scan.failed) {
    ptx_audit_result_free(out);
    return -1;
  }
  /* FMAs within the kernel's allowance are not findings */
  if (out->n_fma <= allowed_fma) {
    for (i = 0, kept = 0; i < out->n_findings; i++) {
      out->findings[i].rules &= ~(unsigned)PTX_RULE_FMA;
      if (out->findings[i].rules) out->findings[kept++] = out->findings[i];
    }
    out->n_findings = kept;
  }
  return out->n_findings;
}

void ptx_audit_result_free(ptx_audit_result *r) {
  if (!r) return;
  free(r->findings);
  r->findings = NULL;
  r->n_findings = 0;
}

/* ---- every embedded kernel --------------------------------------------- */

static int is_kernel_file(const char *name) {
  size_t len = strlen(name);
  return len > 3 && !strcmp(name + len - 3, ".cu");
}

/* Writes ptx as dir/NAME.ptx; prints the path, or why it could not. */
static int write_ptx(FILE *out, const char *dir, const char *name, const nvrtc_output *ptx) {
  char path[4096];
  FILE *f;
  int ok;
  if (snprintf(path, sizeof path, "%s/%s.ptx", dir, name) >= (int)sizeof path) {
    fprintf(out, "FAIL %s: the PTX path under '%s' is too long\n", name, dir);
    return PTX_AUDIT_NOT_WRITTEN;
  }
  f = fopen(path, "w");
  ok = f && fwrite(ptx->code, 1, strlen(ptx->code), f) == strlen(ptx->code);
  if (f && fclose(f)) ok = 0;
  if (!ok) {
    fprintf(out, "FAIL %s: cannot write its PTX to '%s': %s\n", name, path, strerror(errno));
    return PTX_AUDIT_NOT_WRITTEN;
  }
  fprintf(out, "ptx %s: %s\n", name, path);
  return PTX_AUDIT_CLEAN;
}

/* Compiles and audits one kernel (and writes its PTX into ptx_dir); prints its line(s); returns a status. */
static int audit_one_kernel(FILE *out, const char *name, const char *ptx_dir) {
  nvrtc_output ptx;
  ptx_audit_result result;
  int n, i, written = PTX_AUDIT_CLEAN;
  if (nvrtc_compile_ptx(name, &ptx)) {
    fprintf(out, "FAIL %s: does not compile\n%s\n", name, ptx.log);
    nvrtc_output_free(&ptx);
    return PTX_AUDIT_FINDINGS;
  }
  if (ptx_dir) written = write_ptx(out, ptx_dir, name, &ptx);
  n = ptx_audit_run(ptx.code, name, ptx_audit_fma_allowance(name), &result);
  nvrtc_output_free(&ptx);
  if (n < 0) {
    fprintf(out, "FAIL %s: out of memory while auditing\n", name);
    return PTX_AUDIT_FINDINGS;
  }
  if (n == 0) {
    fprintf(out, "ok %s: %d instructions\n", name, result.n_instructions);
  } else {
    fprintf(out, "FAIL %s: %d finding%s in %d instructions\n", name, n, n == 1 ? "" : "s",
            result.n_instructions);
    for (i = 0; i < n; i++) ptx_finding_print(out, name, &result.findings[i]);
  }
  ptx_audit_result_free(&result);
  return written != PTX_AUDIT_CLEAN ? written : n ? PTX_AUDIT_FINDINGS : PTX_AUDIT_CLEAN;
}

int ptx_audit_all_kernels(FILE *out, const char *only_kernel, const char *ptx_dir) {
  int i, status = PTX_AUDIT_CLEAN, seen = 0;
  if (!device_built_with_cuda()) return PTX_AUDIT_NO_NVRTC;
  fprintf(out, "NVRTC %s, options: %s\n", device_nvrtc_version(), device_nvrtc_options());
  for (i = 0; i < kernel_source_total(); i++) {
    const char *name = kernel_source_at(i)->name;
    if (!is_kernel_file(name) || (only_kernel && strcmp(name, only_kernel))) continue;
    seen++;
    const int one = audit_one_kernel(out, name, ptx_dir);
    if (one == PTX_AUDIT_NOT_WRITTEN || (one == PTX_AUDIT_FINDINGS && status == PTX_AUDIT_CLEAN)) status = one;
  }
  if (only_kernel && !seen) {
    fprintf(out, "FAIL %s: no kernel of that name\n", only_kernel);
    status = PTX_AUDIT_FINDINGS;
  }
  return status;
}
