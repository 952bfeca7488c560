/*
** run_index_share.h: the IndexShare lanes (oracle, eager, capture, poison)
** for one case; see case_runner.h for what each lane means.
*/
#ifndef RUN_INDEX_SHARE_H
#define RUN_INDEX_SHARE_H

#include "harness/case_runner.h"

int run_index_share(runner_env *env, const char *case_id, const char *spec, case_report *out);

#endif
