/*
** cli.h: small helpers shared by the subcommands: option matching, usage
** errors in one line, and number parsing that names what was wrong.
*/
#ifndef CLI_H
#define CLI_H

/* Prints "bitgate CMD: MESSAGE" and a hint line to stderr; returns EXIT_CODE_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints "bitgate CMD: MESSAGE" to stderr; returns EXIT_CODE_ENV. */
int cli_env_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
** If argv[*i] is option `name`, stores its value (the next argument, or the
** part after '=') in *value, advances *i past it and returns 1.  Returns 0 if
** argv[*i] is another argument, and -1 (after a usage error message) if the
** value is missing.
*/
int cli_option_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                     const char **value);

/* Parses a whole unsigned number (decimal or 0x hex) into *out; 0 on success. */
int cli_parse_u64(const char *text, unsigned long long *out);

/* True if argv[i] is --help or -h. */
int cli_is_help(const char *arg);

#endif
