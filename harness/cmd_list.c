/*
** cmd_list.c: `bitgate list`, the cases of a suite with their ids.
*/
#include "cases/case_spec.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "harness/suite.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

static const char list_help[] =
    "usage: bitgate list [--suite NAME] [--filter GLOB] [--corpus DIR] [--specs]\n\n"
    "Prints the case ids of a suite (default gate), one per line, optionally\n"
    "only those matching GLOB (e.g. 'is.capfront.*'); --specs adds each spec.\n\n" EXIT_CODES_HELP;

int cmd_list(int argc, char **argv) {
  const char *suite_name = "gate", *filter = NULL, *corpus = suite_default_dir();
  int i, r, with_specs = 0, shown = 0;
  char err[1024], id[CASE_ID_MAX];
  suite s;
  for (i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      fputs(list_help, stdout);
      return EXIT_CODE_PASS;
    }
    if (!strcmp(argv[i], "--specs")) with_specs = 1;
    else if ((r = cli_option_value("list", argc, argv, &i, "--suite", &suite_name)) ||
             (r = cli_option_value("list", argc, argv, &i, "--filter", &filter)) ||
             (r = cli_option_value("list", argc, argv, &i, "--corpus", &corpus))) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else {
      return cli_usage_error("list", "unknown argument '%s'", argv[i]);
    }
  }
  if (suite_load(corpus, suite_name, &s, err, sizeof err) != 0) return cli_env_error("list", "%s", err);
  for (i = 0; i < s.count; i++) {
    if (case_id_from_spec(s.specs[i], id, sizeof id) != 0) snprintf(id, sizeof id, "invalid.00000000");
    if (filter && fnmatch(filter, id, 0) != 0) continue;
    shown++;
    if (with_specs) printf("%s  %s\n", id, s.specs[i]);
    else printf("%s\n", id);
  }
  fprintf(stderr, "%d of %d cases in suite %s\n", shown, s.count, suite_name);
  suite_free(&s);
  return EXIT_CODE_PASS;
}
