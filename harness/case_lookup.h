/*
** case_lookup.h: from a case id (or a spec typed by hand) to its canonical
** spec.  Ids resolve through every committed suite first, then through the
** results database, which stores each case's spec with its results, so an id
** taken from an old run still resolves after its suite has changed.
*/
#ifndef CASE_LOOKUP_H
#define CASE_LOOKUP_H

#include <stddef.h>

/* 0 if id has the form family(.part)*.xxxxxxxx (8 lowercase hex); else -1 and
** err names the offending token. */
int case_id_check(const char *id, char *err, size_t err_len);

/*
** Resolves arg (an id, or a spec when it contains '=') to spec and id.
** where says "suite NAME", "database PATH" or "command line".  Returns 0;
** 1 when a well-formed id is found nowhere; 2 when arg is malformed (err
** names the token); -1 on an I/O error (err says which).
*/
int case_lookup(const char *arg, const char *corpus_dir, const char *db_path, char *spec, size_t spec_len,
                char *id, size_t id_len, char *where, size_t where_len, char *err, size_t err_len);

#endif
