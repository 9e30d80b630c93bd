/*
 * late_leak.c - a sample whose only leak is first seen after the peak: one
 * 1 MiB buffer is allocated and freed (the peak), and only then does
 * late_leak() allocate the 4 KiB block it never frees.
 *
 * For: tests/e2e/report_late.sh (every reader names the late leak, its
 * function and its exact figures, also when it comes from a library loaded
 * after the peak or is followed by snapshots) and the accuracy tests
 * (tests/e2e/accuracy_samples.sh, with no argument). Not for: anything
 * about the peak's own tree (phases.c has a richer one).
 *
 * It uses no stdio stream (stdio mallocs a buffer on first use) and
 * parses its arguments without the heap, so every heap block below is one
 * the program asks for itself, except dlopen's own in the plugin case.
 *
 *   late_leak                    the base run
 *   late_leak snapshot           the base run with two snapshots after the
 *                                peak
 *   late_leak plugin LIB.so      the base run, then LIB.so is dlopen'ed and
 *                                its plugin_leak() called
 *
 * The base run:
 *   big_buffer()  malloc 1,048,576 B (1 MiB), filled, then freed by main:
 *                 live 1,048,576 B in 1 block while it exists. This is
 *                 the peak, at the first allocation; nothing later comes
 *                 close (the most ever live afterwards is 4,096 B, or
 *                 4,096 + 8,192 B + dlopen's few KiB with the plugin).
 *   late_leak()   malloc 4,096 B, kept in a global, never freed: the leak,
 *                 first allocated 2 events after the peak.
 *   allocations 2, frees 1, bytes allocated 1,048,576 + 4,096 = 1,052,672,
 *   leaked 4,096 B in 1 block (2 - 1).
 *
 * With "snapshot": memtrail_snapshot_named("freed") right after the free
 * (0 B in 0 blocks live), then late_leak(), then
 * memtrail_snapshot_named("leaked") (4,096 B in 1 block). The heap figures
 * are those of the base run.
 *
 * With "plugin LIB.so": after late_leak(), dlopen(LIB.so) and its
 * plugin_leak() (tests/e2e/late_plugin.c), which mallocs 8,192 B from
 * inside the library and keeps it. On top of the base run: 1 allocation
 * of 8,192 B from plugin_leak, leaked; plus whatever dlopen allocates for
 * itself (the library's link map and search lists: glibc's business, not
 * counted here; the library stays loaded, so they stay live).
 *
 * memtrail-expect:
 *   allocations 2
 *   frees 1
 *   bytes_allocated 1052672
 *   peak_bytes 1048576
 *   peak_blocks 1
 *   leaked_bytes 4096
 *   leaked_blocks 1
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrail.h>

#define BIG_SIZE	(1024 * 1024)
#define LEAK_SIZE	4096

static char *kept;          /* the late leak, reachable to the end */
static void *plugin_block;  /* what the plugin returned */

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(3);
}

static char *big_buffer(void)
{
	char *p = malloc(BIG_SIZE);

	if (!p)
		_exit(4);
	memset(p, 'b', BIG_SIZE);
	return p;
}

static void late_leak(void)
{
	kept = malloc(LEAK_SIZE);
	if (!kept)
		_exit(4);
	memset(kept, 'l', LEAK_SIZE);
}

/* dlopen lib, call its plugin_leak(); the library stays loaded. */
static void load_plugin(const char *lib)
{
	void *(*fn)(void);
	void *h = dlopen(lib, RTLD_NOW);

	if (!h) {
		say("late_leak: cannot dlopen the plugin\n");
		_exit(5);
	}
	*(void **)&fn = dlsym(h, "plugin_leak");
	if (!fn) {
		say("late_leak: no plugin_leak in the plugin\n");
		_exit(5);
	}
	plugin_block = fn();
}

int main(int argc, char **argv)
{
	int snapshots = argc == 2 && !strcmp(argv[1], "snapshot");
	int plugin = argc == 3 && !strcmp(argv[1], "plugin");
	char *big;

	if (argc > 1 && !snapshots && !plugin) {
		say("usage: late_leak [snapshot | plugin LIB.so]\n");
		return 2;
	}
	big = big_buffer();
	free(big);
	if (snapshots)
		memtrail_snapshot_named("freed");
	late_leak();
	if (snapshots)
		memtrail_snapshot_named("leaked");
	if (plugin)
		load_plugin(argv[2]);
	say(kept[0] == 'l' ? "late_leak: done\n" : "late_leak: bad block\n");
	return plugin && !plugin_block;
}
