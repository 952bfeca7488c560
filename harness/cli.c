/*
** cli.c: shared command-line helpers (see cli.h).
*/
#include "harness/cli.h"
#include "harness/exit_codes.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "bitgate %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, " (try 'bitgate %s --help')\n", cmd);
  return EXIT_CODE_USAGE;
}

int cli_env_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "bitgate %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return EXIT_CODE_ENV;
}

int cli_option_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                     const char **value) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) return 0;
  if (arg[n] == '=') {
    *value = arg + n + 1;
    return 1;
  }
  if (arg[n] != '\0') return 0;
  if (*i + 1 >= argc) {
    cli_usage_error(cmd, "option '%s' needs a value", name);
    return -1;
  }
  *i += 1;
  *value = argv[*i];
  return 1;
}

int cli_parse_u64(const char *text, unsigned long long *out) {
  char *end;
  if (!text || !*text || *text == '-') return -1;
  errno = 0;
  *out = strtoull(text, &end, 0);
  return (errno || *end) ? -1 : 0;
}

int cli_is_help(const char *arg) { return !strcmp(arg, "--help") || !strcmp(arg, "-h"); }
