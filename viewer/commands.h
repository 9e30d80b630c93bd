/*
 * commands.h - the commands of the memtrail program, one viewer/cmd-NAME.c
 * each, dispatched by the table in viewer/memtrail.c.
 *
 * Each cmd_NAME() gets the arguments from the command name on (argv[0] is
 * "NAME") and returns the exit status. Each usage text is printed by
 * `memtrail help NAME` and `memtrail NAME --help`.
 */
#ifndef MT_VIEWER_COMMANDS_H
#define MT_VIEWER_COMMANDS_H

#include <sys/types.h>

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_view(int argc, char **argv);

extern const char cmd_record_usage[];
extern const char cmd_report_usage[];
extern const char cmd_dump_usage[];
extern const char cmd_view_usage[];

/*
 * `memtrail view` on file, with follow on one still being written; returns
 * the exit status when the viewer quits (cmd-view.c; record --view).
 */
int view_run(const char *file, int follow);

/* A program to end (SIGTERM) when the viewer dies of a signal: record
 * --view --kill-on-quit's, else 0. */
extern volatile pid_t view_quit_kill;

/* Prints the usage of command name to stdout and exits 0. */
void help_command(const char *name) __attribute__((noreturn));

#endif
