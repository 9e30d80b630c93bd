/*
 * util.h - helpers of the memtrail program: messages and exits, memory that
 * cannot fail, a small option parser shared by the commands, and the
 * wording of log errors.
 *
 * Only the program (viewer/) uses these: lib/ never prints or exits.
 */
#ifndef MT_VIEWER_UTIL_H
#define MT_VIEWER_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define MT_EXIT_FAILURE 1
#define MT_EXIT_USAGE   2

/* "memtrail: error: MSG" on stderr, then exit 1. */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* "memtrail: error: MSG" on stderr, then exit 2 (a usage error). */
void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* "memtrail: warning: MSG" on stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "memtrail: MSG" on stderr. */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* malloc/strdup/asprintf that die when out of memory. */
void *xmalloc(size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The option parser. A command lists its options in a table ending with a
 * zeroed entry; opt_next() returns the id of the next option (its argument
 * in *arg), OPT_ARG for a positional argument (in *arg), or OPT_END.
 * Accepted: "--name", "--name=value", "--name value", "-x", "-xVALUE",
 * "-x VALUE", and "--" (everything after is positional). With
 * stop_at_arg set, the first positional argument ends option parsing
 * (for `record PROGRAM ARGS...`). Unknown options and missing values are
 * usage errors (exit 2) naming the command.
 */
struct opt {
	const char *name;   /* long name without "--", or NULL */
	char short_name;    /* or 0 */
	int has_arg;
	int id;             /* > 0 */
};

enum { OPT_END = 0, OPT_ARG = -1 };

struct opt_state {
	int argc;
	char **argv;
	int i;              /* next argument to look at */
	int only_args;      /* after "--" */
	int stop_at_arg;
	const char *cmd;    /* for messages */
	const char *name;   /* the option as written, for messages */
};

void opt_init(struct opt_state *s, const char *cmd, int argc, char **argv, int stop_at_arg);
int opt_next(struct opt_state *s, const struct opt *table, const char **arg);

/* Parses a decimal integer in [min, max] or dies with a usage error. */
long opt_long(const struct opt_state *s, const char *arg, long min, long max);

/*
 * Describes an error from mt_replay_open for "memtrail: error: FILE: ...",
 * e.g. "not a memtrail log (bad magic at offset 0)". Uses errno for MT_E_IO.
 */
const char *log_error(int err, uint64_t offset, char *buf, size_t size);

/* "SEGV" -> SIGSEGV, "SIGUSR2", "12", "RTMIN+1"; returns 0 if unknown. */
int signal_number(const char *s);
/* "SIGSEGV" for SIGSEGV, "signal 40" when it has no name. */
const char *signal_name(int sig, char *buf, size_t size);

struct mt_replay;
struct mt_end;

/* Opens a log for replay, or dies with "memtrail: error: PATH: ..." (exit 1). */
struct mt_replay *open_log(const char *path);
/* The same for a session (lib/session.h): the log read once, or die. */
struct mt_session;
struct mt_session_opts;
struct mt_session *open_session(const char *path, const struct mt_session_opts *o);

/*
 * Warns about how a replay of path ended: "PATH truncated after N events
 * (...)" when the log was cut short or corrupt, and a STOP record's reason.
 */
void warn_log_end(const char *path, const struct mt_end *e);
/* The same words for a status line ("warning: ..."; the truncation first),
 * into buf; "" when the log ended cleanly. */
char *log_end_text(const char *path, const struct mt_end *e, char *buf, size_t size);

#endif
