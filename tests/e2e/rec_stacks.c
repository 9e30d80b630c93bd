/*
 * rec_stacks.c - allocations from thousands of distinct call stacks that
 * share their outer frames, each with its stack as backtrace(3) sees it,
 * for rec_stacks.sh: the recorder's stack tables keep a stack as the
 * frames it does not share with an earlier one (recorder/tables.c), and
 * every stack the log names must still be the one the program was in.
 *
 * Two threads each walk a binary tree of calls DEPTH deep: node() calls
 * itself from two call sites (left, right), so each of the 2^(DEPTH+1) - 1
 * nodes is its own stack, and a node's stack shares all but its innermost
 * frames with its parent's and its sibling's. Each node takes its
 * backtrace, then allocates a block whose size is the node's number (BASE
 * + a count unique in the run), and writes a line to the file named by
 * argv[1]: "size frame1 frame2 ...", the return addresses of its callers
 * innermost first (frame 0, backtrace's own call site, is left out: the
 * log's frame 0 is malloc's). Both threads walk the same tree, so equal
 * paths are equal stacks, made by two threads: the log's table must give
 * them one id.
 *
 * Not for: figures (every block is freed at once; rec_stacks.sh compares
 * stacks only).
 */
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define DEPTH 10
#define BASE  100000

static int out;
static unsigned counter;
static pthread_barrier_t both;

static void __attribute__((noinline)) node(unsigned depth)
{
	void *bt[64];
	char line[64 * 20 + 32];
	int n = backtrace(bt, 64);
	unsigned id = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
	size_t size = BASE + id;
	char *p = malloc(size);

	if (!p)
		exit(2);
	p[0] = 1;
	int len = snprintf(line, sizeof line, "%zu", size);
	for (int i = 1; i < n && len < (int)sizeof line - 20; i++)
		len += snprintf(line + len, sizeof line - len, " %#lx", (unsigned long)bt[i]);
	line[len++] = '\n';
	if (write(out, line, (size_t)len) != len)
		exit(3);
	free(p);
	if (depth < DEPTH) {
		node(depth + 1);   /* left */
		node(depth + 1);   /* right: another return address */
	}
}

/* Both threads live from before the first node to after the last: two
 * rings and two stack tables (a thread gone, its ring serves the next). */
static void *walk(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&both);
	node(0);
	pthread_barrier_wait(&both);
	return NULL;
}

int main(int argc, char **argv)
{
	void *warm[4];
	pthread_t t[2];

	if (argc != 2)
		return 2;
	out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (out < 0)
		return 2;
	/* backtrace's first call loads the unwinder (its allocations are
	 * not nodes') */
	(void)backtrace(warm, 4);
	pthread_barrier_init(&both, NULL, 2);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, walk, NULL))
			return 2;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	close(out);
	printf("%u nodes\n", counter);
	return 0;
}
