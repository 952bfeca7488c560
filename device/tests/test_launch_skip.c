/*
** test_launch_skip.c: the list of kernels `bench --skip-kernels` leaves out
** of captured graphs (device/launch_skip.h): what it accepts, and that it
** counts each name's hits.  Plain C, no GPU (test_runtime checks the
** runtime leaving a captured launch out).
*/
#include "device/launch_skip.h"

#include <criterion/criterion.h>
#include <string.h>

Test(launch_skip, parses_names_and_counts_their_hits) {
  launch_skip l;
  char err[256];
  cr_assert_eq(launch_skip_parse(&l, "csa4_attn_softmax,csa4_attn_gather,K9", err, sizeof err), 0, "%s", err);
  cr_assert_eq(l.n, 3);
  cr_expect_str_eq(l.name[1], "csa4_attn_gather");
  cr_expect(launch_skip_hit(&l, "csa4_attn_gather"));
  cr_expect(launch_skip_hit(&l, "csa4_attn_gather"));
  cr_expect(launch_skip_hit(&l, "K9"));
  cr_expect(!launch_skip_hit(&l, "csa4_attn_values"), "a name not on the list");
  cr_expect(!launch_skip_hit(&l, "csa4_attn_gathe"), "a prefix of a name");
  cr_expect(!launch_skip_hit(&l, NULL));
  cr_expect(!launch_skip_hit(NULL, "K9"), "no list leaves nothing out");
  cr_expect_eq(l.left_out[0], 0);
  cr_expect_eq(l.left_out[1], 2);
  cr_expect_eq(l.left_out[2], 1);
  cr_expect(!launch_skip_hit(&l, "csa4_attn_values"), "seen again");
  cr_assert_eq(l.n_seen, 2, "the other kernels, once each: %d", l.n_seen);
  cr_expect_str_eq(l.seen[0], "csa4_attn_values");
  cr_expect_str_eq(l.seen[1], "csa4_attn_gathe");
}

Test(launch_skip, refuses_bad_lists_naming_what_was_wrong) {
  static const char *const bad[][2] = {
      {"", "an empty kernel name"},     {",a", "an empty kernel name"}, {"a,", "an empty kernel name"},
      {"a,a", "'a' is named twice"},    {"a.b", "letters, digits"},     {"a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", "more than 16"},
  };
  char longname[LAUNCH_SKIP_NAME_MAX + 2], err[256];
  launch_skip l;
  size_t i;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    cr_expect_eq(launch_skip_parse(&l, bad[i][0], err, sizeof err), -1, "'%s' is refused", bad[i][0]);
    cr_expect(strstr(err, bad[i][1]) != NULL, "'%s': %s", bad[i][0], err);
  }
  memset(longname, 'k', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  cr_expect_eq(launch_skip_parse(&l, longname, err, sizeof err), -1);
  cr_expect(strstr(err, "at most 127 characters") != NULL, "%s", err);
  cr_expect_eq(launch_skip_parse(&l, NULL, err, sizeof err), -1, "no list at all");
}
