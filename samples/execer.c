/*
 * execer.c - a parent that allocates a little, then forks and execs twice:
 * itself with the argument "child" (which allocates and leaks) and
 * /bin/true; it waits for both and goes on.
 *
 * For: the accuracy tests of exec handling: by default the preload removes
 * itself from the environment, so an exec'd child is not recorded and never
 * writes to the parent's log; the recorded figures are the parent's alone.
 * Under --follow-children the parent's figures are the same, and each child
 * leaves two logs: its fork image (it calls execv at once: no event, END
 * how=exec) and the program it execs (the "child" run: 5 allocations of
 * 100 B, no free, peak and leak 500 B in 5 blocks; /bin/true: whatever its
 * start-up allocates, none in coreutils' true without arguments).
 *
 * Parent, in order (live bytes / blocks after each):
 *   1  a = malloc(4096)                        4,096 B  1 blk
 *   2  fork + exec of itself (path read from /proc/self/exe) with "child":
 *      the child, a fresh program, allocates 5 x 100 B, frees none,
 *      writes one line, exits 0
 *   3  fork + exec of /bin/true
 *      snapshot 0 "execed": 4,096 B in 1 block
 *   4  b = calloc(16, 16)                      4,352 B  2  <- peak
 *   5  free(a)                                   256 B  1
 *   b is leaked.
 * Parent totals: 2 allocations (4,096 + 256 = 4,352 B), 1 free, peak
 * 4,352 B in 2 blocks, leaked 256 B in 1 block. The exec'd child's own
 * figures (5 allocations, 500 B, all leaked) must appear nowhere.
 * Under memcheck without --trace-children the exec'd programs run natively
 * and only the parent prints a HEAP SUMMARY that counts.
 *
 * memtrail-expect:
 *   allocations 2
 *   frees 1
 *   bytes_allocated 4352
 *   peak_bytes 4352
 *   peak_blocks 2
 *   leaked_bytes 256
 *   leaked_blocks 1
 *   snapshot 0 label execed live_bytes 4096 live_blocks 1
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memtrail.h>

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(3);
}

static int run_child(void)
{
	int i;

	for (i = 0; i < 5; i++) {
		char *p = malloc(100);

		if (!p)
			return 4;
		memset(p, i, 100);	/* leaked on purpose */
	}
	say("execer child: 5 blocks of 100 bytes\n");
	return 0;
}

static int spawn_and_wait(const char *path, char *const argv[])
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execv(path, argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	char self[4096];
	char *self_argv[] = { argv[0], (char *)"child", NULL };
	char *true_argv[] = { (char *)"true", NULL };
	char *a, *b;
	ssize_t n;

	if (argc > 1 && strcmp(argv[1], "child") == 0)
		return run_child();

	a = malloc(4096);
	if (!a)
		return 4;
	memset(a, 'a', 4096);
	/* Exec the file by its real path: valgrind's /proc/self/exe is itself. */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	if (spawn_and_wait(self, self_argv) != 0)
		return 1;
	if (spawn_and_wait("/bin/true", true_argv) != 0)
		return 1;
	memtrail_snapshot_named("execed");

	b = calloc(16, 16);
	if (!b)
		return 4;
	free(a);
	say("execer: both children exited 0\n");
	return 0;
}
