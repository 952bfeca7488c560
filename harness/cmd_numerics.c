/*
** cmd_numerics.c: `bitgate numerics check`, the proofs that the frozen
** numerics are correctly rounded and identical on host and GPU.
*/
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "harness/numerics_check.h"
#include "harness/parallel.h"

#include <mpfr.h>
#include <stdio.h>
#include <string.h>

static const char numerics_help[] =
    "usage: bitgate numerics check [--exhaustive [--func F] [--from N] [--to N]]\n"
    "                              [--device] [--threads N]\n\n"
    "Checks numerics.h (the oracle's and the kernels' shared numerics):\n"
    "  (default)     2^24 stratified inputs per function against MPFR, the hard\n"
    "                inputs, every E4M3/E2M1/bf16/f16 code, the quantizer edge cases\n"
    "  --exhaustive  all 2^32 inputs against MPFR on all cores; F is exp, sincos\n"
    "                or all (= exp and sincos, the default), or pow160000 (every\n"
    "                y of pow(160000, y); slow); --from/--to limit the input bit\n"
    "                patterns to [N, M) so the proof can be split\n"
    "  --device      the same header compiled by NVRTC, all 2^32 inputs of every\n"
    "                function on the GPU, compared with the host (needs a GPU);\n"
    "                --func limits it to one sweep function (exp, sin, max_neg, ...)\n"
    "  --threads N   worker threads (default: all cores)\n\n"
    "The last line reads 'numerics: N checked, M incorrect'.\n\n" EXIT_CODES_HELP;

typedef struct numerics_args {
  int exhaustive, device, threads;
  const char *func;
  unsigned long long from, to;
} numerics_args;

static int parse_args(int argc, char **argv, numerics_args *a) {
  int i, r;
  const char *v;
  unsigned long long n;
  a->exhaustive = a->device = 0;
  a->threads = parallel_default_threads();
  a->func = "all";
  a->from = 0;
  a->to = 1ull << 32;
  if (argc < 2 || strcmp(argv[1], "check") != 0)
    return argc < 2 ? cli_usage_error("numerics", "missing subcommand 'check'")
                    : cli_usage_error("numerics", "unknown subcommand '%s'", argv[1]);
  for (i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--exhaustive")) a->exhaustive = 1;
    else if (!strcmp(argv[i], "--device")) a->device = 1;
    else if ((r = cli_option_value("numerics", argc, argv, &i, "--func", &a->func)) != 0) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else if ((r = cli_option_value("numerics", argc, argv, &i, "--threads", &v)) != 0) {
      if (r < 0) return EXIT_CODE_USAGE;
      if (cli_parse_u64(v, &n) || n < 1 || n > 1024)
        return cli_usage_error("numerics", "--threads '%s' is not a number from 1 to 1024", v);
      a->threads = (int)n;
    } else if ((r = cli_option_value("numerics", argc, argv, &i, "--from", &v)) != 0) {
      if (r < 0 || cli_parse_u64(v, &a->from) || a->from > (1ull << 32))
        return r < 0 ? EXIT_CODE_USAGE : cli_usage_error("numerics", "--from '%s' is not in [0, 2^32]", v);
    } else if ((r = cli_option_value("numerics", argc, argv, &i, "--to", &v)) != 0) {
      if (r < 0 || cli_parse_u64(v, &a->to) || a->to > (1ull << 32))
        return r < 0 ? EXIT_CODE_USAGE : cli_usage_error("numerics", "--to '%s' is not in [0, 2^32]", v);
    } else {
      return cli_usage_error("numerics", "unknown argument '%s'", argv[i]);
    }
  }
  if (a->from >= a->to) return cli_usage_error("numerics", "--from must be below --to");
  if (a->device && strcmp(a->func, "all") && !numerics_device_func_known(a->func))
    return cli_usage_error("numerics", "--func '%s' is not a device sweep function (exp, sin, cos, "
                           "pow_160000, bf16_rn, cuda_f16_rn, max_neg, ...)", a->func);
  if (!a->device && strcmp(a->func, "exp") && strcmp(a->func, "sincos") && strcmp(a->func, "pow160000") &&
      strcmp(a->func, "all"))
    return cli_usage_error("numerics", "--func '%s' is not one of exp, sincos, pow160000, all", a->func);
  return EXIT_CODE_PASS;
}

static int run_exhaustive(const numerics_args *a, check_tally *total) {
  static const char *all[] = {"exp", "sincos", "pow160000"};
  int i;
  for (i = 0; i < 3; i++) {
    int wanted = !strcmp(a->func, all[i]) || (!strcmp(a->func, "all") && i < 2);
    if (!wanted) continue;
    if (numerics_check_exhaustive(all[i], a->from, a->to, a->threads, stdout, total) != 0)
      return cli_env_error("numerics", "could not start %d threads", a->threads);
  }
  return EXIT_CODE_PASS;
}

int cmd_numerics(int argc, char **argv) {
  numerics_args a;
  check_tally total = {0, 0};
  char err[512];
  int i, rc;
  for (i = 1; i < argc; i++)
    if (cli_is_help(argv[i])) {
      fputs(numerics_help, stdout);
      return EXIT_CODE_PASS;
    }
  if ((rc = parse_args(argc, argv, &a)) != EXIT_CODE_PASS) return rc;
  if (a.device) {
    if (numerics_check_device(strcmp(a.func, "all") ? a.func : NULL, a.threads, stdout, &total, err,
                              sizeof err) != 0)
      return cli_env_error("numerics", "%s", err);
  } else if (a.exhaustive) {
    if ((rc = run_exhaustive(&a, &total)) != EXIT_CODE_PASS) return rc;
  } else {
    numerics_check_sample(a.threads, stdout, &total);
  }
  mpfr_free_cache();
  printf("numerics: %lld checked, %lld incorrect\n", total.checked, total.incorrect);
  return total.incorrect ? EXIT_CODE_FAIL : EXIT_CODE_PASS;
}
