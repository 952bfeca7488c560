/*
** cmd_report.c: `bitgate report`, a run of the results database rendered
** as HTML, JUnit XML, Markdown or JSON (reports/report.h does the work).
**
** Output goes to a temporary file next to -o FILE and is renamed over it
** only when complete, so a CI job never publishes half a report.  The exit
** code says whether the report was written, not whether the run passed: the
** run's own exit code is the verdict.
*/
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "reports/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* getpid */

static const char report_help[] =
    "usage: bitgate report --format html|junit|md|json [--db PATH] [--run ID|latest]\n"
    "                      [--baseline ID|previous] [--max-failures N] [-o FILE]\n\n"
    "Renders one run of the results database (default ./bitgate.db, run latest):\n"
    "  html   one self-contained page: summary per operator, family and lane, every\n"
    "         failing case with its first mismatch, first diverging stage and repro\n"
    "         command, ULP and stage charts (inline SVG), regressions, provenance\n"
    "  junit  JUnit XML for CI: one testcase per case x lane (reports/schema/junit.xsd)\n"
    "  md     a short summary for a pull-request comment (at most --max-failures\n"
    "         failing cases, default 20)\n"
    "  json   the whole report model, for tools\n"
    "--baseline adds what changed since that run (by case x lane): newly failing,\n"
    "newly passing, newly nondeterministic; 'previous' is the run before --run.\n"
    "Writes to stdout unless -o FILE.  Exit 0 when the report was written, whatever\n"
    "the run's verdict.\n\n" EXIT_CODES_HELP;

typedef enum report_format { FORMAT_HTML, FORMAT_JUNIT, FORMAT_MD, FORMAT_JSON, FORMAT_NONE } report_format;

static report_format format_parse(const char *name) {
  static const char *const names[] = {"html", "junit", "md", "json"};
  for (int i = 0; i < FORMAT_NONE; i++)
    if (!strcmp(name, names[i])) return (report_format)i;
  if (!strcmp(name, "markdown")) return FORMAT_MD;
  if (!strcmp(name, "xml")) return FORMAT_JUNIT;
  return FORMAT_NONE;
}

static int report_render(const report *r, report_format format, int max_failures, FILE *out) {
  switch (format) {
  case FORMAT_HTML: return report_html_write(r, out);
  case FORMAT_JUNIT: return report_junit_write(r, out);
  case FORMAT_MD: return report_md_write(r, max_failures, out);
  case FORMAT_JSON: return report_json_write(r, out);
  default: return -1;
  }
}

/* Renders into path via path.tmp.PID and rename; stdout when path is NULL or "-". */
static int report_emit(const report *r, report_format format, int max_failures, const char *path) {
  char tmp_path[4096];
  FILE *out;
  int rc;
  if (!path || !strcmp(path, "-")) {
    rc = report_render(r, format, max_failures, stdout);
    if (fflush(stdout) != 0 || rc != 0) return cli_env_error("report", "writing stdout: %s", strerror(errno));
    return EXIT_CODE_PASS;
  }
  if (snprintf(tmp_path, sizeof tmp_path, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp_path)
    return cli_usage_error("report", "-o path too long: '%.64s...'", path);
  if (!(out = fopen(tmp_path, "w"))) return cli_env_error("report", "cannot write '%s': %s", path, strerror(errno));
  rc = report_render(r, format, max_failures, out);
  if (fclose(out) != 0) rc = -1;
  if (rc != 0 || rename(tmp_path, path) != 0) {
    int saved = errno;
    remove(tmp_path);
    return cli_env_error("report", "cannot write '%s': %s", path, strerror(saved));
  }
  return EXIT_CODE_PASS;
}

int cmd_report(int argc, char **argv) {
  const char *db = "bitgate.db", *run = NULL, *baseline = NULL, *format_name = NULL, *output = NULL, *max_text = NULL;
  unsigned long long max_failures = 20;
  report_format format;
  report *r = NULL;
  char err[1024];
  int i, rc;
  for (i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      fputs(report_help, stdout);
      return EXIT_CODE_PASS;
    }
    if ((rc = cli_option_value("report", argc, argv, &i, "--db", &db)) ||
        (rc = cli_option_value("report", argc, argv, &i, "--run", &run)) ||
        (rc = cli_option_value("report", argc, argv, &i, "--baseline", &baseline)) ||
        (rc = cli_option_value("report", argc, argv, &i, "--format", &format_name)) ||
        (rc = cli_option_value("report", argc, argv, &i, "--max-failures", &max_text)) ||
        (rc = cli_option_value("report", argc, argv, &i, "-o", &output)) ||
        (rc = cli_option_value("report", argc, argv, &i, "--output", &output))) {
      if (rc < 0) return EXIT_CODE_USAGE;
    } else {
      return cli_usage_error("report", "unknown argument '%s'", argv[i]);
    }
  }
  if (!format_name) return cli_usage_error("report", "--format is required (html, junit, md or json)");
  if ((format = format_parse(format_name)) == FORMAT_NONE)
    return cli_usage_error("report", "--format '%s' is not one of html, junit, md, json", format_name);
  if (max_text && (cli_parse_u64(max_text, &max_failures) != 0 || max_failures > 100000))
    return cli_usage_error("report", "--max-failures '%s' is not a number up to 100000", max_text);
  switch (report_load(db, run, baseline, &r, err, sizeof err)) {
  case REPORT_LOAD_OK: break;
  case REPORT_LOAD_BAD_ARG: return cli_usage_error("report", "%s", err);
  default: return cli_env_error("report", "%s", err);
  }
  rc = report_emit(r, format, (int)max_failures, output);
  report_free(r);
  return rc;
}
