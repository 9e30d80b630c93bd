/*
 * util.c - messages, exits, memory and option parsing for the memtrail
 * program (see util.h). Not for lib/: the engine never prints or exits.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fmt.h"
#include "replay.h"
#include "session.h"
#include "util.h"

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "memtrail: %s", kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("error: ", fmt, ap);
	va_end(ap);
	exit(MT_EXIT_FAILURE);
}

void die_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("error: ", fmt, ap);
	va_end(ap);
	exit(MT_EXIT_USAGE);
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory");
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory");
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("out of memory");
	return p;
}

void opt_init(struct opt_state *s, const char *cmd, int argc, char **argv, int stop_at_arg)
{
	memset(s, 0, sizeof(*s));
	s->cmd = cmd;
	s->argc = argc;
	s->argv = argv;
	s->i = 1;
	s->stop_at_arg = stop_at_arg;
}

int opt_next(struct opt_state *s, const struct opt *table, const char **arg)
{
	const struct opt *o;
	const char *a, *eq;
	size_t len;

	if (s->i >= s->argc)
		return OPT_END;
	a = s->argv[s->i++];
	if (s->only_args || a[0] != '-' || !a[1]) {
		if (s->stop_at_arg)
			s->only_args = 1;
		*arg = a;
		return OPT_ARG;
	}
	s->name = a;
	if (!strcmp(a, "--")) {
		s->only_args = 1;
		return opt_next(s, table, arg);
	}
	if (a[1] == '-') {
		eq = strchr(a + 2, '=');
		len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		for (o = table; o->id; o++)
			if (o->name && strlen(o->name) == len && !strncmp(o->name, a + 2, len))
				break;
		if (!o->id)
			die_usage("unknown option '%.*s' for 'memtrail %s'", (int)len + 2, a, s->cmd);
		if (!o->has_arg) {
			if (eq)
				die_usage("option '--%s' takes no value", o->name);
			*arg = NULL;
			return o->id;
		}
		if (eq) {
			*arg = eq + 1;
			return o->id;
		}
	} else {
		for (o = table; o->id; o++)
			if (o->short_name && o->short_name == a[1])
				break;
		if (!o->id)
			die_usage("unknown option '-%c' for 'memtrail %s'", a[1], s->cmd);
		if (!o->has_arg) {
			if (a[2])
				die_usage("option '-%c' takes no value", a[1]);
			*arg = NULL;
			return o->id;
		}
		if (a[2]) {
			*arg = a + 2;
			return o->id;
		}
	}
	if (s->i >= s->argc)
		die_usage("option '%s' needs a value", a);
	*arg = s->argv[s->i++];
	return o->id;
}

long opt_long(const struct opt_state *s, const char *arg, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (!*arg || *end || errno || v < min || v > max)
		die_usage("%s: '%s' is not a number from %ld to %ld", s->name, arg, min, max);
	return v;
}

const char *log_error(int err, uint64_t offset, char *buf, size_t size)
{
	switch (err) {
	case MT_E_IO:
		snprintf(buf, size, "%s", strerror(errno));
		break;
	case MT_E_MAGIC:
		snprintf(buf, size, "not a memtrail log (bad magic at offset %" PRIu64 ")", offset);
		break;
	case MT_E_TRUNCATED:
		snprintf(buf, size, "%s", offset ? "log ends inside its header" : "empty file, not a memtrail log");
		if (offset)
			snprintf(buf + strlen(buf), size - strlen(buf), " (at offset %" PRIu64 ")", offset);
		break;
	case MT_E_NOMEM:
	case MT_E_NOTREG:
		snprintf(buf, size, "%s", mt_strerror(err));
		break;
	default:
		snprintf(buf, size, "%s (at offset %" PRIu64 ")", mt_strerror(err), offset);
		break;
	}
	return buf;
}

int signal_number(const char *s)
{
	char *end;
	long v;
	int i;

	if (!strncmp(s, "SIG", 3))
		s += 3;
	if (*s >= '0' && *s <= '9') {
		v = strtol(s, &end, 10);
		return !*end && v > 0 && v <= SIGRTMAX ? (int)v : 0;
	}
	if (!strncmp(s, "RTMIN", 5) || !strncmp(s, "RTMAX", 5)) {
		v = 0;
		if (s[5] == '+' || s[5] == '-') {
			v = strtol(s + 6, &end, 10);
			if (*end || end == s + 6)
				return 0;
			if (s[5] == '-')
				v = -v;
		} else if (s[5]) {
			return 0;
		}
		v += s[3] == 'I' ? SIGRTMIN : SIGRTMAX;
		return v >= SIGRTMIN && v <= SIGRTMAX ? (int)v : 0;
	}
	for (i = 1; i < SIGRTMIN; i++) {
		const char *n = sigabbrev_np(i);

		if (n && !strcmp(n, s))
			return i;
	}
	return 0;
}

const char *signal_name(int sig, char *buf, size_t size)
{
	const char *n = sigabbrev_np(sig);

	if (n)
		snprintf(buf, size, "SIG%s", n);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, size, "SIGRTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, size, "signal %d", sig);
	return buf;
}

struct mt_replay *open_log(const char *path)
{
	struct mt_replay *r;
	uint64_t off = 0;
	char msg[256];
	int err;

	err = mt_replay_open(path, &r, &off);
	if (err < 0)
		die("%s: %s", path, log_error(err, off, msg, sizeof(msg)));
	return r;
}

struct mt_session *open_session(const char *path, const struct mt_session_opts *o)
{
	struct mt_session *s;
	uint64_t off = 0;
	char msg[256];
	int err;

	err = mt_session_open(path, o, &s, &off);
	if (err < 0)
		die("%s: %s", path, log_error(err, off, msg, sizeof(msg)));
	return s;
}

/* The reason a log is cut short, for both forms below. */
static const char *cut_reason(const struct mt_end *e)
{
	switch (e->error) {
	case 0: return "no end record: the program was killed or crashed";
	case MT_E_TRUNCATED: return "partial chunk";
	default: return mt_strerror(e->error);
	}
}

/* "PATH truncated after N events (WHY...)" into buf. */
static void cut_line(const char *path, const struct mt_end *e, char *buf, size_t size)
{
	if (e->error)
		snprintf(buf, size, "%s truncated after %" PRIu64 " events (%s at offset %" PRIu64 ")",
			 path, e->events, cut_reason(e), e->error_offset);
	else
		snprintf(buf, size, "%s truncated after %" PRIu64 " events (%s)",
			 path, e->events, cut_reason(e));
}

char *log_end_text(const char *path, const struct mt_end *e, char *buf, size_t size)
{
	char line[512];

	buf[0] = 0;
	if (e->truncated) {
		cut_line(path, e, line, sizeof(line));
		snprintf(buf, size, "warning: %s", line);
	} else if (e->stop_reason) {
		snprintf(buf, size, "warning: %s: recording stopped early: %s", path, e->stop_reason);
	}
	return buf;
}

void warn_log_end(const char *path, const struct mt_end *e)
{
	char line[512];

	if (e->bounded)
		note("%s: a bounded log: the events before %s were dropped (totals and peak "
		     "carry on from the run's)", path,
		     mt_fmt_duration(line, sizeof(line), e->base_time_ns));

	if (e->stop_reason)
		warning("%s: recording stopped early: %s", path, e->stop_reason);
	if (e->truncated) {
		cut_line(path, e, line, sizeof(line));
		warning("%s", line);
	}
}
