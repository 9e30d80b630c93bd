/*
 * rec_freeres.cpp - the test program of tests/e2e/rec_freeres.sh: a C++
 * program (so libstdc++'s emergency exception pool is allocated at start)
 * that starts one thread, leaks a 24 B block, prints a line and returns
 * from main.
 *
 *   rec_freeres joined    the thread ends and is joined before main returns
 *   rec_freeres running   the thread is still blocked (reading a pipe
 *                         nobody writes) when main returns
 *
 * Not for: anything but that test.
 */
#include <cstdio>
#include <cstring>
#include <pthread.h>
#include <unistd.h>

static int fds[2];

static void *waiter(void *arg)
{
	char c;

	(void)arg;
	if (read(fds[0], &c, 1) < 0)
		return nullptr;
	return nullptr;
}

int main(int argc, char **argv)
{
	pthread_t th;
	bool running = argc > 1 && !strcmp(argv[1], "running");

	if (pipe(fds) < 0 || pthread_create(&th, nullptr, waiter, nullptr))
		return 2;
	if (!running) {
		close(fds[1]);
		pthread_join(th, nullptr);
	}
	new char[24];
	printf("%s\n", running ? "running" : "joined");
	return 0;
}
