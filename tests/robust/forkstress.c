/*
 * forkstress.c - fork from a multi-threaded program while another thread
 * allocates, for tests/e2e/robust_fork.sh (and, under valgrind, for the
 * recorder's own memory errors).
 *
 *   forkstress FORKS [signals]
 *
 * A second thread allocates blocks of 16..527 bytes in a loop and hands
 * them through a ring to the main thread, which frees them (cross-thread
 * frees) between forks. The main thread forks FORKS times; each child
 * allocates and frees one block of 777 bytes, then ends with _exit(0) (odd
 * children) or exit(0) (even ones); the parent waits for each and checks it
 * exited with 0. With "signals", the main thread sends itself SIGUSR2
 * after every 20th fork (run it only where SIGUSR2 takes a snapshot).
 * Then the thread stops, main frees what is left in the ring, and prints
 * "forks N ok N" on stdout and "allocated N" (the thread's blocks) on
 * stderr.
 *
 * Figures derived from the code, for the parent: allocations = N + 1 (the
 * thread's blocks, and the thread's DTV that pthread_create allocates),
 * frees = N + 1, leaked 0 (an ended thread's stack and DTV are cached,
 * until glibc's __libc_freeres empties the cache at exit; with the
 * runtime's memory kept at exit, `memtrail record --keep-runtime`: frees =
 * N, leaked 1 block, the DTV); 2 threads; no block of 777 bytes (those are
 * the children's); FORKS / 20 snapshots with "signals". No stdio, so no
 * other block.
 *
 * Not for: anything but those tests.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define RING 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *ring[RING];
static unsigned head, tail;
static volatile int stop;
static unsigned long allocated;

static void put(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(9);
}

static void *allocator(void *arg)
{
	unsigned long i = 0;

	(void)arg;
	while (!stop) {
		void *p = malloc(16 + (i * 37) % 512);

		if (!p)
			abort();
		memset(p, 1, 16);
		pthread_mutex_lock(&lock);
		if (head - tail < RING) {
			ring[head++ % RING] = p;
			p = NULL;
		}
		pthread_mutex_unlock(&lock);
		if (p)
			free(p);      /* ring full: freed by this thread */
		allocated++;
		i++;
	}
	return NULL;
}

/* Frees what is in the ring, from the main thread. */
static void drain(void)
{
	pthread_mutex_lock(&lock);
	while (tail != head)
		free(ring[tail++ % RING]);
	pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv)
{
	int forks, ok = 0, sigs;
	pthread_t t;
	char buf[64];

	if (argc < 2 || (forks = atoi(argv[1])) <= 0)
		return 2;
	sigs = argc > 2 && !strcmp(argv[2], "signals");
	if (pthread_create(&t, NULL, allocator, NULL) != 0)
		return 1;
	for (int i = 0; i < forks; i++) {
		int st;
		pid_t pid;

		drain();
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			void *p = malloc(777);

			free(p);
			if (i % 2)
				_exit(0);
			exit(0);
		}
		if (waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
		if (sigs && (i + 1) % 20 == 0)
			kill(getpid(), SIGUSR2);
	}
	stop = 1;
	pthread_join(t, NULL);
	drain();
	snprintf(buf, sizeof(buf), "forks %d ok %d\n", forks, ok);
	put(buf);
	snprintf(buf, sizeof(buf), "allocated %lu\n", allocated);
	if (write(2, buf, strlen(buf)) < 0)
		return 9;
	return ok == forks ? 0 : 1;
}
