/*
** case_lookup.c: see case_lookup.h.
*/
#include "harness/case_lookup.h"
#include "cases/case_spec.h"
#include "harness/store.h"
#include "harness/suite.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int case_id_check(const char *id, char *err, size_t err_len) {
  const char *dot = strrchr(id, '.'), *p;
  size_t n = strlen(id);
  if (!dot || dot == id || n - (size_t)(dot - id) != 9) {
    snprintf(err, err_len, "'%s' is not a case id (family.xxxxxxxx with 8 hex digits)", id);
    return -1;
  }
  for (p = dot + 1; *p; p++)
    if (!isxdigit((unsigned char)*p) || isupper((unsigned char)*p)) {
      snprintf(err, err_len, "case id '%s': '%s' is not 8 lowercase hex digits", id, dot + 1);
      return -1;
    }
  for (p = id; p < dot; p++)
    if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '.' || *p == '_') ||
        (*p == '.' && (p == id || p[-1] == '.'))) {
      snprintf(err, err_len, "case id '%s': bad character '%c' in the family", id, *p);
      return -1;
    }
  return 0;
}

/* Looks for id in DIR/NAME.suite; 0 found, 1 not. */
static int find_in_suite(const char *dir, const char *name, const char *id, char *spec, size_t spec_len) {
  suite s;
  char err[512], sid[CASE_ID_MAX];
  int i, rc = 1;
  if (suite_load(dir, name, &s, err, sizeof err) != 0) return 1;
  for (i = 0; i < s.count && rc; i++)
    if (case_id_from_spec(s.specs[i], sid, sizeof sid) == 0 && !strcmp(sid, id)) {
      snprintf(spec, spec_len, "%s", s.specs[i]);
      rc = 0;
    }
  suite_free(&s);
  return rc;
}

/* scandir filter: the *.suite files. */
static int is_suite_file(const struct dirent *e) {
  size_t n = strlen(e->d_name);
  return n > 6 && n < 256 && strcmp(e->d_name + n - 6, ".suite") == 0;
}

/*
** Looks id up in gate first (a gate id is in nightly too, and "suite gate"
** is what a developer expects to read), then in every other suite in name
** order, so the answer never depends on the directory's listing order.
*/
static int find_in_suites(const char *dir, const char *id, char *spec, size_t spec_len, char *where,
                          size_t where_len) {
  struct dirent **list = NULL;
  int n, i, rc = find_in_suite(dir, "gate", id, spec, spec_len);
  if (rc == 0) return snprintf(where, where_len, "suite gate"), 0;
  n = scandir(dir, &list, is_suite_file, alphasort);
  for (i = 0; i < n; i++) {
    char name[256];
    size_t len = strlen(list[i]->d_name) - 6;
    memcpy(name, list[i]->d_name, len);
    name[len] = '\0';
    if (rc != 0 && strcmp(name, "gate") != 0 && (rc = find_in_suite(dir, name, id, spec, spec_len)) == 0)
      snprintf(where, where_len, "suite %s", name);
    free(list[i]);
  }
  free(list);
  return rc;
}

int case_lookup(const char *arg, const char *corpus_dir, const char *db_path, char *spec, size_t spec_len,
                char *id, size_t id_len, char *where, size_t where_len, char *err, size_t err_len) {
  store *db = NULL;
  int rc;
  if (strchr(arg, '=')) { /* a spec given directly */
    if (case_id_from_spec(arg, id, id_len) != 0) {
      snprintf(err, err_len, "spec has no 'family=' token: '%s'", arg);
      return 2;
    }
    snprintf(spec, spec_len, "%s", arg);
    snprintf(where, where_len, "command line");
    return 0;
  }
  if (case_id_check(arg, err, err_len) != 0) return 2;
  snprintf(id, id_len, "%s", arg);
  if (find_in_suites(corpus_dir, arg, spec, spec_len, where, where_len) == 0) return 0;
  if (!db_path || access(db_path, F_OK) != 0) return 1;
  if (store_open(db_path, &db, err, err_len) != 0) return -1;
  rc = store_case_spec(db, arg, spec, spec_len);
  if (rc < 0) snprintf(err, err_len, "%s", store_errmsg(db));
  if (rc == 0) snprintf(where, where_len, "database %s", db_path);
  store_close(db);
  return rc;
}
