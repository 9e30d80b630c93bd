/*
 * forker.c - a parent that allocates, forks two children that allocate and
 * free on their own, waits for them, and goes on allocating.
 *
 * For: the accuracy tests of fork handling: a forked child that does not
 * exec stops recording and must not touch the parent's log, so the recorded
 * figures are the parent's alone; and of --follow-children, where each
 * child has a log of its own (figures below) and the parent's stays the
 * same.
 *
 * Parent, in order (live bytes / blocks after each):
 *   1  a = malloc(1000)                        1,000 B  1 blk
 *   2  b = malloc(2000)                        3,000 B  2
 *   3  fork child 1: it allocates 3 x 500 B, frees 2 of them, writes one
 *      line and calls exit(0) (atexit handlers and all)
 *      parent waits for it
 *   4  fork child 2: it allocates 1 x 700 B, frees nothing, writes one
 *      line and calls _exit(0) (no atexit handlers)
 *      parent waits for it
 *      snapshot 0 "forked": 3,000 B in 2 blocks (the children's blocks
 *      were never the parent's)
 *   5  c = malloc(300)                         3,300 B  3  <- peak
 *   6  free(a), free(c)                        2,000 B  1
 *   b is leaked.
 * Each child writes its line before exiting and the parent writes only after
 * waiting, so stdout is the same on every run.
 *
 * Parent totals: 3 allocations (1,000 + 2,000 + 300 = 3,300 B), 2 frees,
 * peak 3,300 B in 3 blocks, leaked 2,000 B in 1 block.
 * Each child's own figures (its log under --follow-children, which begins
 * at the fork with no live block: the inherited a and b are not its own):
 * child 1: 3 allocations, 2 frees, 1,500 B allocated, peak 1,500 B in 3
 * blocks, leaked 500 B in 1 block; child 2: 1 allocation, 0 frees, 700 B,
 * peak 700 B in 1 block, leaked 700 B in 1 block.
 * memcheck follows a fork without --trace-children and prints one HEAP
 * SUMMARY per process; the tests read the first, the parent's.
 *
 * memtrail-expect:
 *   allocations 3
 *   frees 2
 *   bytes_allocated 3300
 *   peak_bytes 3300
 *   peak_blocks 3
 *   leaked_bytes 2000
 *   leaked_blocks 1
 *   snapshot 0 label forked live_bytes 3000 live_blocks 2
 */
#include <stdio.h>
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

static void child_work(int which)
{
	char *p[3];
	int i;

	if (which == 1) {
		for (i = 0; i < 3; i++) {
			p[i] = malloc(500);
			if (!p[i])
				_exit(4);
			memset(p[i], i, 500);
		}
		free(p[0]);
		free(p[1]);
		say("child 1: 3 blocks allocated, 2 freed, exit()\n");
		exit(0);
	}
	p[0] = malloc(700);
	if (!p[0])
		_exit(4);
	memset(p[0], 7, 700);
	say("child 2: 1 block allocated, _exit()\n");
	_exit(0);
}

static int spawn_and_wait(int which)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0)
		child_work(which);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(void)
{
	char *a = malloc(1000);
	char *b = malloc(2000);
	char *c;
	char line[64];

	if (!a || !b)
		return 4;
	memset(a, 'a', 1000);
	memset(b, 'b', 2000);
	if (spawn_and_wait(1) != 0 || spawn_and_wait(2) != 0)
		return 1;
	memtrail_snapshot_named("forked");

	c = malloc(300);
	if (!c)
		return 4;
	snprintf(c, 300, "parent: children done, %c%c\n", a[0], b[0]);
	snprintf(line, sizeof(line), "%s", c);
	free(a);
	free(c);
	say(line);
	return 0;
}
