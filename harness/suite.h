/*
** suite.h: committed suites (corpus/NAME.suite), one canonical spec per line;
** blank lines and lines starting with '#' are ignored; any other line without
** a family (a case id's first part) makes the file unreadable, named by line.
*/
#ifndef SUITE_H
#define SUITE_H

#include <stddef.h>

#define SUITE_REGRESSIONS "regressions" /* part of suite gate */

typedef struct suite {
  char **specs;
  int count;
} suite;

/*
** Loads DIR/NAME.suite; suite gate also takes every spec of DIR/regressions
** (SUITE_REGRESSIONS, same format; absent is fine), where `bitgate shrink`
** appends the minimal cases it finds.  0 on success; else err names the
** file and the problem.
*/
int suite_load(const char *dir, const char *name, suite *out, char *err, size_t err_len);
void suite_free(suite *s);

/* The corpus directory: $BITGATE_CORPUS, else the source tree's corpus/. */
const char *suite_default_dir(void);

#endif
