/*
 * config.c - the recorder's settings from MEMTRAIL_* environment variables,
 * the output path (expanded and made absolute by lib/outpath.c), and the
 * removal of libmemtrail.so from LD_PRELOAD so that exec'd children are not
 * recorded (unless following children: see children.c).
 *
 * Nothing here allocates: the recorder may be configured from inside the
 * program's first malloc call, possibly before libc has set up environ (then
 * /proc/self/environ is read into a static buffer).
 *
 * Not for: parsing command-line options (the launcher in viewer/ turns them
 * into these variables).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "outpath.h"
#include "recorder.h"
#include "ring.h"
#include "unwind.h"

extern char **environ;

static char proc_env[65536];
static size_t proc_env_len;
static int proc_env_read;

const char *mt_env(const char *name)
{
	size_t nl = strlen(name);
	if (environ) {
		for (char **e = environ; *e; e++)
			if (strncmp(*e, name, nl) == 0 && (*e)[nl] == '=')
				return *e + nl + 1;
		return NULL;
	}
	if (!proc_env_read) {
		proc_env_read = 1;
		int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n;
			while (proc_env_len < sizeof(proc_env) - 1 &&
			       (n = read(fd, proc_env + proc_env_len,
					 sizeof(proc_env) - 1 - proc_env_len)) > 0)
				proc_env_len += (size_t)n;
			close(fd);
		}
		proc_env[proc_env_len] = '\0';
	}
	for (size_t i = 0; i < proc_env_len; i += strlen(proc_env + i) + 1)
		if (strncmp(proc_env + i, name, nl) == 0 && proc_env[i + nl] == '=')
			return proc_env + i + nl + 1;
	return NULL;
}

static const struct { const char *name; int sig; } signames[] = {
	{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
	{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "PIPE", SIGPIPE },
	{ "ALRM", SIGALRM }, { "TERM", SIGTERM }, { "CHLD", SIGCHLD },
	{ "CONT", SIGCONT }, { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN },
	{ "TTOU", SIGTTOU }, { "URG", SIGURG }, { "XCPU", SIGXCPU },
	{ "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
	{ "WINCH", SIGWINCH }, { "IO", SIGIO }, { "PWR", SIGPWR },
	{ "SYS", SIGSYS },
};

/* A non-negative decimal number taking all of s, or -1. */
static long parse_num(const char *s)
{
	long v = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 100000000)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

int mt_config_signal(const char *s)
{
	long v = parse_num(s);
	if (v > 0 && v < NSIG)
		return (int)v;
	if (strncmp(s, "SIG", 3) == 0)
		s += 3;
	for (size_t i = 0; i < sizeof(signames) / sizeof(signames[0]); i++)
		if (strcmp(s, signames[i].name) == 0)
			return signames[i].sig;
	if (strncmp(s, "RTMIN+", 6) == 0 && (v = parse_num(s + 6)) >= 0 && SIGRTMIN + v <= SIGRTMAX)
		return SIGRTMIN + (int)v;
	if (strcmp(s, "RTMIN") == 0)
		return SIGRTMIN;
	return 0;
}

/* Seconds as "2", "0.5", ".25" into ns; 0 if invalid. */
static uint64_t parse_seconds(const char *s)
{
	uint64_t whole = 0, frac = 0, scale = 1000000000ull;
	const char *p = s;
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > 1000000000ull)
			return 0;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			scale /= 10;
			frac += (uint64_t)(*p - '0') * scale;
		}
	}
	if (*p || p == s)
		return 0;
	return whole * 1000000000ull + frac;
}

/* The program's argv[0] (for %e), from /proc/self/cmdline: no allocation. */
static const char *argv0(char *buf, size_t len)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

int mt_config_expand(const char *pattern, char *out, size_t outlen)
{
	char prog[4096];

	return mt_outpath_resolve(pattern, argv0(prog, sizeof(prog)), (long)getpid(),
				  (int64_t)time(NULL), out, outlen);
}

void mt_config_read(struct mt_config *cfg)
{
	const char *s;
	long v;

	cfg->depth = MT_DEFAULT_DEPTH;
	if ((s = mt_env("MEMTRAIL_DEPTH")) && (v = parse_num(s)) >= 1)
		cfg->depth = v > MT_MAX_DEPTH ? MT_MAX_DEPTH : (unsigned)v;
	cfg->snapshot_signal = 0;
	if ((s = mt_env("MEMTRAIL_SNAPSHOT_SIGNAL")) && *s)
		cfg->snapshot_signal = mt_config_signal(s);
	cfg->leak_check_signal = 0;
	if ((s = mt_env("MEMTRAIL_LEAK_CHECK_SIGNAL")) && *s)
		cfg->leak_check_signal = mt_config_signal(s);
	cfg->snapshot_interval_ns = 0;
	if ((s = mt_env("MEMTRAIL_SNAPSHOT_INTERVAL")) && *s)
		cfg->snapshot_interval_ns = parse_seconds(s);
	/* Anything but "0" keeps the default, which is memcheck's. */
	s = mt_env("MEMTRAIL_FREERES");
	cfg->freeres = !(s && strcmp(s, "0") == 0);
	/* The same for the leak check at exit (leakscan.c). */
	s = mt_env("MEMTRAIL_LEAK_CHECK");
	cfg->leak_check = !(s && strcmp(s, "0") == 0);
	/* And for the drainer process (core.c). */
	s = mt_env("MEMTRAIL_DRAINER");
	cfg->drainer = !(s && strcmp(s, "0") == 0);
	cfg->sample = 0;
	if ((s = mt_env("MEMTRAIL_SAMPLE")) && *s &&
	    (mt_fmt_parse_size(s, &cfg->sample) < 0 || cfg->sample > MT_SAMPLE_MAX)) {
		mt_say("MEMTRAIL_SAMPLE is a size such as 512k, at most 1T: recording every "
		       "allocation", NULL);
		cfg->sample = 0;
	}
	cfg->max_size = 0;
	if ((s = mt_env("MEMTRAIL_MAX_SIZE")) && *s) {
		if (mt_fmt_parse_size(s, &cfg->max_size) < 0 || cfg->max_size < MT_RING_MIN_SIZE) {
			mt_say("MEMTRAIL_MAX_SIZE is a size of at least 1M: the log is not bounded",
			       NULL);
			cfg->max_size = 0;
		} else if (cfg->sample) {
			mt_say("MEMTRAIL_MAX_SIZE and MEMTRAIL_SAMPLE do not go together: "
			       "the log is not bounded", NULL);
			cfg->max_size = 0;
		}
	}
	cfg->sample_seed = -1;
	if ((s = mt_env("MEMTRAIL_SAMPLE_SEED")) && *s)
		cfg->sample_seed = parse_num(s);
	cfg->unwind = mt_unwind_parse(mt_env("MEMTRAIL_UNWIND"));
	if (cfg->unwind < 0) {
		mt_say("MEMTRAIL_UNWIND is incremental, full or check: unwinding incrementally", NULL);
		cfg->unwind = MT_UNWIND_INCREMENTAL;
	}
	s = mt_env("MEMTRAIL_OUTPUT");
	if (!s || !*s)
		s = "memtrail.data";
	if (mt_config_expand(s, cfg->output, sizeof(cfg->output)) < 0)
		cfg->output[0] = '\0';
	/* MEMTRAIL_FOLLOW_CHILDREN, and then this process's own file. */
	mt_children_config(cfg);
}

/* Is the LD_PRELOAD entry [s, s+len) this library? */
static int is_self(const char *s, size_t len)
{
	static const char me[] = "libmemtrail.so";
	size_t ml = sizeof(me) - 1;
	if (len < ml || memcmp(s + len - ml, me, ml) != 0)
		return 0;
	return len == ml || s[len - ml - 1] == '/';
}

void mt_config_strip_preload(void)
{
	if (!environ)
		return;
	for (char **e = environ; *e; e++) {
		if (strncmp(*e, "LD_PRELOAD=", 11) != 0)
			continue;
		/* Entries are separated by spaces or colons; rewrite in place,
		 * keeping the others in their order. */
		char *v = *e + 11, *out = v;
		const char *p = v;
		while (*p) {
			while (*p == ' ' || *p == ':')
				p++;
			const char *start = p;
			while (*p && *p != ' ' && *p != ':')
				p++;
			size_t len = (size_t)(p - start);
			if (!len || is_self(start, len))
				continue;
			if (out != v)
				*out++ = ':';
			memmove(out, start, len);
			out += len;
		}
		*out = '\0';
		if (out == v) {
			/* Nothing left: drop the variable itself. */
			char **d = e;
			do
				d[0] = d[1];
			while (*d++);
		}
		return;
	}
}
