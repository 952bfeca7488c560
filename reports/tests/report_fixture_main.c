/*
** report_fixture_main.c: `report_fixture_db PATH` writes the fixture
** database (report_fixture.h) for the CTest tests that drive the bitgate
** binary (JUnit schema check, Chromium render).  An existing PATH is
** replaced, so the test can be rerun.
*/
#include "reports/tests/report_fixture.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  char err[1024], side[4096];
  const char *suffixes[] = {"", "-wal", "-shm"};
  if (argc != 2) {
    fprintf(stderr, "usage: report_fixture_db PATH\n");
    return 2;
  }
  for (int i = 0; i < 3; i++) {
    snprintf(side, sizeof side, "%s%s", argv[1], suffixes[i]);
    remove(side);
  }
  if (report_fixture_write(argv[1], err, sizeof err) != 0) {
    fprintf(stderr, "report_fixture_db: %s\n", err);
    return 1;
  }
  printf("report_fixture_db: wrote %s\n", argv[1]);
  return 0;
}
