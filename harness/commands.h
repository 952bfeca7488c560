/*
** commands.h: the subcommands of the bitgate CLI.  Each takes the arguments
** after its own name (argv[0] is the subcommand) and returns an exit code
** from exit_codes.h.
*/
#ifndef COMMANDS_H
#define COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_numerics(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_repro(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_golden(int argc, char **argv);
int cmd_nightly(int argc, char **argv);
int cmd_shrink(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_db(int argc, char **argv);
int cmd_worker(int argc, char **argv); /* hidden: bitgate run's worker process (worker.h) */

/* bitgate's own version string, e.g. "0.1.0". */
extern const char *bitgate_version;
/* git describe of the source tree at build time (build/gen/gitrev.c). */
extern const char *bitgate_git_revision;

#endif
