/*
** exit_codes.h: bitgate's process exit codes, the contract with CI.
*/
#ifndef EXIT_CODES_H
#define EXIT_CODES_H

enum exit_code {
  EXIT_CODE_PASS = 0,  /* everything that ran passed */
  EXIT_CODE_FAIL = 1,  /* mismatches or failures were found */
  EXIT_CODE_USAGE = 2, /* bad command line: one line naming the argument, plus a hint */
  EXIT_CODE_ENV = 3    /* environment or resource error: database, GPU, NVRTC, files */
};

#define EXIT_CODES_HELP                                                        \
  "exit codes:\n"                                                              \
  "  0  everything passed\n"                                                   \
  "  1  mismatches or failures found\n"                                        \
  "  2  usage error (the message names the bad argument)\n"                    \
  "  3  environment or resource error (database, GPU, NVRTC, files)\n"

#endif
