/*
 * cmd-record.c - `memtrail record`: runs a program with libmemtrail.so
 * preloaded, waits for it, then replays its log for a one-line summary.
 *
 * How: every check that can fail for a usage reason (options, the program,
 * the output directory) happens before anything runs. The child expands the
 * -o placeholders itself (it knows its own pid, which exec keeps), sends the
 * concrete path to the parent through a close-on-exec pipe, and execs; if
 * exec fails it sends errno after the path. The parent forwards SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT when they were sent to it alone (a terminal's
 * Ctrl-C already reaches the whole process group), and exits with the
 * program's status. With --follow-children it also lists the children's
 * logs FILE.<pid> after its closing line. With --view the program gets
 * its own process group and its output goes to a file while the viewer
 * (cmd-view.c) follows the log in the terminal; quitting the viewer leaves
 * the program running unless --kill-on-quit.
 *
 * Not here: the recording itself (recorder/), the summary figures
 * (lib/summary.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "error.h"
#include "fmt.h"
#include "format.h"
#include "outpath.h"
#include "replay.h"
#include "ring.h"
#include "session.h"
#include "summary.h"
#include "util.h"

const char cmd_record_usage[] =
	"usage: memtrail record [-o FILE] [--depth N] [--follow-children]\n"
	"                       [--snapshot-signal SIG] [--snapshot-interval SECONDS]\n"
	"                       [--leak-check-signal SIG] [--keep-runtime]\n"
	"                       [--sample BYTES] [--max-size SIZE]\n"
	"                       [--view [-O FILE] [--kill-on-quit]] [--] PROGRAM [ARGS...]\n"
	"\n"
	"Runs PROGRAM with the memtrail recorder preloaded, writes the event log\n"
	"to FILE (default memtrail.data) and exits with PROGRAM's exit status.\n"
	"Leaked means still allocated when the program ends: at exit(), after\n"
	"its atexit handlers and destructors, and after the C and C++ runtimes\n"
	"freed their own memory (glibc's __libc_freeres, libstdc++'s\n"
	"__gnu_cxx::__freeres), as valgrind memcheck counts it. The runtimes\n"
	"keep it (counted as leaked) while other threads still run at exit,\n"
	"and at _exit, a fatal signal or an exec; see memtrail(1). At a normal\n"
	"exit the leaks are classified as memcheck's --leak-check=full does.\n"
	"\n"
	"  -o FILE                  the log; %p pid, %e program name, %t unix time,\n"
	"                           %n smallest counter whose file does not exist,\n"
	"                           %% a percent sign\n"
	"  --depth N                frames kept per stack, 1 to 256 (default 64)\n"
	"  --follow-children        record every forked or exec'd child too, each\n"
	"                           into FILE.PID (FILE.PID.K for the K-th program\n"
	"                           a process execs); after the closing line, one\n"
	"                           line per child log, in the order they began:\n"
	"                           memtrail: child PID (PROGRAM): N allocations, ...,\n"
	"                           FILE.PID written (SIZE)\n"
	"  --snapshot-signal SIG    take a snapshot on signal SIG (e.g. USR2)\n"
	"  --snapshot-interval S    take a snapshot every S seconds (e.g. 0.5)\n"
	"  --leak-check-signal SIG  on signal SIG, a snapshot that also classifies\n"
	"                           what is live (definitely, indirectly, possibly\n"
	"                           lost, still reachable), as at exit\n"
	"  --keep-runtime           leave the runtimes' memory allocated at exit\n"
	"                           (counted as leaked, as memcheck's\n"
	"                           --run-libc-freeres=no --run-cxx-freeres=no);\n"
	"                           MEMTRAIL_FREERES=0 does the same\n"
	"  --view                   watch the run live in the terminal (memtrail view\n"
	"                           --follow on the log) while PROGRAM runs with its\n"
	"                           stdout and stderr in a file and its stdin from\n"
	"                           /dev/null; quitting the viewer leaves PROGRAM\n"
	"                           running and recording\n"
	"  --sample BYTES           record one allocation, with its stack, per BYTES\n"
	"                           allocated on average (e.g. 512k; k, m, g are\n"
	"                           powers of 1024), drawn at random as jemalloc\n"
	"                           and tcmalloc do; reports weigh each by the odds\n"
	"                           of its draw, so figures of bytes, blocks and\n"
	"                           calls are unbiased estimates (BYTES at most 1t);\n"
	"                           MEMTRAIL_SAMPLE=BYTES does the same,\n"
	"                           MEMTRAIL_SAMPLE_SEED=N repeats the draws\n"
	"  --max-size SIZE          a bounded log, for a program left running for\n"
	"                           days: FILE.seg1, FILE.seg2, ... in place of FILE,\n"
	"                           a new one past about SIZE/4, the oldest deleted\n"
	"                           while they pass SIZE (at least 1M; e.g. 100M),\n"
	"                           so they never hold more than SIZE and a segment;\n"
	"                           report, view and dump FILE read what is kept,\n"
	"                           with the run's totals and peak; not with\n"
	"                           --sample; MEMTRAIL_MAX_SIZE=SIZE does the same\n"
	"  -O, --program-output FILE\n"
	"                           with --view: PROGRAM's output (default memtrail.out)\n"
	"  --kill-on-quit           with --view: quitting the viewer ends PROGRAM\n"
	"                           (SIGTERM), then memtrail closes as usual\n"
	"  -h, --help               this help\n"
	"\n"
	"MEMTRAIL_UNWIND=incremental|full|check chooses how stacks are captured: the\n"
	"recorder's own walker reusing unchanged outer frames (the default), libunwind\n"
	"on every event, or both compared (memtrail(1)).\n"
	"MEMTRAIL_DRAINER=0 makes PROGRAM drain its own event rings instead of\n"
	"memtrail's drainer process (memtrail-drain), which keeps the live-block table\n"
	"out of PROGRAM's memory and writes the rest of the log if PROGRAM is killed.\n";

enum { O_OUT = 1, O_DEPTH, O_FOLLOW, O_SIGNAL, O_INTERVAL, O_KEEP, O_VIEW, O_VIEW_OUT,
       O_KILL, O_HELP, O_LEAK_SIGNAL, O_SAMPLE, O_MAX_SIZE };

static const struct opt options[] = {
	{ "output", 'o', 1, O_OUT },
	{ "depth", 0, 1, O_DEPTH },
	{ "follow-children", 0, 0, O_FOLLOW },
	{ "snapshot-signal", 0, 1, O_SIGNAL },
	{ "leak-check-signal", 0, 1, O_LEAK_SIGNAL },
	{ "snapshot-interval", 0, 1, O_INTERVAL },
	{ "keep-runtime", 0, 0, O_KEEP },
	{ "sample", 0, 1, O_SAMPLE },
	{ "max-size", 0, 1, O_MAX_SIZE },
	{ "view", 0, 0, O_VIEW },
	{ "program-output", 'O', 1, O_VIEW_OUT },
	{ "kill-on-quit", 0, 0, O_KILL },
	{ "help", 'h', 0, O_HELP },
	{ NULL, 0, 0, 0 },
};

static volatile pid_t child_pid;

static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	/* si_code > 0: sent by the kernel (the terminal), already delivered. */
	if (child_pid > 0 && si->si_code <= 0)
		kill(child_pid, sig);
}

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void set_forwarding(int on)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	if (on) {
		sa.sa_sigaction = forward;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
	} else {
		sa.sa_handler = SIG_DFL;
	}
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &sa, NULL);
}

/* "1.5", "2", ".25": seconds > 0 as the recorder reads them. */
static int valid_seconds(const char *s)
{
	const char *p = s;
	int digits = 0, nonzero = 0;

	for (; *p >= '0' && *p <= '9'; p++, digits++)
		nonzero |= *p != '0';
	if (digits > 9)
		return 0;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, digits++)
			nonzero |= *p != '0';
	return !*p && digits && nonzero;
}

/* Where PROGRAM is, as execvp would find it; NULL and errno if nowhere. */
static char *find_program(const char *prog)
{
	const char *path = getenv("PATH"), *p, *colon;
	struct stat st;
	int saved = ENOENT;
	char *cand;

	if (strchr(prog, '/')) {
		if (stat(prog, &st) < 0)
			return NULL;
		if (S_ISDIR(st.st_mode) || access(prog, X_OK) < 0) {
			errno = S_ISDIR(st.st_mode) ? EISDIR : EACCES;
			return NULL;
		}
		return xstrdup(prog);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = colon + 1) {
		colon = strchr(p, ':');
		if (colon == p || !*p)
			cand = xasprintf("./%s", prog);
		else
			cand = xasprintf("%.*s/%s", colon ? (int)(colon - p) : (int)strlen(p), p, prog);
		if (stat(cand, &st) == 0 && !S_ISDIR(st.st_mode)) {
			if (access(cand, X_OK) == 0)
				return cand;
			saved = EACCES;
		}
		free(cand);
		if (!colon)
			break;
	}
	errno = saved;
	return NULL;
}

/*
 * libmemtrail.so beside the program (the build directory) or where `make
 * install` puts it (PREFIX/lib/memtrail, the program being PREFIX/bin/memtrail).
 */
static char *find_recorder(void)
{
	static const char *const rel[] = { "libmemtrail.so", "../lib/memtrail/libmemtrail.so" };
	char exe[PATH_MAX], *slash, *cand, *real;
	ssize_t n;
	size_t i;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		die("cannot find the memtrail program's directory: %s", strerror(errno));
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		cand = xasprintf("%s/%s", exe, rel[i]);
		real = realpath(cand, NULL);
		free(cand);
		if (real && access(real, R_OK) == 0)
			return real;
		free(real);
	}
	die("cannot find libmemtrail.so in %s or %s/../lib/memtrail", exe, exe);
}

/* Appends s to the growing string *out. */
static void cat(char **out, size_t *len, const char *s, size_t n)
{
	char *p = realloc(*out, *len + n + 1);

	if (!p)
		die("out of memory");
	memcpy(p + *len, s, n);
	*len += n;
	p[*len] = 0;
	*out = p;
}

/* The log's path for process pid running prog (lib/outpath.h), absolute. */
static char *output_path(const char *tmpl, pid_t pid, const char *prog)
{
	char path[4096];

	if (mt_outpath_resolve(tmpl, prog, (long)pid, (int64_t)time(NULL), path, sizeof(path)) < 0)
		die_usage("-o: '%s' gives a path too long (or the working directory is unknown)", tmpl);
	return xstrdup(path);
}

/* Doubles every '%' so the recorder, which also expands, keeps the path. */
static char *escape_percent(const char *s)
{
	char *out = NULL;
	size_t len = 0;

	cat(&out, &len, "", 0);
	for (; *s; s++) {
		cat(&out, &len, s, 1);
		if (*s == '%')
			cat(&out, &len, "%", 1);
	}
	return out;
}

/*
 * The one rule for the output (memtrail(1), FILES): a regular file that
 * the recorder creates or truncates, in an existing directory it may write
 * to, or /dev/null to discard the log. Anything else is refused here,
 * before the program runs: a missing or read-only directory, a directory,
 * a symbolic link (the recorder never follows one), a FIFO, a socket, a
 * device such as /dev/full. Dies (usage, exit 2) with the reason.
 */
static void check_output(const char *path)
{
	const char *slash = strrchr(path, '/');
	struct stat st, null;
	char *dir;

	dir = slash ? xasprintf("%.*s", slash == path ? 1 : (int)(slash - path), path) : xstrdup(".");
	if (stat(dir, &st) < 0)
		die_usage("cannot write %s: %s: %s", path, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die_usage("cannot write %s: %s is not a directory", path, dir);
	if (access(dir, W_OK | X_OK) < 0)
		die_usage("cannot write %s: %s: %s", path, dir, strerror(errno));
	free(dir);
	if (lstat(path, &st) < 0)
		return;              /* a new file */
	if (S_ISDIR(st.st_mode))
		die_usage("cannot write %s: it is a directory", path);
	if (S_ISLNK(st.st_mode))
		die_usage("cannot write %s: it is a symbolic link", path);
	if (S_ISCHR(st.st_mode) && stat("/dev/null", &null) == 0 && st.st_rdev == null.st_rdev)
		return;
	if (!S_ISREG(st.st_mode))
		die_usage("cannot write %s: not a regular file", path);
	if (access(path, W_OK) < 0)
		die_usage("cannot write %s: %s", path, strerror(errno));
}

static void set_env(const char *name, const char *value)
{
	if (setenv(name, value, 1) < 0)
		die("cannot set %s: %s", name, strerror(errno));
}

/*
 * Without --follow-children, the recorder (in the program and in its
 * forked children) notes each program they exec in FILE.execs, if that
 * file exists (recorder/core.c). The child makes it empty before it execs
 * the program (the program may exec at once); a failure only costs the
 * hint.
 */
static void exec_note_new(const char *log)
{
	char *path = xasprintf("%s.execs", log);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd >= 0)
		close(fd);
	free(path);
}

/*
 * The log's path as the user gave it: the recorder gets it absolute
 * (lib/outpath.h), the messages show a relative -o relative again.
 */
static char *shown_path(char *abs, const char *tmpl)
{
	char cwd[4096];
	size_t n;

	if (tmpl[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return abs;
	n = strlen(cwd);
	if (strncmp(abs, cwd, n) || abs[n] != '/' || !abs[n + 1])
		return abs;
	memmove(abs, abs + n + 1, strlen(abs + n + 1) + 1);
	return abs;
}

/* In the child: never returns. out >= 0: --view's output file. */
static void run_child(int fd, const char *tmpl, const char *prog_path, char **argv,
		      const char *lib, int follow, int out)
{
	const char *old = getenv("LD_PRELOAD");
	char *path, *esc, num[32];
	int err, in;

	if (out >= 0) {
		/* The terminal is the viewer's: the program gets none, and its
		 * own process group, so the terminal's Ctrl-C is not for it. */
		in = open("/dev/null", O_RDONLY);
		if (in < 0 || dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
		    dup2(out, STDERR_FILENO) < 0)
			_exit(127);
		setpgid(0, 0);
	}
	if (follow) {
		/* This pid writes FILE; every other process FILE.<pid>. */
		snprintf(num, sizeof(num), "%ld", (long)getpid());
		set_env("MEMTRAIL_ROOT_PID", num);
		unsetenv("MEMTRAIL_IMAGE");
	}
	path = output_path(tmpl, getpid(), argv[0]);
	if (write(fd, path, strlen(path) + 1) < 0)
		_exit(127);
	esc = escape_percent(path);
	set_env("MEMTRAIL_OUTPUT", esc);
	if (!follow)
		exec_note_new(path);
	set_env("LD_PRELOAD", old && *old ? xasprintf("%s:%s", lib, old) : lib);
	execv(prog_path, argv);
	err = errno;
	if (write(fd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

/* Reads the whole pipe: the path, NUL, then errno if exec failed. */
static char *read_child(int fd, int *exec_errno)
{
	char *buf = NULL;
	size_t len = 0, plen;
	char tmp[512];
	ssize_t n;

	cat(&buf, &len, "", 0);
	for (;;) {
		n = read(fd, tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		cat(&buf, &len, tmp, (size_t)n);
	}
	plen = strlen(buf);
	*exec_errno = 0;
	if (len >= plen + 1 + sizeof(int))
		memcpy(exec_errno, buf + plen + 1, sizeof(int));
	return buf;
}

/* The bytes of a bounded log's segments on disk (lib/ring.h); 0: none. */
static uint64_t ring_bytes(const char *path)
{
	uint64_t *v, n = 0;
	size_t k;
	struct stat st;

	if (mt_ring_list(path, &v, &k) < 0)
		return 0;
	for (size_t i = 0; i < k; i++) {
		char name[PATH_MAX];

		if (mt_ring_name(path, v[i], name, sizeof(name)) == 0 && stat(name, &st) == 0)
			n += (uint64_t)st.st_size;
	}
	free(v);
	return n;
}

/*
 * One closing line for the log at path, after `who` ("" for the program,
 * "child PID (PROG): " for a child): from the END record when the log ended
 * cleanly (only the chunk headers and the last chunk are read,
 * mt_replay_end_totals), else from a session that counts the run's figures
 * alone (a recording that stopped early says why; one cut short warns;
 * a sampled one, whose END counts only the recorded blocks, gives the
 * estimates and says so). Returns 0, or -1 after a warning when the log cannot be read at all.
 */
static int closing_line(const char *path, const char *who, struct mt_replay *r)
{
	char a[32], peak[32], leak[32], blocks[32], size[32], lost[64] = "", smp[64] = "";
	const char *sampling = getenv("MEMTRAIL_SAMPLE");
	struct mt_session_opts so = { .figures_only = 1 };
	struct mt_leak_totals lk;
	int classified = 0;
	const struct mt_summary_info *i;
	struct mt_summary *s = NULL;
	struct mt_session *ses = NULL;
	struct mt_totals tot;
	struct stat st;
	unsigned how;
	int err, stopped;

	if (!(sampling && *sampling) &&
	    mt_replay_end_leaks(r, &how, &tot, &classified, &lk) == 1 && how != MT_END_STOPPED) {
		stopped = 0;
	} else {
		err = mt_session_open(path, &so, &ses, NULL);
		if (err == 0 && !(s = mt_summary_new()))
			die("out of memory");
		if (err == 0)
			err = mt_summary_of_session(s, ses);
		if (err < 0) {
			warning("%s: %s", path, mt_strerror(err));
			mt_summary_free(s);
			mt_session_free(ses);
			return -1;
		}
		warn_log_end(path, mt_session_end(ses));
		i = mt_summary_info(s);
		tot.allocations = i->allocations;
		tot.peak_bytes = i->peak_bytes;
		tot.leaked_bytes = i->leaked_bytes;
		tot.leaked_blocks = i->leaked_blocks;
		stopped = i->stopped;
		classified = i->classified;
		lk = i->leaks;
		if (i->sample)
			snprintf(smp, sizeof(smp), " (sampled every %s: estimates)",
				 mt_fmt_size_short(a, sizeof(a), i->sample));
		mt_summary_free(s);
		mt_session_free(ses);
	}
	if (stat(path, &st) < 0)
		st.st_size = (off_t)ring_bytes(path);
	/* the leak check at exit, when the recorder could make it */
	if (classified && !stopped) {
		char d[32];

		snprintf(lost, sizeof(lost), " (%s definitely lost)",
			 mt_fmt_size(d, sizeof(d), lk.bytes[MT_LEAK_DEFINITE]));
	}
	note("%s%s allocations, %s peak, %s %s in %s blocks%s%s, %s written (%s)", who,
	     mt_fmt_count(a, sizeof(a), tot.allocations),
	     mt_fmt_size(peak, sizeof(peak), tot.peak_bytes),
	     mt_fmt_size(leak, sizeof(leak), tot.leaked_bytes),
	     stopped ? "live when recording stopped" : "leaked",
	     mt_fmt_count(blocks, sizeof(blocks), tot.leaked_blocks), lost, smp,
	     path, mt_fmt_size(size, sizeof(size), (uint64_t)st.st_size));
	return 0;
}

/* The program's closing line (see closing_line). */
static void report(const char *path, pid_t pid, const char *prog)
{
	struct mt_replay *r;
	struct stat st;
	uint64_t off = 0;
	char msg[256];
	int err;

	/* The recorder writes only a regular file and says so when it cannot;
	 * opening anything else here (a FIFO, a symlink planted to one) could
	 * block for ever or read what is not ours: no closing line. */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return;
	err = mt_replay_open(path, &r, &off);
	if (err == MT_E_IO && errno == ENOENT) {
		warning("%s wrote no log to %s (a static or setuid program, or LD_PRELOAD "
			"removed from its environment?)", prog, path);
		return;
	}
	if (err < 0) {
		warning("%s: %s", path, log_error(err, off, msg, sizeof(msg)));
		return;
	}
	if (mt_replay_header(r)->pid != (uint32_t)pid)
		warning("%s was not written by this run of %s (no log recorded)", path, prog);
	else
		(void)closing_line(path, "", r);
	mt_replay_free(r);
}

/* ---- --view ------------------------------------------------------------------------ */

/*
 * The recorder's drainer processes (recorder/core.c: memtrail-drain and
 * its memtrail-spare) end up our children: we are a subreaper, the
 * drainer is an orphan from the start, and its spare (its child) becomes
 * one when the drainer ends. Each is waited
 * for, up to 10 s, so that the log is whole when it is read (a program
 * killed by SIGKILL leaves its drainer writing the rest) and its CPU time
 * counts as the run's. Other orphans of the program are left alone.
 */
static void reap_drainers(void)
{
	struct timespec nap = { 0, 1000000 };
	pid_t self = getpid();

	for (int i = 0; i < 10000; i++) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		int left = 0;

		if (!d)
			return;
		while ((e = readdir(d))) {
			char path[64], buf[512], *c;
			pid_t pid = (pid_t)atoi(e->d_name), ppid;
			FILE *f;

			if (pid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
			if (!(f = fopen(path, "r")))
				continue;
			c = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
			fclose(f);
			if (!c || (strncmp(strchr(buf, '(') + 1, "memtrail-drain)", 15) != 0 &&
				   strncmp(strchr(buf, '(') + 1, "memtrail-spare)", 15) != 0) ||
			    sscanf(c + 2, "%*c %d", &ppid) != 1 || ppid != self)
				continue;
			/* (one reaped may leave a spare that was its child,
			 * now ours: another pass finds it) */
			left++;
			(void)waitpid(pid, NULL, WNOHANG);
		}
		closedir(d);
		if (!left)
			return;
		nanosleep(&nap, NULL);
	}
}

/* Has pid ended? (It stays a zombie for the caller's waitpid.) */
static int ended(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid != 0;
}

/*
 * --view: once the recorder in pid has written the log's header, the
 * viewer follows the log until the user quits it. Returns 1 when the
 * program has ended, or was ended (--kill-on-quit), for the usual closing;
 * 0 when it goes on running, as a line says.
 */
static int watch(const char *path, pid_t pid, const char *prog, const char *out,
		 int kill_on_quit)
{
	struct timespec nap = { 0, 20000000 };
	struct mt_replay *r;
	int ours = 0;

	/* the recorder writes the header as the program starts (10 s at most:
	 * a program that never loads it gets the usual warning at its end) */
	for (int i = 0; i < 500 && !ours; i++) {
		if (mt_replay_open(path, &r, NULL) == 0) {
			ours = mt_replay_header(r)->pid == (uint32_t)pid;
			mt_replay_free(r);
		}
		if (!ours && ended(pid))
			break;
		if (!ours)
			nanosleep(&nap, NULL);
	}
	if (!ours) {
		if (!ended(pid))
			warning("%s wrote no log to %s yet: waiting for it to end", prog, path);
		return 1;
	}
	if (kill_on_quit)
		view_quit_kill = pid;
	(void)view_run(path, 1);
	view_quit_kill = 0;
	if (ended(pid))
		return 1;
	if (kill_on_quit) {
		kill(pid, SIGTERM);
		return 1;
	}
	note("%s goes on running (pid %ld), recording into %s; its output goes to %s", prog,
	     (long)pid, path, out);
	return 0;
}

/* ---- programs that ran unrecorded ------------------------------------------------ */

/*
 * After the run: "PROG ran PATH (and N others), not recorded: ..." when the
 * program, or a child of it, exec'd programs that were not followed.
 * Names of programs that do not exist (a failed exec) are left out.
 */
static void exec_note_report(char *execs, const char *prog)
{
	char line[4096], *first = NULL;
	size_t n = 0;
	FILE *f;

	if (!execs)
		return;
	f = fopen(execs, "r");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!*line || (strchr(line, '/') && access(line, X_OK) < 0))
			continue;
		if (!first)
			first = xstrdup(line);
		n++;
	}
	if (f)
		fclose(f);
	unlink(execs);
	free(execs);
	if (!n)
		return;
	if (n == 1)
		note("%s ran %s, which was not recorded: --follow-children records it too", prog,
		     first);
	else
		note("%s ran %s and %zu other program%s, which were not recorded: "
		     "--follow-children records them too", prog, first, n - 1, n > 2 ? "s" : "");
	free(first);
}

/* ---- --follow-children: the children's logs ---------------------------------- */

struct child_log {
	char *path;
	uint64_t start;       /* header's start time */
	uint32_t pid;
	char *prog;
};

static int child_cmp(const void *a, const void *b)
{
	const struct child_log *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Is name FILE.<digits> or FILE.<digits>.<digits> (base = FILE's name)? */
static int child_name(const char *name, const char *base)
{
	size_t bl = strlen(base);
	const char *p;
	int dots = 0;

	if (strncmp(name, base, bl) != 0 || name[bl] != '.')
		return 0;
	for (p = name + bl + 1; *p; p++) {
		if (*p == '.') {
			if (p[-1] == '.' || !p[1] || ++dots > 1)
				return 0;
		} else if (*p < '0' || *p > '9') {
			return 0;
		}
	}
	return p > name + bl + 1;
}

/* One line for a child's log (see closing_line). */
static void child_line(const struct child_log *c)
{
	char who[64 + PATH_MAX], msg[256];
	struct mt_replay *r;
	uint64_t off = 0;
	int err;

	err = mt_replay_open(c->path, &r, &off);
	if (err < 0) {
		warning("%s: %s", c->path, log_error(err, off, msg, sizeof(msg)));
		return;
	}
	snprintf(who, sizeof(who), "child %" PRIu32 " (%s): ", c->pid, c->prog);
	(void)closing_line(c->path, who, r);
	mt_replay_free(r);
}

/*
 * Lists the logs FILE.<pid>[.<k>] (or their segments, --max-size) next to
 * path that this run wrote (their
 * header's start time is not before since_ns, when the program was
 * started), in the order they began.
 */
static void report_children(const char *path, uint64_t since_ns)
{
	struct child_log *v = NULL;
	size_t cut = 0, n = 0, cap = 0, j, k;
	const char *base;
	struct dirent *de;
	char *dir;
	DIR *d;

	for (j = 0; path[j]; j++)
		if (path[j] == '/')
			cut = j + 1;      /* just after the last slash */
	base = path + cut;
	dir = cut ? xasprintf("%.*s", cut == 1 ? 1 : (int)(cut - 1), path) : xstrdup(".");
	d = opendir(dir);
	if (!d) {
		warning("cannot list the children's logs in %s: %s", dir, strerror(errno));
		free(dir);
		return;
	}
	while ((de = readdir(d))) {
		struct mt_replay *r;
		const struct mt_header *h;
		const char *prog;
		char *cpath;

		const char *seg = strstr(de->d_name, MT_RING_SUFFIX);
		char *lname;
		size_t i;

		/* a bounded log's segment stands for its log (lib/ring.h) */
		while (seg && strstr(seg + 1, MT_RING_SUFFIX))
			seg = strstr(seg + 1, MT_RING_SUFFIX);
		lname = seg ? xasprintf("%.*s", (int)(seg - de->d_name), de->d_name) : NULL;
		if (lname && !mt_ring_number(lname, de->d_name)) {
			free(lname);
			lname = NULL;
		}
		if (!child_name(lname ? lname : de->d_name, base)) {
			free(lname);
			continue;
		}
		cpath = xasprintf("%.*s%s", (int)cut, path, lname ? lname : de->d_name);
		free(lname);
		for (i = 0; i < n && strcmp(v[i].path, cpath); i++)
			;
		if (i < n) {
			free(cpath);      /* another segment of a log listed */
			continue;
		}
		if (mt_replay_open(cpath, &r, NULL) < 0) {
			free(cpath);
			continue;
		}
		h = mt_replay_header(r);
		if (h->start_realtime_ns < since_ns) {
			mt_replay_free(r);      /* an earlier run's */
			free(cpath);
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				die("out of memory");
		}
		prog = h->argc && h->argv[0][0] ? h->argv[0] : "?";
		if (strrchr(prog, '/'))
			prog = strrchr(prog, '/') + 1;
		v[n].path = cpath;
		v[n].start = h->start_realtime_ns;
		v[n].pid = h->pid;
		v[n].prog = xstrdup(prog);
		n++;
		mt_replay_free(r);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), child_cmp);
	for (k = 0; k < n; k++) {
		child_line(&v[k]);
		free(v[k].path);
		free(v[k].prog);
	}
	free(v);
	free(dir);
}

int cmd_record(int argc, char **argv)
{
	const char *tmpl = NULL, *arg, *prog;
	char num[32], sig[32], *prog_path, *lib, *path, *execs;
	struct opt_state st;
	int id, fds[2], status, code, exec_errno, follow = 0, view = 0, kill_on_quit = 0, out = -1;
	const char *view_out = NULL;
	uint64_t sample, max_size;
	struct timespec began;
	pid_t pid;

	opt_init(&st, "record", argc, argv, 1);
	while ((id = opt_next(&st, options, &arg)) != OPT_END) {
		switch (id) {
		case OPT_ARG:
			st.i--;
			goto program;
		case O_OUT:
			if (!*arg)
				die_usage("-o: empty file name");
			tmpl = arg;
			break;
		case O_DEPTH:
			snprintf(num, sizeof(num), "%ld", opt_long(&st, arg, 1, MT_MAX_DEPTH));
			set_env("MEMTRAIL_DEPTH", num);
			break;
		case O_FOLLOW:
			set_env("MEMTRAIL_FOLLOW_CHILDREN", "1");
			break;
		case O_SIGNAL:
			id = signal_number(arg);
			if (!id || id == SIGKILL || id == SIGSTOP)
				die_usage("--snapshot-signal: '%s' is not a signal that can be caught", arg);
			snprintf(num, sizeof(num), "%d", id);
			set_env("MEMTRAIL_SNAPSHOT_SIGNAL", num);
			break;
		case O_LEAK_SIGNAL:
			id = signal_number(arg);
			if (!id || id == SIGKILL || id == SIGSTOP)
				die_usage("--leak-check-signal: '%s' is not a signal that can be caught",
					  arg);
			snprintf(num, sizeof(num), "%d", id);
			set_env("MEMTRAIL_LEAK_CHECK_SIGNAL", num);
			break;
		case O_INTERVAL:
			if (!valid_seconds(arg))
				die_usage("--snapshot-interval: '%s' is not a number of seconds > 0", arg);
			set_env("MEMTRAIL_SNAPSHOT_INTERVAL", arg);
			break;
		case O_KEEP:
			set_env("MEMTRAIL_FREERES", "0");
			break;
		case O_SAMPLE:
			if (mt_fmt_parse_size(arg, &sample) < 0 || sample > MT_SAMPLE_MAX)
				die_usage("--sample: '%s' is not a size such as 512k, at most 1T", arg);
			snprintf(num, sizeof(num), "%" PRIu64, sample);
			set_env("MEMTRAIL_SAMPLE", num);
			break;
		case O_MAX_SIZE:
			if (mt_fmt_parse_size(arg, &max_size) < 0 || max_size < MT_RING_MIN_SIZE)
				die_usage("--max-size: '%s' is not a size of at least 1M", arg);
			snprintf(num, sizeof(num), "%" PRIu64, max_size);
			set_env("MEMTRAIL_MAX_SIZE", num);
			break;
		case O_VIEW:
			view = 1;
			break;
		case O_VIEW_OUT:
			if (!*arg)
				die_usage("-O: empty file name");
			view_out = arg;
			break;
		case O_KILL:
			kill_on_quit = 1;
			break;
		case O_HELP:
			help_command("record");
		}
	}
program:
	if (st.i >= st.argc)
		die_usage("record: no program given (memtrail record [options] PROGRAM [ARGS...])");
	prog = st.argv[st.i];
	prog_path = find_program(prog);
	if (!prog_path)
		die_usage("%s: %s", prog, errno == ENOENT && !strchr(prog, '/')
			  ? "command not found" : strerror(errno));
	if (!tmpl)
		tmpl = getenv("MEMTRAIL_OUTPUT");
	if (!tmpl || !*tmpl)
		tmpl = "memtrail.data";
	/* The directory part with this process's pid: placeholders there are rare. */
	path = output_path(tmpl, getpid(), prog);
	check_output(path);
	free(path);
	lib = find_recorder();
	arg = getenv("MEMTRAIL_FOLLOW_CHILDREN");
	follow = arg && *arg && strcmp(arg, "0") != 0;
	arg = getenv("MEMTRAIL_SAMPLE");
	if (arg && *arg && (arg = getenv("MEMTRAIL_MAX_SIZE")) && *arg)
		die_usage("--max-size and --sample do not go together");
	if ((view_out || kill_on_quit) && !view)
		die_usage("%s goes with --view", view_out ? "-O" : "--kill-on-quit");
	if (view) {
		if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
			die_usage("--view needs a terminal");
		if (!view_out)
			view_out = "memtrail.out";
		out = open(view_out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (out < 0)
			die_usage("cannot write %s: %s", view_out, strerror(errno));
	}

	if (pipe2(fds, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	fflush(NULL);
	/* with --view the viewer takes the signals (the program has its own
	 * process group) */
	if (!view)
		set_forwarding(1);
	clock_gettime(CLOCK_REALTIME, &began);
	/* the recorder's drainers come to us (reap_drainers) */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		run_child(fds[1], tmpl, prog_path, st.argv + st.i, lib, follow, out);
	}
	child_pid = pid;
	close(fds[1]);
	if (out >= 0)
		close(out);           /* the program's now */
	path = shown_path(read_child(fds[0], &exec_errno), tmpl);
	close(fds[0]);
	execs = follow ? NULL : xasprintf("%s.execs", path);
	if (view && !exec_errno && !watch(path, pid, prog, view_out, kill_on_quit)) {
		free(execs);
		free(path);
		free(lib);
		free(prog_path);
		return 0;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	}
	set_forwarding(0);
	reap_drainers();
	if (exec_errno) {
		if (execs)
			unlink(execs);
		die("cannot run %s: %s", prog, strerror(exec_errno));
	}
	if (WIFSIGNALED(status)) {
		note("%s killed by %s", prog, signal_name(WTERMSIG(status), sig, sizeof(sig)));
		code = 128 + WTERMSIG(status);
	} else {
		code = WEXITSTATUS(status);
	}
	report(path, pid, prog);
	exec_note_report(execs, prog);
	if (follow)
		report_children(path, (uint64_t)began.tv_sec * 1000000000ull +
				(uint64_t)began.tv_nsec);
	free(path);
	free(lib);
	free(prog_path);
	return code;
}
