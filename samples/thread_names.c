/*
 * thread_names.c - three named threads, one after another, each with its
 * own exactly known allocations, frees and leaks; the last one still runs
 * when the program exits.
 *
 * For: `memtrail report --by-thread` (per-thread figures and names: a name
 * a thread gives itself, one its creator gives it, the program's name for
 * the main thread, read at a thread's exit or, for a thread still running,
 * at the end) and `--thread TID`. Not for: concurrency (the threads run one
 * at a time: every figure below is independent of scheduling).
 *
 * The threads, in order (each is joined before the next starts, except
 * gamma):
 *   alpha  names itself "alpha"; allocates 10 blocks of 100 B (1,000 B),
 *          frees 4 of them, hands 3 to beta and drops the pointers to the
 *          last 3 (leaked: 300 B in 3 blocks).
 *   beta   named "beta" by main (pthread_setname_np from another thread;
 *          beta waits until it is); frees alpha's 3 blocks, allocates
 *          4,000 B (handed to main) and 2,000 B (freed at once).
 *   gamma  names itself "gamma", allocates 500 B, keeps it, tells main and
 *          waits forever: it is running when main exits (leaked: 500 B).
 *   main   the program's own name ("thread_names"). pthread_create
 *          allocates a new thread's DTV with calloc(D, 16) in the creating
 *          thread (see threads.c): D = 17 natively, 272 B. Only alpha's
 *          is allocated: each join puts the thread's stack, its DTV with
 *          it, in glibc's stack cache, and the next thread (same stack
 *          size) gets it back, so beta and gamma run on alpha's stack and
 *          DTV, which is live at exit (gamma's). After gamma is ready,
 *          main allocates 50,000 B (the peak), then frees it and beta's
 *          4,000 B.
 *
 * Per thread (live at peak and leaked: of the blocks the thread allocated):
 *   thread   allocs  frees  allocated  live at peak     leaked
 *   main        2      2      50,272    50,272 B in 2   272 B in 1
 *   alpha      10      4       1,000       300 B in 3   300 B in 3
 *   beta        2      4       6,000     4,000 B in 1     0 B in 0
 *   gamma       1      0         500       500 B in 1   500 B in 1
 * (main's bytes grow by 16 B for each TLS module a preloaded profiler
 * adds: the `dtv 1` line below, and so does the leak, since that DTV is
 * live at exit: `dtv_leaked 1`; main's frees are the 50,000 B and beta's
 * block; beta's are alpha's 3 and its own 2,000 B.)
 *
 * Totals:
 *   allocations  2 + 10 + 2 + 1 = 15        frees  2 + 4 + 4 + 0 = 10
 *   bytes        50,272 + 1,000 + 6,000 + 500 = 57,772
 *   peak         after the 50,000 B block: 272 + 300 + 4,000 + 500 + 50,000
 *                = 55,072 B in 1 + 3 + 1 + 1 + 1 = 7 blocks (before it,
 *                live never passes 272 + 1,000 + 2,000 + 4,000 B)
 *   leaked       272 + 300 + 500 = 1,072 B in 5 blocks (15 - 10 = 5)
 *
 * memtrail-expect:
 *   allocations 15
 *   frees 10
 *   bytes_allocated 57772
 *   peak_bytes 55072
 *   peak_blocks 7
 *   leaked_bytes 1072
 *   leaked_blocks 5
 *   dtv 1
 *   dtv_leaked 1
 */
#define _GNU_SOURCE         /* pthread_setname_np */
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *handed[3];     /* alpha's blocks, freed by beta */
static void *kept;          /* beta's block, freed by main */
static sem_t named, ready;

static void fail(int code)
{
	_exit(code);
}

static void *alpha(void *arg)
{
	void *b[10];
	int i;

	(void)arg;
	pthread_setname_np(pthread_self(), "alpha");
	for (i = 0; i < 10; i++)
		if (!(b[i] = malloc(100)))
			fail(4);
	for (i = 0; i < 4; i++)
		free(b[i]);
	for (i = 0; i < 3; i++)
		handed[i] = b[4 + i];
	/* b[7], b[8], b[9]: dropped, leaked */
	return NULL;
}

static void *beta(void *arg)
{
	void *p;
	int i;

	(void)arg;
	while (sem_wait(&named) != 0)
		;
	for (i = 0; i < 3; i++)
		free(handed[i]);
	if (!(kept = malloc(4000)) || !(p = malloc(2000)))
		fail(4);
	free(p);
	return NULL;
}

static void *gamma_main(void *arg)
{
	sem_t never;

	(void)arg;
	pthread_setname_np(pthread_self(), "gamma");
	if (!malloc(500))           /* kept: live when the program exits */
		fail(4);
	sem_init(&never, 0, 0);
	sem_post(&ready);
	for (;;)
		sem_wait(&never);
	return NULL;
}

int main(void)
{
	pthread_attr_t attr;
	pthread_t t;
	char *big;

	sem_init(&named, 0, 0);
	sem_init(&ready, 0, 0);
	pthread_attr_init(&attr);
	/* small stacks, so glibc's stack cache keeps every one (threads.c) */
	pthread_attr_setstacksize(&attr, 256 * 1024);
	if (pthread_create(&t, &attr, alpha, NULL))
		fail(5);
	pthread_join(t, NULL);
	if (pthread_create(&t, &attr, beta, NULL))
		fail(5);
	pthread_setname_np(t, "beta");
	sem_post(&named);
	pthread_join(t, NULL);
	if (pthread_create(&t, &attr, gamma_main, NULL))
		fail(5);
	pthread_attr_destroy(&attr);
	while (sem_wait(&ready) != 0)
		;
	if (!(big = malloc(50000)))
		fail(4);
	memset(big, 1, 50000);
	free(big);
	free(kept);
	if (write(1, "done\n", 5) != 5)
		fail(3);
	return 0;
}
