/*
** report_fixture.h: a small results database written through the store API
** (harness/store.h), as a run would write it, for the report tests.
**
** Run 1 is the baseline, run 2 the run reported.  Run 2, case x lane:
**   is.valid.0000000a     oracle pass, eager mismatch (y, 1 ulp)    newly failing
**   is.valid.0000000b     oracle pass, eager pass                   newly passing (failed in run 1)
**   csa4.chain.0000000c   eager pass at steps 0..2, mismatch at step 3, stage IndexScoring
**                         (70000 ulp, no repro in the message); failed in run 1 too
**   csa128.chain.0000000d capture nondeterministic, stage CompressionUpdate;
**                         passed in run 1: newly failing and newly nondeterministic
**   is.bias.0000000e      eager unavailable, poison skipped
**   is.masked.0000000f    eager crash (a JUnit error)
**   FIXTURE_NASTY_ID      oracle error_parity with markup, quotes, a pipe, a
**                         backtick and an invalid UTF-8 byte in its message
** So run 2 has 10 case x lane results: 3 pass, 5 fail, 2 skipped; against run 1,
** 4 are newly failing (a, d, and f and the nasty one, absent then), 1 newly
** passing (b), 1 newly nondeterministic (d).
*/
#ifndef REPORT_FIXTURE_H
#define REPORT_FIXTURE_H

#include <stddef.h>

#define FIXTURE_NASTY_ID "is.contract.<b>&\"q'|`x`"
#define FIXTURE_NASTY_MESSAGE "oracle rejects <script>alert(1)</script> & \"quotes\" | pipe \xff bad"
#define FIXTURE_GIT_REV "abc123<dirty>"

/* Writes the fixture to path (which must not exist); 0, or -1 with err. */
int report_fixture_write(const char *path, char *err, size_t err_len);

#endif
