/*
 * leak_thread.c - a block reachable only from another thread's stack:
 * the leak scan at exit must stop that thread and scan its stack (and
 * registers), as memcheck does. No stdio stream, so every heap block is
 * one the program or the C library's thread start asks for.
 *
 * For: tests/e2e/leak_memcheck.sh (memtrail's classification equals
 * memcheck --leak-check=full's). Not for: single-thread kinds
 * (leak_kinds.c).
 *
 *   main          malloc 77 B into the global `keep`, then malloc 33 B
 *                 into the same global: the 77 B block is definitely
 *                 lost, the 33 B one reachable from the bss.
 *   holder        the thread: malloc 300 B into a local (on its own
 *                 stack), tells main through a pipe that it holds it,
 *                 then waits in read(2) forever; main returns meanwhile,
 *                 and exit() ends the process with the thread still
 *                 blocked: the 300 B block is reachable, from that
 *                 thread's stack only.
 *   pthread_create allocates the new thread's DTV with calloc (glibc:
 *                 (TLS modules + 16) entries of 16 B plus 16: 288 B with
 *                 one module of TLS... the exact size is glibc's), reachable
 *                 from the thread's descriptor at the top of its stack.
 *
 *   definitely lost  77 B in 1 block
 *   indirectly lost   0 B
 *   possibly lost     0 B
 *   still reachable  33 + 300 B + the DTV, in 3 blocks
 *
 * With a thread still running at exit, memtrail leaves the runtimes'
 * memory alone (recorder/freeres.c): memcheck is run with
 * --run-libc-freeres=no to match (it would free nothing of the above
 * anyway).
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

void *volatile keep;
static int ready[2], never[2];

static void *holder(void *arg)
{
	void *volatile mine = malloc(300);
	char c;
	(void)arg;
	if (write(ready[1], "x", 1) != 1)
		abort();
	for (;;)
		if (read(never[0], &c, 1) <= 0 && mine)
			pause();
	return NULL;
}

int main(void)
{
	pthread_t t;
	char c;

	if (pipe(ready) < 0 || pipe(never) < 0)
		return 1;
	keep = malloc(77);
	keep = malloc(33);
	if (pthread_create(&t, NULL, holder, NULL) != 0)
		return 1;
	if (read(ready[0], &c, 1) != 1)
		return 1;
	return 0;
}
