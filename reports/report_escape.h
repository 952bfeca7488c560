/*
** report_escape.h: writing untrusted text (case ids, messages, command
** lines, hostnames: anything that came out of the database) into each
** output language.
**
** Every function takes arbitrary bytes.  Invalid UTF-8 and control
** characters (other than tab, and newline where the language allows it) are
** written as the visible text \xNN, so the output is always valid UTF-8 and,
** for XML, contains only characters XML 1.0 allows.
*/
#ifndef REPORT_ESCAPE_H
#define REPORT_ESCAPE_H

#include <stdio.h>

/* HTML and XML text or attribute values (double- or single-quoted): & < > " ' as references. */
void report_put_xml(FILE *out, const char *s);

/* A JSON string, quotes included; NULL writes null. */
void report_put_json(FILE *out, const char *s);

/* Markdown text inside a table cell: punctuation backslash-escaped, newlines as spaces. */
void report_put_md(FILE *out, const char *s);

/* A Markdown code span inside a table cell (the fence outgrows any backtick run in s). */
void report_put_md_code(FILE *out, const char *s);

#endif
