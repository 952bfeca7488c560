/*
** test_kernel_tree_cli.c: BITGATE_KERNEL_TREE as a user meets it: the
** kernels' hash and origin in `bitgate version`, the tree's text in NVRTC
** (`bitgate audit`), a refused tree, the run's provenance, and a worker
** whose tree is not its parent's.  No GPU needed; the audit needs NVRTC.
*/
#include "device/kernel_sources.h"
#include "harness/tests/bitgate_process.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

TestSuite(kernel_tree_cli, .init = make_tmp, .fini = remove_tmp);

/* Writes text (appended when append) to tmp/tree/rel, making its directories. */
static void put(const char *rel, const char *text, int append) {
  char path[768], *slash;
  FILE *f;
  snprintf(path, sizeof path, "%s/tree/%s", tmp, rel);
  for (slash = strchr(path + strlen(tmp) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    cr_assert(mkdir(path, 0777) == 0 || errno == EEXIST, "mkdir %s", path);
    *slash = '/';
  }
  cr_assert((f = fopen(path, append ? "ab" : "wb")), "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* tmp/tree: this binary's own kernel files, as they were built. */
static const char *write_tree(void) {
  static char dir[512];
  int i;
  for (i = 0; i < kernel_sources_embedded_count; i++)
    put(kernel_sources_embedded[i].path, kernel_sources_embedded[i].text, 0);
  snprintf(dir, sizeof dir, "%s/tree", tmp);
  return dir;
}

/* The hash on `bitgate version`'s kernels line, into hash[33]; the line itself returned. */
static const char *kernels_line(char *hash) {
  static char line[1024];
  outcome *o = RUN(NULL, "version");
  const char *at = strstr(o->out, "\nkernels ");
  cr_assert_eq(o->status, 0, "%s", o->err);
  cr_assert_not_null(at, "no kernels line: %s", o->out);
  sscanf(at + 1, "%1023[^\n]", line);
  hash[0] = '\0';
  sscanf(line, "kernels %32[0-9a-f]", hash);
  return line;
}

Test(kernel_tree_cli, an_unchanged_tree_has_the_embedded_hash_and_says_where_it_is) {
  char embedded[33], same[33];
  const char *line = kernels_line(embedded);
  cr_expect(strstr(line, "(embedded)"), "%s", line);
  cr_assert_eq(strlen(embedded), 32, "%s", line);
  setenv("BITGATE_KERNEL_TREE", write_tree(), 1);
  line = kernels_line(same);
  cr_expect_str_eq(same, embedded, "%s", line);
  cr_expect(strstr(line, "/tree: ") && strstr(line, "same as the embedded files"), "%s", line);
}

Test(kernel_tree_cli, a_changed_kernel_changes_the_hash_and_is_named) {
  char embedded[33], changed[33];
  const char *line;
  kernels_line(embedded);
  setenv("BITGATE_KERNEL_TREE", write_tree(), 1);
  put("device/kernels/csa4.cu", "\n/* a kernel developer's edit */\n", 1);
  line = kernels_line(changed);
  cr_expect_neq(strcmp(changed, embedded), 0, "%s", line);
  cr_expect(strstr(line, "changed: csa4.cu"), "%s", line);
}

/* NVRTC compiles the tree's text: a probe kernel with an approximate division fails the audit. */
Test(kernel_tree_cli, the_audit_compiles_the_trees_kernel) {
  outcome *o = RUN(NULL, "version");
  if (strstr(o->out, "\nnvrtc none")) cr_skip_test("this build has no NVRTC");
  setenv("BITGATE_KERNEL_TREE", write_tree(), 1);
  put("device/kernels/tree_probe.h", "#define TREE_PROBE_ADD 1.0f\n", 0);
  put("device/kernels/csa4.cu",
      "\n#include \"tree_probe.h\"\n"
      "extern \"C\" __global__ void tree_probe(float *p) { p[0] = __fdividef(p[0], p[1]) + TREE_PROBE_ADD; }\n",
      1);
  o = RUN(NULL, "audit", "--kernel", "csa4.cu");
  cr_expect_eq(o->status, 1, "%s%s", o->out, o->err);
  cr_expect(strstr(o->out, "FAIL csa4.cu") && strstr(o->out, "div.approx.f32"), "%s", o->out);
}

Test(kernel_tree_cli, a_tree_that_changes_a_launch_layout_is_refused_by_name) {
  outcome *o;
  setenv("BITGATE_KERNEL_TREE", write_tree(), 1);
  put("device/kernels/csa_attention_abi.h", "\n#define A_CHANGED_LAYOUT 1\n", 1);
  o = RUN(tmp, "run", "--lanes", "oracle", "--filter", "is.valid.*", "--db", "x.db");
  cr_expect_eq(o->status, 3, "%s", o->err);
  cr_expect(strstr(o->err, "BITGATE_KERNEL_TREE") && strstr(o->err, "device/kernels/csa_attention_abi.h differs") &&
                strstr(o->err, "build bitgate from that tree"),
            "%s", o->err);
  o = RUN(NULL, "version");
  cr_expect_eq(o->status, 0);
  cr_expect(strstr(o->out, "\nkernels unusable (BITGATE_KERNEL_TREE: "), "%s", o->out);
  o = RUN(NULL, "list", "--filter", "is.valid.*");
  cr_expect_eq(o->status, 0, "list needs no kernels: %s", o->err);
}

Test(kernel_tree_cli, the_run_names_the_tree_in_its_summary_and_command_line) {
  char db[512], want[640];
  sqlite3 *h;
  sqlite3_stmt *st;
  const char *dir = write_tree();
  outcome *o;
  setenv("BITGATE_KERNEL_TREE", dir, 1);
  o = RUN(tmp, "run", "--in-process", "--lanes", "oracle", "--filter", "is.valid.253ae06b", "--db", "x.db");
  cr_assert_eq(o->status, 0, "%s%s", o->out, o->err);
  cr_expect(strstr(o->out, "\n  kernels: kernel tree ") && strstr(o->out, "same as the embedded files"),
            "the summary names the tree: %s", o->out);
  o = RUN(tmp, "bench", "--filter", "csa128 pos 4096, B=1", "--db", "b.db");
  cr_expect(!strncmp(o->out, "kernels: kernel tree ", 21), "bench's first line names the tree: %s%s", o->out, o->err);
  snprintf(db, sizeof db, "%s/x.db", tmp);
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT command_line FROM runs", -1, &st, NULL), SQLITE_OK, "%s",
               sqlite3_errmsg(h));
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  snprintf(want, sizeof want, "BITGATE_KERNEL_TREE='%s' ", dir);
  cr_expect_eq(strncmp((const char *)sqlite3_column_text(st, 0), want, strlen(want)), 0, "%s",
               sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(h);
}

/* A worker whose sources are not the parent's (as if the tree were edited mid-run) stops the run. */
Test(kernel_tree_cli, a_worker_with_other_kernels_is_refused) {
  outcome *o;
  setenv("BITGATE_TEST_WORKER_KERNEL_TREE", write_tree(), 1);
  put("device/kernels/csa4.cu", "\n/* edited while the run started */\n", 1);
  o = RUN(tmp, "run", "--workers", "--lanes", "oracle", "--filter", "is.valid.253ae06b", "--db", "x.db");
  cr_expect_eq(o->status, 3, "%s%s", o->out, o->err);
  cr_expect(strstr(o->err, "read other kernel sources") && strstr(o->err, "BITGATE_KERNEL_TREE"), "%s", o->err);
}
