/*
** cmd_bench.c: `bitgate bench`, speed figures (never a pass/fail test).
**
** The lines (bench_csa.c, bench_index_share.c): each CSA stage and decode
** step at the shapes, and the IndexShare step, with the fast and
** the reference kernels side by side (median and minimum of N
** CUDA-event-timed graph replays each), fast's speedup over reference, the
** H200 floor and fast's fraction of it, and the oracle's time.  A device's
** outputs are checked against the oracle's before it is timed, so a fast
** wrong kernel cannot post a figure (exit 1).
**
** With a GPU the figures are also recorded (issue 8 item 2): a run of suite
** 'bench' with its provenance, one bench row per line and variant (schema
** 4; with its timing, schema 5), then the run's end with the exit code.
** Without a GPU there is no device figure, so nothing is recorded and the
** database is not opened.  A
** row that cannot be stored ends the run as 'error', exit code ENV.
**
** --skip-kernels and --no-check make an exploration run, for kernel work:
** kernels left out of the timed graphs (device/launch_skip.h), or a variant
** timed though its outputs differ.  Such figures are not the kernels'
** speed, so the run records nothing, gives no verdicts and says so first.
*/
#include "device/kernel_sources.h"
#include "device/launch_skip.h"
#include "harness/bench.h"
#include "harness/bench_loops.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/exit_codes.h"
#include "harness/session.h"
#include "reports/report_compare.h"
#include "reports/report_targets.h"
#include "reports/report_trend.h"

#include <stdio.h>
#include <string.h>

static const char bench_help[] =
    "usage: bitgate bench [--runs N] [--variant fast|reference|both] [--filter GLOB]\n"
    "                     [--timing held|submit] [--db PATH]\n"
    "                     [--skip-kernels NAME[,NAME...]] [--no-check]\n"
    "       bitgate bench --trend [--last N] [--variant V] [--filter GLOB]\n"
    "                     [--timing held|submit|sync] [--db PATH]\n"
    "       bitgate bench --compare [--variant V] [--filter GLOB] [--timing T] [--db PATH]\n"
    "       bitgate bench --targets [--run ID|latest] [--db PATH]\n"
    "       bitgate bench --oracle-threads N,M[,...] [--oracle-runs R] [--oracle-calls]\n"
    "                     [--filter GLOB]\n"
    "       bitgate bench --loops [--runs N]\n\n"
    "Times, with the fast and the reference kernels side by side, each stage of a\n"
    "CSA decode step (S = 1, 64 heads, FP8 cache) and the whole step: ratio 128 at\n"
    "positions 4096 and 65536 (B = 1); ratio 4 with 64 index heads and topk 512\n"
    "at 4096 and 65536 (B = 1) and 65536 (B = 64); then an IndexShare decode step\n"
    "with K = 2048 selected keys (bf16, head size 128) for 64 and 128 heads at\n"
    "B = 1 and 64.  A figure is the median and the minimum of N CUDA-event-timed\n"
    "replays of the stage captured alone as a graph (default N 20, at least 20);\n"
    "the reference's whole CSA step is not timed (seconds a replay at 64K).\n"
    "Columns: speedup = reference / fast; floor = the larger of the FP32 work at\n"
    "33.5 T instructions/s and the bytes at 4.8 TB/s (an H200); 'of floor' =\n"
    "floor / fast.  --variant fast or reference times one of them only.\n"
    "With a GPU the table opens with two 'launch floor' lines, in the fast\n"
    "columns: graphs of kernels that do nothing, timed the same way on the GPU\n"
    "at hand (one empty kernel; the B = 1 attention's three passes, launched as\n"
    "it launches them, each only waiting for the one before).  A line's time is\n"
    "its launches' floor plus its kernels' work; the floor moves from card to\n"
    "card and host to host.\n"
    "Under the table, each line that issue 8 sets a target for gets a verdict:\n"
    "the target (a ceiling on fast's median, or a floor on the speedup, which\n"
    "needs --variant both), the figure, and 'reached' or how far off and why;\n"
    "after the reasons, which quote one card's figures, this GPU's launch floors.\n"
    "--filter GLOB keeps the shapes whose label matches: 'csa128 pos 4096, B=1',\n"
    "'csa4 pos 65536, B=64', 'IndexShare K=2048, heads 128, B=1', ...; one that\n"
    "keeps no shape is exit 2, naming them all.\n\n"
    "--timing held (the default) holds the stream with a spinning one-thread kernel\n"
    "while the host queues the start event, the graph and the stop event, then\n"
    "releases it: a figure is the GPU's run of the graph alone.  --timing submit\n"
    "records the start event on the idle stream, so a figure also counts the\n"
    "host's cudaGraphLaunch (0.5-1 us on an H200 host).  Profile with submit: a\n"
    "profiler that serialises launches would leave the hold spinning to its limit.\n"
    "(Rows recorded before schema 5 are timing 'sync': their stop event followed\n"
    "the host's wait for the replay, about 5 us after the graph ended.)\n\n"
    "With a GPU the figures are recorded in the results store (--db, default\n"
    "bitgate.db): a run of suite 'bench' and one row of table bench per line and\n"
    "variant.  Without one only the oracle's times and the floors print.\n\n"
    "Exploration (for a kernel developer; a run with either option records\n"
    "nothing and gives no verdicts, and says so first):\n"
    "--skip-kernels NAME[,NAME...] leaves the named kernels (as in the kernel\n"
    "sources and profilers: csa4_attn_softmax, csa4_attn_gather, ...) out of the\n"
    "timed graphs; the eager run that is checked runs them all, so the buffers\n"
    "they fill hold what the kernels after them read.  A figure is then the\n"
    "stage as if those kernels cost nothing: how much fusing or removing them\n"
    "could gain at most.  Under the table, each name's count of launches left\n"
    "out (0: no timed graph launched it; then the kernels they did launch).\n"
    "--no-check times a variant whose eager outputs differ from the oracle's,\n"
    "after printing the difference: a kernel in the making, or one with a part\n"
    "planted away (BITGATE_PLANT='FILE:OLD=>NEW') to see what that part costs.\n\n"
    "--trend times nothing and needs no GPU: it prints the figures recorded in\n"
    "--db, one series per line, variant and timing in the bench's line order,\n"
    "each figure with its run, date, git revision and kernel hash, its median\n"
    "and minimum, and the median's change against the figure before and the\n"
    "first one shown.  --last N (default 10) shows a series' latest N; --filter\n"
    "matches 'KERNEL, SHAPE' ('csa4 sink attention, pos 65536, B=1', so\n"
    "'*sink attention*B=1'); --variant and --timing keep one (default: all).\n\n"
    "--compare times nothing and needs no GPU: it puts the builds that recorded\n"
    "figures in --db side by side, a build being a git revision and kernel hash\n"
    "(BITGATE_KERNEL_TREE or BITGATE_PLANT make another), lettered A, B, ... as\n"
    "first recorded.  For each line, variant and timing: each build's median of\n"
    "its recorded medians, their range and count, and the ratio to the first\n"
    "build's, 'apart' when the two ranges do not meet and 'overlap' when they\n"
    "do (alternate more runs to tell).  Made for A/B rounds: the builds' bench\n"
    "calls alternated in one sitting into one fresh --db.  --filter, --variant\n"
    "and --timing narrow it as for --trend.\n\n"
    "--targets times nothing and needs no GPU: it prints the verdicts of one\n"
    "recorded bench run (--run, default the latest) against issue 8's targets,\n"
    "as a run on a GPU prints them under its table.\n\n"
    "--oracle-threads N,M[,...] times no kernel and needs no GPU: for each shape\n"
    "it times the oracle's decode step at each thread count (2 to 4 counts, as\n"
    "BITGATE_ORACLE_THREADS would set them), R timed runs of each (--oracle-runs,\n"
    "default 5) after one untimed, the counts taking turns run by run so that a\n"
    "busy host's drift falls on all of them alike.  It prints each count's best\n"
    "and median ms and the first count's time over each other's: the oracle's\n"
    "speedup on that many threads (e.g. --oracle-threads 1,2 on 2 cores, 1,16 on\n"
    "16).  Under the rows, issue 8's oracle targets (>= 1.8x on 2 cores, >= 10x\n"
    "on 16, over 1 thread) get a verdict on the lowest shape's best-time speedup:\n"
    "reached, or how far short and on how many shapes it was reached; not judged\n"
    "when fewer processors are online than the count.  --oracle-calls adds, under\n"
    "each row, the step's time by the oracle's parallel call sites (a call's own\n"
    "time, its inner calls' apart): calls and items a step, each count's best\n"
    "and median ms and the speedups, and the time between calls (the work no call\n"
    "spreads): where a row's speedup is lost.  Nothing is recorded.\n\n"
    "--loops times the B = 1 attention's inner loops alone on the GPU (exit 3\n"
    "without one): the values chains (two a thread), one chain with its operands\n"
    "in registers (the adds' own floor), the narrow scores stage and the softmax's\n"
    "ordered sum, each the pass's own loop function at its pass's grid, on\n"
    "operands staged in shared memory (device/kernels/loop_probe.cu), the values\n"
    "and scores loops also on one block and on one warp alone; then candidates:\n"
    "a shape for the values loop (one chain a thread, values staged transposed)\n"
    "and the softmax's sum taken a segment a half-warp from guesses of each\n"
    "segment's start (device/kernels/ordered_sum_block.h).\n"
    "It prints their cycles a term (thread 0's clock64, the median and the\n"
    "slowest block, the median of --runs launches): set beside a pass's time,\n"
    "whether the loop or what the pass does around it holds the pass.  Each\n"
    "probe's sums are first checked bit for bit against the same sums in C; one\n"
    "that differs posts no figure (exit 1).  Nothing is recorded.\n\n" EXIT_CODES_HELP;

/* --trend: the recorded figures of db, read-only (reports/report_trend.h). */
static int bench_trend(const char *db, const report_trend_opts *t) {
  char err[1024];
  if (report_trend_write(db, t, stdout, err, sizeof err) != 0) return cli_env_error("bench", "%s", err);
  return EXIT_CODE_PASS;
}

/* --compare: the builds of db side by side, read-only (reports/report_compare.h). */
static int bench_compare(const char *db, const report_trend_opts *t) {
  char err[1024];
  if (report_compare_write(db, t, stdout, err, sizeof err) != 0) return cli_env_error("bench", "%s", err);
  return EXIT_CODE_PASS;
}

/* --targets: the verdicts of one recorded run of db, read-only (reports/report_targets.h). */
static int bench_targets(const char *db, const char *run) {
  char err[1024];
  if (report_targets_write(db, run, stdout, err, sizeof err) != 0) return cli_env_error("bench", "%s", err);
  return EXIT_CODE_PASS;
}

/*
** Under the table of a --skip-kernels run: what each name left out; when a
** name matched nothing, the kernels the timed graphs did launch.
*/
static void bench_skip_summary(const launch_skip *skip) {
  int i, unmatched = 0;
  for (i = 0; i < skip->n; i++)
    if (skip->left_out[i]) {
      printf("left out of the timed graphs: %s, %lld launch%s\n", skip->name[i], skip->left_out[i],
             skip->left_out[i] == 1 ? "" : "es");
    } else {
      printf("left out of the timed graphs: %s, none: no timed graph launched it (is the name right?)\n",
             skip->name[i]);
      unmatched = 1;
    }
  if (!unmatched || !skip->n_seen) return;
  printf("the timed graphs launched:");
  for (i = 0; i < skip->n_seen; i++) printf("%s %s", i ? "," : "", skip->seen[i]);
  printf("%s\n", skip->n_seen == LAUNCH_SKIP_SEEN_MAX ? ", ..." : "");
}

/* --loops: the loop probes on GPU 0 (bench_loops.h); nothing is recorded. */
static int bench_loops(int runs) {
  static bench_loop_figure fig[BENCH_LOOP_PROBES];
  session ses;
  char err[1024];
  int status;
  if (session_open(&ses, LANE_ALL, 1) != 0) {
    cli_env_error("bench", "--loops runs the loops on a GPU: %s", ses.device_reason);
    session_close(&ses);
    return EXIT_CODE_ENV;
  }
  if (bench_loops_measure(ses.env.rt, runs, fig, err, sizeof err) != 0) {
    session_close(&ses);
    return cli_env_error("bench", "--loops: %s", err);
  }
  status = bench_loops_print(fig, runs) ? EXIT_CODE_PASS : EXIT_CODE_FAIL;
  session_close(&ses);
  return status;
}

/*
** The options a mode refuses when given with it, in the order a refusal
** names them: each mode's check is a mask of OPT bits over these.
*/
enum {
  OPT_COMPARE, OPT_TREND, OPT_TARGETS, OPT_RUN, OPT_LAST, OPT_RUNS, OPT_VARIANT, OPT_TIMING, OPT_FILTER,
  OPT_ORACLE_THREADS, OPT_SKIP, OPT_NO_CHECK, OPT_ORACLE_CALLS, OPT_ORACLE_RUNS, OPT_COUNT
};
static const char *const opt_names[OPT_COUNT] = {
    "--compare", "--trend",  "--targets",        "--run",          "--last",     "--runs",         "--variant",
    "--timing",  "--filter", "--oracle-threads", "--skip-kernels", "--no-check", "--oracle-calls", "--oracle-runs"};
#define OPT(k) (1u << (k))

/* The first option of mask that seen (indexed by OPT_*) says was given, or NULL. */
static const char *first_given(const int *seen, unsigned mask) {
  int k;
  for (k = 0; k < OPT_COUNT; k++)
    if (mask & OPT(k) && seen[k]) return opt_names[k];
  return NULL;
}

/* a < b as exit codes go: a wrong kernel (FAIL) outranks a missing resource (ENV). */
static int worse(int a, int b) { return a == EXIT_CODE_FAIL || b == EXIT_CODE_FAIL ? EXIT_CODE_FAIL : a ? a : b; }

int cmd_bench(int argc, char **argv) {
  unsigned long long runs = 20;
  session ses;
  bench_record rec = {NULL, 0, 0};
  bench_opts o;
  static report_target_log targets; /* 32 KB: kept off the stack */
  unsigned long long last = 10;
  const char *v, *db = "bitgate.db", *runs_arg = NULL, *last_arg = NULL, *timing_arg = NULL, *run_arg = NULL;
  const char *variant_arg = NULL, *scaling_arg = NULL, *scaling_runs_arg = NULL, *skip_arg = NULL;
  bench_scaling scaling;
  static launch_skip skip; /* 8 KB: kept off the stack */
  char err[1024];
  int i, r, status, trend = 0, compare = 0, targets_only = 0, exploring, oracle_calls = 0, loops = 0;
  memset(&o, 0, sizeof o);
  o.variants = 1u << DEVICE_VARIANT_FAST | 1u << DEVICE_VARIANT_REFERENCE;
  for (i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) return fputs(bench_help, stdout), EXIT_CODE_PASS;
    if ((r = cli_option_value("bench", argc, argv, &i, "--runs", &v)) != 0) {
      if (r < 0) return EXIT_CODE_USAGE;
      if (cli_parse_u64(v, &runs) || runs < 20 || runs > 100000)
        return cli_usage_error("bench", "--runs '%s' is not a number from 20 to 100000", v);
      runs_arg = v;
    } else if (!strcmp(argv[i], "--trend")) {
      trend = 1;
    } else if (!strcmp(argv[i], "--compare")) {
      compare = 1;
    } else if (!strcmp(argv[i], "--targets")) {
      targets_only = 1;
    } else if ((r = cli_option_value("bench", argc, argv, &i, "--run", &run_arg)) != 0) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else if ((r = cli_option_value("bench", argc, argv, &i, "--last", &last_arg)) != 0) {
      if (r < 0) return EXIT_CODE_USAGE;
      if (cli_parse_u64(last_arg, &last) || last < 1 || last > 1000000)
        return cli_usage_error("bench", "--last '%s' is not a number from 1 to 1000000", last_arg);
    } else if ((r = cli_option_value("bench", argc, argv, &i, "--variant", &v)) != 0) {
      device_variant one;
      if (r < 0) return EXIT_CODE_USAGE;
      variant_arg = v;
      if (!strcmp(v, "both")) o.variants = 1u << DEVICE_VARIANT_FAST | 1u << DEVICE_VARIANT_REFERENCE;
      else if (device_variant_parse(v, &one) == 0) o.variants = 1u << one;
      else return cli_usage_error("bench", "--variant '%s': expected fast, reference or both", v);
    } else if ((r = cli_option_value("bench", argc, argv, &i, "--timing", &timing_arg)) != 0) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else if ((r = cli_option_value("bench", argc, argv, &i, "--filter", &o.filter)) != 0) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else if ((r = cli_option_value("bench", argc, argv, &i, "--db", &db)) != 0) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else if ((r = cli_option_value("bench", argc, argv, &i, "--oracle-threads", &scaling_arg)) != 0) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else if ((r = cli_option_value("bench", argc, argv, &i, "--oracle-runs", &scaling_runs_arg)) != 0) {
      if (r < 0) return EXIT_CODE_USAGE;
    } else if ((r = cli_option_value("bench", argc, argv, &i, "--skip-kernels", &skip_arg)) != 0) {
      if (r < 0) return EXIT_CODE_USAGE;
      if (launch_skip_parse(&skip, skip_arg, err, sizeof err) != 0)
        return cli_usage_error("bench", "--skip-kernels %s", err);
    } else if (!strcmp(argv[i], "--loops")) {
      loops = 1;
    } else if (!strcmp(argv[i], "--oracle-calls")) {
      oracle_calls = 1;
    } else if (!strcmp(argv[i], "--no-check")) {
      o.no_check = 1;
    } else {
      return cli_usage_error("bench", "unknown argument '%s'", argv[i]);
    }
  }
  exploring = skip_arg || o.no_check;
  const int seen[OPT_COUNT] = {
      [OPT_COMPARE] = compare,         [OPT_TREND] = trend,           [OPT_TARGETS] = targets_only,
      [OPT_RUN] = run_arg != NULL,     [OPT_LAST] = last_arg != NULL, [OPT_RUNS] = runs_arg != NULL,
      [OPT_VARIANT] = variant_arg != NULL, [OPT_TIMING] = timing_arg != NULL, [OPT_FILTER] = o.filter != NULL,
      [OPT_ORACLE_THREADS] = scaling_arg != NULL, [OPT_SKIP] = skip_arg != NULL, [OPT_NO_CHECK] = o.no_check,
      [OPT_ORACLE_CALLS] = oracle_calls, [OPT_ORACLE_RUNS] = scaling_runs_arg != NULL};
  if (loops) {
    const char *stray = first_given(seen, ~OPT(OPT_RUNS));
    if (stray) return cli_usage_error("bench", "%s: --loops times the loop probes alone (--runs only)", stray);
    return bench_loops((int)runs);
  }
  if (trend && compare) return cli_usage_error("bench", "--compare: --trend is another view; give one");
  trend |= compare; /* from here on, what --trend takes --compare takes */
  if (exploring && (scaling_arg || trend || targets_only))
    return cli_usage_error("bench", "%s: %s times no kernel", skip_arg ? "--skip-kernels" : "--no-check",
                           scaling_arg ? "--oracle-threads" : compare ? "--compare" : trend ? "--trend" : "--targets");
  if (!trend && !targets_only && bench_filter_check(o.filter, err, sizeof err) != 0)
    return cli_usage_error("bench", "%s", err);
  if (scaling_runs_arg && !scaling_arg)
    return cli_usage_error("bench", "--oracle-runs '%s' needs --oracle-threads", scaling_runs_arg);
  if (oracle_calls && !scaling_arg) return cli_usage_error("bench", "--oracle-calls needs --oracle-threads");
  if (scaling_arg) {
    unsigned long long n = 0;
    const char *stray = first_given(seen, OPT(OPT_COMPARE) | OPT(OPT_TREND) | OPT(OPT_TARGETS) | OPT(OPT_RUN) |
                                              OPT(OPT_LAST) | OPT(OPT_RUNS) | OPT(OPT_VARIANT) | OPT(OPT_TIMING));
    if (stray) return cli_usage_error("bench", "%s: --oracle-threads times the oracle alone", stray);
    if (bench_scaling_parse(scaling_arg, &scaling, err, sizeof err) != 0) return cli_usage_error("bench", "%s", err);
    if (scaling_runs_arg) {
      if (cli_parse_u64(scaling_runs_arg, &n) || n < 1 || n > BENCH_SCALING_RUNS_MAX)
        return cli_usage_error("bench", "--oracle-runs '%s' is not a number from 1 to %d", scaling_runs_arg,
                               BENCH_SCALING_RUNS_MAX);
      scaling.runs = (int)n;
    }
    scaling.calls = oracle_calls;
    session_open(&ses, 1u << LANE_ORACLE, 0);
    o.ses = &ses;
    o.scaling = &scaling;
    bench_scaling_header(&scaling);
    status = bench_csa_lines(&o);
    status = worse(status, bench_index_share_lines(&o));
    bench_scaling_verdicts(&scaling);
    session_close(&ses);
    return status;
  }
  if (targets_only) {
    const char *stray = first_given(seen, OPT(OPT_COMPARE) | OPT(OPT_TREND) | OPT(OPT_RUNS) | OPT(OPT_LAST) |
                                              OPT(OPT_VARIANT) | OPT(OPT_TIMING) | OPT(OPT_FILTER));
    if (stray) return cli_usage_error("bench", "%s: --targets reads one recorded run, whole", stray);
    return bench_targets(db, run_arg);
  }
  if (run_arg) return cli_usage_error("bench", "--run '%s' needs --targets", run_arg);
  if (trend) {
    const report_trend_opts t = {
        .filter = o.filter,
        .variant = o.variants == (1u << DEVICE_VARIANT_FAST) ? device_variant_name(DEVICE_VARIANT_FAST)
                   : o.variants == (1u << DEVICE_VARIANT_REFERENCE) ? device_variant_name(DEVICE_VARIANT_REFERENCE)
                                                                   : NULL,
        .timing = timing_arg,
        .last = (int)last};
    if (runs_arg)
      return cli_usage_error("bench", "--runs '%s': %s times nothing", runs_arg, compare ? "--compare" : "--trend");
    if (compare && last_arg)
      return cli_usage_error("bench", "--last '%s': --compare takes every recorded figure", last_arg);
    if (timing_arg && strcmp(timing_arg, "held") && strcmp(timing_arg, "submit") && strcmp(timing_arg, "sync"))
      return cli_usage_error("bench", "--timing '%s': expected held, submit or sync", timing_arg);
    return compare ? bench_compare(db, &t) : bench_trend(db, &t);
  }
  if (last_arg) return cli_usage_error("bench", "--last '%s' needs --trend", last_arg);
  if (timing_arg && bench_timing_parse(timing_arg, &o.timing) != 0)
    return cli_usage_error("bench", "--timing '%s': expected held or submit", timing_arg);
  session_open(&ses, LANE_ALL, 0);
  if (exploring) {
    printf("exploration run (%s%s%s): figures print, nothing is recorded, no verdicts\n",
           skip_arg ? "--skip-kernels " : "", skip_arg ? skip_arg : "",
           o.no_check ? (skip_arg ? ", --no-check" : "--no-check") : "");
    if (ses.have_device && skip_arg) device_runtime_set_skip(ses.env.rt, &skip);
  } else if (ses.have_device && bench_record_begin(&rec, db, argc, argv) != EXIT_CODE_PASS) {
    session_close(&ses);
    return EXIT_CODE_ENV;
  }
  o.runs = (int)runs;
  o.ses = &ses;
  o.rec = exploring ? NULL : &rec;
  o.targets = exploring ? NULL : &targets;
  kernel_sources_print_origin(stdout, "");
  bench_print_header();
  status = bench_launch_floor_lines(&o);
  status = worse(status, bench_csa_lines(&o));
  status = worse(status, bench_index_share_lines(&o));
  if (!ses.have_device) {
    printf("device figures need a GPU: %s\n", ses.device_reason);
  } else {
    printf("device: median and min of %llu CUDA-event-timed replays of the captured stage or step, %s\n", runs,
           o.timing == BENCH_TIMING_HELD ? "held (the GPU's run of the graph alone)"
                                         : "submit (with the host's cudaGraphLaunch)");
    if (exploring && skip_arg) bench_skip_summary(&skip);
    if (!exploring) report_target_log_print(&targets, stdout);
  }
  if (!exploring) status = bench_record_end(&rec, db, status);
  if (ses.have_device && skip_arg) device_runtime_set_skip(ses.env.rt, NULL);
  session_close(&ses);
  return status;
}
