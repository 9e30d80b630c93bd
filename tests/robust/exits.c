/*
 * exits.c - ways a program ends that the recorder must survive, for
 * tests/e2e/robust_realprogs.sh. No stdio: output is written with
 * write(2), so every heap block is one of the program's own and the
 * figures below are exact.
 *
 *   exits thread   a second thread allocates 111 B (kept) and 222 B
 *                  (freed), prints "thread exits 3" and calls exit(3) while
 *                  main waits in pthread_join(). Leaked: the 111 B block,
 *                  stack thread_main <- start_thread (plus the thread's own
 *                  libc blocks made by pthread_create, not from this file).
 *                  Exit status 3.
 *   exits _exit    allocates 1,000 B (kept) and 24 B (freed), prints "bye",
 *                  _exit(4): 2 allocations, 1 free, 1,024 B allocated, peak
 *                  1,024 B in 2 blocks, 1,000 B leaked in 1 block; status 4.
 *   exits segv     allocates 300 B and 50 B (both kept), prints "crash",
 *                  writes through a null pointer: 2 allocations, 0 frees,
 *                  350 B allocated, peak 350 B in 2 blocks, leaked 350 B in
 *                  2 blocks; killed by SIGSEGV.
 *   exits abort    allocates 4,096 B (freed) then 77 B (kept), prints
 *                  "abort", abort(): 2 allocations, 1 free, 4,173 B
 *                  allocated, peak 4,096 B in 1 block, leaked 77 B in 1
 *                  block; killed by SIGABRT.
 *
 * Not for: anything but that test.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile void *keep[2];

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(9);
}

static __attribute__((noinline)) void *thread_main(void *arg)
{
	void *tmp;

	(void)arg;
	keep[0] = malloc(111);
	tmp = malloc(222);
	free(tmp);
	say("thread exits 3\n");
	exit(3);
}

int main(int argc, char **argv)
{
	pthread_t t;
	void *tmp;

	if (argc != 2)
		return 2;
	if (!strcmp(argv[1], "thread")) {
		if (pthread_create(&t, NULL, thread_main, NULL) != 0)
			return 1;
		pthread_join(t, NULL);
		return 1;               /* not reached: the thread exits */
	}
	if (!strcmp(argv[1], "_exit")) {
		keep[0] = malloc(1000);
		tmp = malloc(24);
		free(tmp);
		say("bye\n");
		_exit(4);
	}
	if (!strcmp(argv[1], "segv")) {
		keep[0] = malloc(300);
		keep[1] = malloc(50);
		say("crash\n");
		*(volatile int *)(keep[0] == (void *)1 ? (void *)keep[0] : NULL) = 1;
		return 1;
	}
	if (!strcmp(argv[1], "abort")) {
		tmp = malloc(4096);
		free(tmp);
		keep[0] = malloc(77);
		say("abort\n");
		abort();
	}
	return 2;
}
