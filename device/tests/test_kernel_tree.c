/*
** test_kernel_tree.c: kernel_tree_load (device/kernel_tree.h) against small
** made-up trees, and against a copy of the binary's own embedded files.
** Plain C: no NVRTC, no GPU.
*/
#include "device/kernel_tree.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[128];

/* Writes text to root/rel, making its two directory levels. */
static void put(const char *rel, const char *text) {
  char path[512], dir[512], *slash;
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", root, rel);
  snprintf(dir, sizeof dir, "%s", path);
  for (slash = strchr(dir + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    cr_assert(mkdir(dir, 0777) == 0 || errno == EEXIST, "mkdir %s", dir);
    *slash = '/';
  }
  cr_assert((f = fopen(path, "wb")), "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* A symbolic link root/rel -> target (target need not exist). */
static void put_link(const char *rel, const char *target) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  cr_assert_eq(symlink(target, path), 0, "symlink %s", path);
}

static void make_root(void) {
  snprintf(root, sizeof root, "/tmp/bitgate_tree_%d", (int)getpid());
  cr_assert(mkdir(root, 0777) == 0 || errno == EEXIST);
}

static void remove_root(void) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  cr_expect_eq(system(cmd), 0);
}

TestSuite(kernel_tree, .init = make_root, .fini = remove_root);

/*
** A made-up binary: k.cu includes abi.h (host code includes it too), which
** includes layout.h; helper.h only the kernel includes; nx.h is numerics.
*/
#define TEXT(s) s, sizeof s - 1
static const struct kernel_source fake[] = {
    {"abi.h", "device/kernels/abi.h", TEXT("#include \"layout.h\"\n#define ABI 1\n")},
    {"helper.h", "device/kernels/helper.h", TEXT("#define HELP 1\n")},
    {"k.cu", "device/kernels/k.cu", TEXT("#include \"abi.h\"\n#include \"helper.h\"\n#include \"nx.h\"\n")},
    {"layout.h", "device/kernels/layout.h", TEXT("#define ROWS 4\n")},
    {"nx.h", "oracle/numerics/nx.h", TEXT("#define NX 1\n")},
};
#define FAKE_N ((int)(sizeof fake / sizeof fake[0]))
static const char *const fake_host[] = {"abi.h"};

static void put_fake(void) {
  int i;
  for (i = 0; i < FAKE_N; i++) put(fake[i].path, fake[i].text);
}

static int load(kernel_tree *t, char *err, size_t len) {
  return kernel_tree_load(t, root, fake, FAKE_N, fake_host, 1, err, len);
}

Test(kernel_tree, an_unchanged_tree_reads_as_the_embedded_files) {
  kernel_tree t;
  char err[640] = "", what[256];
  int i;
  put_fake();
  cr_assert_eq(load(&t, err, sizeof err), 0, "%s", err);
  cr_assert_eq(t.n, FAKE_N);
  for (i = 0; i < FAKE_N; i++) {
    cr_expect_str_eq(t.files[i].path, fake[i].path);
    cr_expect_str_eq(t.files[i].text, fake[i].text);
    cr_expect_eq(t.files[i].size, fake[i].size);
  }
  kernel_tree_describe(&t, fake, what, sizeof what);
  cr_expect_str_eq(what, "5 files, same as the embedded files");
  kernel_tree_free(&t);
}

Test(kernel_tree, kernels_and_their_own_headers_may_change_and_headers_may_be_added) {
  kernel_tree t;
  char err[640] = "", what[256];
  put_fake();
  put("device/kernels/k.cu", "#include \"abi.h\"\n#include \"new.h\"\n");
  put("device/kernels/helper.h", "#define HELP 2\n");
  put("device/kernels/new.h", "#define NEW 1\n");
  put("oracle/numerics/nx_more.h", "#define MORE 1\n");
  put("device/kernels/notes.txt", "not a source\n");
  put_link("device/kernels/.#k.cu", "nobody@host.123"); /* an editor's lock file: a dangling link */
  cr_assert_eq(load(&t, err, sizeof err), 0, "%s", err);
  cr_assert_eq(t.n, FAKE_N + 2, "the two added headers, not the .txt nor the hidden link: %s", err);
  cr_expect_str_eq(t.files[2].text, "#include \"abi.h\"\n#include \"new.h\"\n");
  cr_expect_str_eq(t.files[FAKE_N].path, "device/kernels/new.h");
  cr_expect_str_eq(t.files[FAKE_N].name, "new.h");
  cr_expect_str_eq(t.files[FAKE_N + 1].path, "oracle/numerics/nx_more.h");
  kernel_tree_describe(&t, fake, what, sizeof what);
  cr_expect_str_eq(what, "7 files, changed: helper.h, k.cu; added: new.h, nx_more.h");
  kernel_tree_free(&t);
}

/* Each of these the host was compiled with: directly, through abi.h, or as numerics. */
static void expect_refused(const char *rel, const char *text) {
  kernel_tree t;
  char err[640] = "";
  put_fake();
  put(rel, text);
  cr_assert_eq(load(&t, err, sizeof err), -1, "%s changed, yet the tree loaded", rel);
  cr_expect(strstr(err, rel) && strstr(err, "host code compiles it too"), "%s", err);
  cr_expect_null(t.files);
}

Test(kernel_tree, a_header_the_host_includes_may_not_change) {
  expect_refused("device/kernels/abi.h", "#define ABI 2\n");
}

Test(kernel_tree, nor_a_header_that_header_includes) { expect_refused("device/kernels/layout.h", "#define ROWS 8\n"); }

Test(kernel_tree, nor_a_numerics_header) { expect_refused("oracle/numerics/nx.h", "#define NX 2\n"); }

Test(kernel_tree, a_missing_file_is_named) {
  kernel_tree t;
  char err[640] = "", path[512];
  put_fake();
  snprintf(path, sizeof path, "%s/device/kernels/helper.h", root);
  cr_assert_eq(unlink(path), 0);
  cr_assert_eq(load(&t, err, sizeof err), -1);
  cr_expect(strstr(err, "cannot read device/kernels/helper.h") && strstr(err, "every file this binary embeds"),
            "%s", err);
}

Test(kernel_tree, two_files_of_one_name_are_refused) {
  kernel_tree t;
  char err[640] = "";
  put_fake();
  put("oracle/numerics/helper.h", "#define OTHER 1\n");
  cr_assert_eq(load(&t, err, sizeof err), -1);
  cr_expect(strstr(err, "device/kernels/helper.h and oracle/numerics/helper.h share a name"), "%s", err);
}

Test(kernel_tree, a_path_that_is_no_directory_is_refused) {
  kernel_tree t;
  char err[640] = "", file[256];
  cr_assert_eq(kernel_tree_load(&t, "/nonexistent/bitgate", fake, FAKE_N, fake_host, 1, err, sizeof err), -1);
  cr_expect(strstr(err, "'/nonexistent/bitgate': No such file or directory"), "%s", err);
  put("plain", "x");
  snprintf(file, sizeof file, "%s/plain", root);
  cr_assert_eq(kernel_tree_load(&t, file, fake, FAKE_N, fake_host, 1, err, sizeof err), -1);
  cr_expect(strstr(err, "not a directory"), "%s", err);
  cr_assert_eq(kernel_tree_load(&t, "", fake, FAKE_N, fake_host, 1, err, sizeof err), -1);
}

/* The binary's own files, written out and read back: the same texts, and the real host list refuses an ABI edit. */
Test(kernel_tree, the_embedded_files_written_out_read_back_the_same) {
  kernel_tree t;
  char err[640] = "";
  int i, abi = -1;
  for (i = 0; i < kernel_sources_embedded_count; i++)
    put(kernel_sources_embedded[i].path, kernel_sources_embedded[i].text);
  cr_assert_eq(kernel_tree_load(&t, root, kernel_sources_embedded, kernel_sources_embedded_count, kernel_host_includes,
                                kernel_host_include_count, err, sizeof err),
               0, "%s", err);
  cr_assert_eq(t.n, kernel_sources_embedded_count);
  for (i = 0; i < t.n; i++) {
    cr_expect_eq(memcmp(t.files[i].text, kernel_sources_embedded[i].text, t.files[i].size + 1), 0, "%s",
                 t.files[i].path);
    if (!strcmp(t.files[i].name, "csa_attention_abi.h")) abi = i;
  }
  kernel_tree_free(&t);
  cr_assert_geq(abi, 0, "csa_attention_abi.h is embedded");
  cr_assert_geq(kernel_host_include_count, 5, "the build found the host's kernel includes");
  put(kernel_sources_embedded[abi].path, "/* edited */\n");
  cr_assert_eq(kernel_tree_load(&t, root, kernel_sources_embedded, kernel_sources_embedded_count, kernel_host_includes,
                                kernel_host_include_count, err, sizeof err),
               -1);
  cr_expect(strstr(err, "device/kernels/csa_attention_abi.h differs"), "%s", err);
}
