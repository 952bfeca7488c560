/*
** bitgate_process.c: see bitgate_process.h.
*/
#include "harness/tests/bitgate_process.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Reads fd to its end, keeping the first cap - 1 bytes. */
static void slurp(int fd, char *buf, size_t cap) {
  char sink[4096];
  size_t used = 0;
  ssize_t n;
  while (used + 1 < cap && (n = read(fd, buf + used, cap - 1 - used)) > 0) used += (size_t)n;
  buf[used] = '\0';
  while (read(fd, sink, sizeof sink) > 0) {}
}

outcome *run_bitgate(const char *dir, const char *const *args) {
  static outcome o;
  const char *argv[32];
  int out_pipe[2], err_pipe[2], i, st;
  pid_t pid;
  argv[0] = BITGATE_BINARY;
  for (i = 0; args[i]; i++) argv[i + 1] = args[i];
  argv[i + 1] = NULL;
  cr_assert(pipe(out_pipe) == 0 && pipe(err_pipe) == 0);
  pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    if (dir && chdir(dir) != 0) _exit(126);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  slurp(out_pipe[0], o.out, sizeof o.out); /* outputs are small: no deadlock */
  slurp(err_pipe[0], o.err, sizeof o.err);
  close(out_pipe[0]);
  close(err_pipe[0]);
  waitpid(pid, &st, 0);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return &o;
}

int line_count(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

char tmp[256];
void make_tmp(void) {
  strcpy(tmp, "/tmp/bitgate-test-XXXXXX");
  cr_assert(mkdtemp(tmp) != NULL);
}
void remove_tmp(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  cr_expect(system(cmd) == 0);
}
