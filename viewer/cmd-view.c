/*
 * cmd-view.c - `memtrail view [FILE]`: the interactive timeline and call-tree
 * browser (SPEC section 5). This file owns the terminal: it loads the log
 * before curses starts (so a missing or corrupt file is a plain error
 * message), sets curses up, runs the key loop, and puts the terminal back on
 * q, on Ctrl-C and other fatal signals, and on errors. With --follow (and
 * for record --view) the key loop also looks at the log every FOLLOW_MS,
 * waiting for keys in between, so that an idle run costs no CPU.
 *
 * Not here: the state (view_app.c and the view_* models), drawing
 * (view_draw.c), the keys (view_keys.c).
 */
#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "progress.h"
#include "error.h"
#include "replay.h"
#include "util.h"
#include "view_app.h"
#include "view_draw.h"
#include "view_keys.h"

const char cmd_view_usage[] =
	"usage: memtrail view [--follow] [FILE]\n"
	"\n"
	"Browse a recording (default memtrail.data) in the terminal: live heap\n"
	"over time at the top, the call tree of what is live at the cursor below:\n"
	"the allocation sites first (e: malloc... first), the biggest chain open,\n"
	"f for the functions by self and total bytes.\n"
	"Press ? in the viewer for the keys; q quits.\n"
	"\n"
	"  -f, --follow   FILE is still being written (a program recording now):\n"
	"                 keep up with it, new events within about a second; the\n"
	"                 cursor stays on \"now\" until moved into the past (End\n"
	"                 pins it again), the status line says \"recording...\"\n"
	"                 until the program ends\n"
	"  -h, --help     this help\n"
	"With DEBUGINFOD_URLS set, debug info missing locally is fetched from those\n"
	"debuginfod servers, as memtrail report does; what came, or why nothing did,\n"
	"is said on stderr once the viewer ends.\n";

/* How often a followed log is looked at (an fstat when it has not grown). */
#define FOLLOW_MS 200

static volatile sig_atomic_t curses_on;
volatile pid_t view_quit_kill;

/* Fatal signals: put the terminal back, then die as asked. */
static void on_signal(int sig)
{
	if (view_quit_kill > 0)
		kill(view_quit_kill, SIGTERM);
	if (curses_on)
		endwin();
	/* a shell prompt after Ctrl-C starts on a fresh line */
	if (write(STDOUT_FILENO, "\n", 1) < 0)
		_exit(128 + sig);
	_exit(128 + sig);
}

static void end_curses(void)
{
	if (curses_on) {
		curses_on = 0;
		endwin();
	}
}

/* Handles every key already typed, so that held arrows do not queue replays. */
static int drain_keys(struct mt_view_app *app, int flags)
{
	int ch;

	nodelay(stdscr, TRUE);
	while (!(flags & MT_QUIT) && (ch = getch()) != ERR) {
		if (ch == KEY_RESIZE)
			mt_view_app_resize(app, LINES, COLS);
		flags |= mt_view_key(app, ch);
	}
	nodelay(stdscr, FALSE);
	return flags;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int cmd_view(int argc, char **argv)
{
	static const struct opt opts[] = {
		{ "follow", 'f', 0, 'f' },
		{ "help", 'h', 0, 'h' },
		{ NULL, 0, 0, 0 },
	};
	struct opt_state os;
	const char *file = NULL, *arg;
	int follow = 0, id;

	opt_init(&os, "view", argc, argv, 0);
	while ((id = opt_next(&os, opts, &arg)) != OPT_END) {
		if (id == 'h') {
			fputs(cmd_view_usage, stdout);
			return 0;
		}
		if (id == 'f') {
			follow = 1;
			continue;
		}
		if (file)
			die_usage("view: too many arguments (one FILE at most)\n%s", cmd_view_usage);
		file = arg;
	}
	if (!file)
		file = "memtrail.data";
	return view_run(file, follow);
}

int view_run(const char *file, int follow)
{
	struct mt_progress prog;
	struct mt_view_data *data;
	struct mt_view_app app;
	struct mt_view_layout l;
	struct sigaction sa;
	const struct mt_end *end;
	SCREEN *scr;
	uint64_t off, next_poll;
	char buf[256];
	int id, rc, flags, redraw;

	/* Following, the viewer replays what the program records as fast as
	 * it comes: at a lower priority, it never takes a CPU from the
	 * program (nor from the recorder's own writing). */
	if (follow)
		(void)setpriority(PRIO_PROCESS, 0, getpriority(PRIO_PROCESS, 0) + 10);
	/* load everything before the screen starts: errors stay readable
	 * (the open says why: no such file, nor a bounded log's segments) */
	mt_progress_init(&prog, stderr);
	rc = mt_view_data_open(file, follow,
			       &(struct mt_progress_cb){ mt_progress_update, &prog },
			       &data, &off);
	mt_progress_clear(&prog);
	if (rc < 0)
		die("%s: %s", file, log_error(rc, off, buf, sizeof(buf)));
	/* the same words as report and dump about how the log ends (a log
	 * being written has no end yet) */
	end = mt_view_data_end(data);
	if (!mt_view_data_following(data))
		warn_log_end(file, end);
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		mt_view_data_free(data);
		die("view needs a terminal (memtrail report prints the same trees)");
	}

	setlocale(LC_ALL, "");
	scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		mt_view_data_free(data);
		die("cannot start the screen (TERM=%s)", getenv("TERM") ? getenv("TERM") : "");
	}
	curses_on = 1;
	atexit(end_curses);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	/* Home/End as xterm, rxvt and the Linux console send them, whatever
	 * TERM's entry says (a mismatch is common inside tmux and screen) */
	define_key("\033[1~", KEY_HOME);
	define_key("\033[7~", KEY_HOME);
	define_key("\033[H", KEY_HOME);
	define_key("\033OH", KEY_HOME);
	define_key("\033[4~", KEY_END);
	define_key("\033[8~", KEY_END);
	define_key("\033[F", KEY_END);
	define_key("\033OF", KEY_END);
	set_escdelay(25);
	curs_set(0);
	mt_view_draw_init();

	rc = mt_view_app_init(&app, file, data, LINES, COLS);
	if (rc < 0) {
		end_curses();
		die("%s", mt_strerror(rc));
	}
	if (!mt_view_data_following(data) && (end->truncated || end->stop_reason))
		log_end_text(file, end, app.msg, sizeof(app.msg));

	next_poll = now_ms() + FOLLOW_MS;
	for (redraw = 1;;) {
		if (redraw) {
			if (mt_view_app_stale(&app) && !app.help) {
				/* say what is going on while a replay runs */
				mt_view_draw(&app, 1);
				refresh();
				mt_view_app_refresh(&app);
			}
			mt_view_app_layout(&app, &l);
			mt_view_model_scroll(app.model, (size_t)l.tree_h);
			mt_view_draw(&app, 0);
			refresh();
		}
		redraw = 0;
		/* following: keys wait until the next look at the log, no longer
		 * (idle, the viewer sleeps in poll(2) between two fstats) */
		if (mt_view_data_following(data)) {
			uint64_t t = now_ms();

			if (t >= next_poll) {
				redraw = mt_view_app_poll(&app) != 0;
				next_poll = t + FOLLOW_MS;
				if (redraw)
					continue;
			}
			timeout((int)(next_poll - t));
		} else {
			timeout(-1);
		}
		id = getch();
		if (id == ERR)
			continue;
		redraw = 1;
		if (id == KEY_RESIZE)
			mt_view_app_resize(&app, LINES, COLS);
		flags = drain_keys(&app, mt_view_key(&app, id));
		if (flags & MT_QUIT)
			break;
	}
	end_curses();
	/* what the symbolizer met (a module replaced since the run, debug info
	 * from debuginfod or why none came), once the screen is gone */
	{
		const char *const *lines;
		size_t n = mt_view_data_warnings(app.data, &lines);

		for (size_t i = 0; i < n; i++)
			warning("%s", lines[i]);
	}
	mt_view_app_fini(&app);
	delscreen(scr);
	return 0;
}
