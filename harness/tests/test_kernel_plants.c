/*
** test_kernel_plants.c: every bug the GPU tests plant (kernel_plants.h)
** still applies to the embedded kernels: its FILE is embedded and its OLD
** text occurs there exactly once (BITGATE_PLANT replaces the first; a
** second would make the plant's target ambiguous).  Runs without a GPU, so
** CI sees a stale plant that the GPU tests would only report on a GPU.
*/
#include "device/kernel_sources.h"
#include "harness/tests/kernel_plants.h"
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static int occurrences(const char *text, const char *needle) {
  int n = 0;
  const char *at = text;
  while ((at = strstr(at, needle)) != NULL) n++, at += strlen(needle);
  return n;
}

Test(kernel_plants, every_planted_text_occurs_once_in_its_kernel) {
  static const char *const plants[] = {KERNEL_PLANTS};
  size_t i;
  cr_assert_eq(unsetenv("BITGATE_PLANT"), 0); /* the sources as built, not planted */
  for (i = 0; i < sizeof plants / sizeof plants[0]; i++) {
    const char *colon = strchr(plants[i], ':'), *arrow = strstr(plants[i], "=>");
    char file[64], old[256];
    const struct kernel_source *src;
    cr_assert(colon && arrow && arrow > colon && (size_t)(colon - plants[i]) < sizeof file &&
                  (size_t)(arrow - colon - 1) < sizeof old,
              "malformed plant '%s'", plants[i]);
    memcpy(file, plants[i], (size_t)(colon - plants[i]));
    file[colon - plants[i]] = '\0';
    memcpy(old, colon + 1, (size_t)(arrow - colon - 1));
    old[arrow - colon - 1] = '\0';
    src = kernel_source_find(file);
    cr_assert_not_null(src, "plant '%s': %s is not an embedded kernel file", plants[i], file);
    cr_expect_eq(occurrences(src->text, old), 1, "plant '%s': '%s' occurs %d times in %s (want once)", plants[i], old,
                 occurrences(src->text, old), file);
  }
}
