/*
 * live_phases.c - a sample that allocates in three phases with pauses in
 * between, for watching a run while it is recorded (`memtrail view
 * --follow`, `memtrail record --view`): each phase changes the heap by a
 * round figure that is easy to spot on the screen.
 *
 * For: tests/e2e/view_follow.sh (driven step by step) and the accuracy
 * tests (tests/e2e/accuracy_samples.sh, with no argument: no pause). Not
 * for: trees (phases.c has a richer one).
 *
 * It uses no stdio stream and parses its argument without the heap, so
 * every heap block below is one the program asks for itself. It says
 * "phase K" on stdout as each phase begins, and "done" at the end.
 *
 *   live_phases          the three phases back to back
 *   live_phases SECONDS  a pause of SECONDS (1 to 3600) before each phase
 *                        and before it exits
 *   live_phases DIR      before phase K (1 to 3) it waits until the file
 *                        DIR/goK exists, and before it exits until DIR/go4
 *                        does (looked for every 20 ms): a test moves it on
 *
 * The heap, the same in every mode:
 *   phase 1  10 x malloc(100,000): live 1,000,000 B in 10 blocks.
 *   phase 2  20 x malloc(50,000):  live 2,000,000 B in 30 blocks, the peak
 *            (reached at its last allocation).
 *   phase 3  frees the 20 blocks of phase 2 and the first 5 of phase 1:
 *            live 500,000 B in 5 blocks, never freed: the leak.
 *   allocations 30, frees 25, bytes allocated 10 x 100,000 + 20 x 50,000
 *   = 2,000,000.
 *
 * memtrail-expect:
 *   allocations 30
 *   frees 25
 *   bytes_allocated 2000000
 *   peak_bytes 2000000
 *   peak_blocks 30
 *   leaked_bytes 500000
 *   leaked_blocks 5
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Not static: the compiler may not drop a malloc whose block is kept. */
void *live_blocks[30];

static const char *dir;
static long pause_s;

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0)
		;
}

/* A line on stdout, without stdio's buffer. */
static void say(const char *s)
{
	if (write(STDOUT_FILENO, s, strlen(s)) < 0)
		_exit(3);
}

/* The pause before step k (1 to 4). */
static void wait_step(int k)
{
	char path[4096];
	size_t n;

	if (pause_s) {
		nap(pause_s * 1000);
		return;
	}
	if (!dir)
		return;
	n = strlen(dir);
	if (n + 5 > sizeof(path))
		_exit(2);
	memcpy(path, dir, n);
	memcpy(path + n, "/go", 3);
	path[n + 3] = (char)('0' + k);
	path[n + 4] = 0;
	while (access(path, F_OK) < 0)
		nap(20);
}

int main(int argc, char **argv)
{
	int i;

	if (argc > 1) {
		const char *p = argv[1];

		for (; *p >= '0' && *p <= '9' && pause_s <= 3600; p++)
			pause_s = pause_s * 10 + (*p - '0');
		if (*p || p == argv[1] || pause_s > 3600) {
			pause_s = 0;
			dir = argv[1];
		}
	}
	wait_step(1);
	say("phase 1\n");
	for (i = 0; i < 10; i++)
		live_blocks[i] = malloc(100000);
	wait_step(2);
	say("phase 2\n");
	for (i = 10; i < 30; i++)
		live_blocks[i] = malloc(50000);
	wait_step(3);
	say("phase 3\n");
	for (i = 10; i < 30; i++)
		free(live_blocks[i]);
	for (i = 0; i < 5; i++)
		free(live_blocks[i]);
	wait_step(4);
	say("done\n");
	return 0;
}
