/*
 * options.h — the option table (DESIGN.md §3).  Every option is written
 * once, in options.c: its names, argument, range or keywords, default,
 * help lines and group.  getopt_long's tables, the range checks, the
 * defaults of cli_opts and --help are all made from it, and
 * tests/cli/help_man.sh checks the man page, docs/cli.md and the Python
 * binding against --help.
 */
#ifndef GPUEDGE_OPTIONS_H
#define GPUEDGE_OPTIONS_H

#include <stddef.h>
#include <getopt.h>

#include "cli.h"

/* What an option's argument is, and so which checks apply. */
enum cli_kind {
    CLI_FLAG,    /* no argument: stores set (CLI_COUNT: adds 1) */
    CLI_INT,     /* a whole number in lo..hi */
    CLI_DOUBLE,  /* a finite number in min..max */
    CLI_KEYWORD, /* one of keys' names */
    CLI_STRING,  /* any text, kept as given */
    CLI_SPECIAL  /* fn parses it */
};

/* Where the value goes. */
enum cli_store { CLI_ST_INT, CLI_ST_LONG, CLI_ST_DOUBLE, CLI_ST_FLOAT, CLI_ST_STR };

/* flags */
#define CLI_ZERO_OK   1  /* CLI_DOUBLE: 0 is accepted beside min..max */
#define CLI_MIN_OPEN  2  /* CLI_DOUBLE: min itself is not */
#define CLI_HELP_ONLY 4  /* a second --help entry for the option above */
#define CLI_COUNT     8  /* CLI_FLAG: each use adds 1 */
#define CLI_STOP     16  /* parsing stops after it (--help) */

/* A keyword and its value; aliases follow the documented names. */
typedef struct cli_choice {
    const char *name;
    int val;
} cli_choice;

/* CLI_SPECIAL's parser: 0, or -1 (the row's err is printed). */
typedef int (*cli_parse_fn)(const char *arg, cli_opts *o);

typedef struct cli_opt {
    const char *name;        /* long name */
    char letter;             /* short option, or 0 */
    char arg;                /* no_argument, required_ or optional_argument */
    char kind;               /* enum cli_kind */
    char store;              /* enum cli_store */
    int flags;
    size_t field;            /* offsetof(cli_opts, ...) + 1; 0 for none */
    size_t given;            /* an int field set to 1 when given (+ 1), or 0 */
    int set;                 /* CLI_FLAG's value; a KEYWORD's or INT's without argument */
    long lo, hi;             /* CLI_INT's range */
    double min, max;         /* CLI_DOUBLE's range */
    const cli_choice *keys;  /* CLI_KEYWORD's names, NULL-terminated */
    cli_parse_fn fn;         /* CLI_SPECIAL */
    const char *err;         /* the usage error; %s is the argument */
    const char *group;       /* the --help heading this option starts, or NULL */
    const char *metavar;     /* "S", "MODE"; "[=N]" for an optional argument */
    const char *help;        /* --help's lines for it, '\n' between */
    const char *dflt;        /* the default as --help shows it, or NULL */
} cli_opt;

/* the table's rows at most (a static_assert checks) */
#define CLI_OPT_MAX 64

extern const cli_opt cli_opt_table[];
extern const size_t cli_opt_count;

/* getopt_long's long options (help-only rows left out; a row's val is its
 * letter, or 256 + its index) and short-option string, made once. */
const struct option *cli_long_opts(void);
const char *cli_short_opts(void);
/* The row getopt_long's c stands for, or NULL (an error: '?' or ':'). */
const cli_opt *cli_opt_of(int c);
/* The row named name (not a help-only one), or NULL. */
const cli_opt *cli_opt_named(const char *name);
/* Applies arg to o: 0, 1 (CLI_STOP: stop parsing, no error), or
 * GE_EXIT_USAGE after the usage lines. */
int cli_opt_apply(const cli_opt *row, const char *arg, cli_opts *o);
/* The defaults every row with a number or a keyword states. */
void cli_opt_defaults(cli_opts *o);
/* One usage error: the message (fmt with arg), the hint; GE_EXIT_USAGE. */
int cli_usage_error(const char *fmt, const char *arg);

#endif
