/*
 * memtrail.c - the memtrail program: dispatches `memtrail COMMAND ...` to
 * the command table, and handles --help, --version and `help COMMAND`.
 *
 * Not here: what a command does (viewer/cmd-NAME.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "util.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
	const char *summary;
};

static const struct command commands[] = {
	{ "record", cmd_record, cmd_record_usage, "run a program and record its heap events" },
	{ "report", cmd_report, cmd_report_usage, "summary, call trees, timeline and exports of a log" },
	{ "view",   cmd_view,   cmd_view_usage,   "browse a log in the terminal: heap over time, call trees" },
	{ "dump",   cmd_dump,   cmd_dump_usage,   "print every record of a log as a line of text" },
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out,
		"usage: memtrail COMMAND [ARGS...]\n"
		"       memtrail help COMMAND | memtrail COMMAND --help\n"
		"       memtrail --help | --version\n"
		"\n"
		"memtrail is a heap profiler and leak detector: it records every heap\n"
		"event of a program with its call stack, and replays the log offline.\n"
		"\n"
		"commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nSee memtrail(1).\n");
}

static const struct command *find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

void help_command(const char *name)
{
	const struct command *c = find(name);

	if (!c) {
		fprintf(stderr, "memtrail: error: no such command '%s'\n", name);
		usage(stderr);
		exit(MT_EXIT_USAGE);
	}
	fputs(c->usage, stdout);
	exit(0);
}

int main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		fprintf(stderr, "memtrail: error: no command given\n");
		usage(stderr);
		return MT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("memtrail %s\n", MT_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc == 2) {
			usage(stdout);
			return 0;
		}
		if (argc > 3)
			die_usage("help takes one command name");
		help_command(argv[2]);
	}
	c = find(argv[1]);
	if (!c) {
		fprintf(stderr, "memtrail: error: unknown command '%s'\n", argv[1]);
		usage(stderr);
		return MT_EXIT_USAGE;
	}
	return c->run(argc - 1, argv + 1);
}
