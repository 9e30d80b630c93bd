/*
 * rec_times_prog.c - allocations whose times the log must show within a
 * tick of when they happened (tests/e2e/rec_times.sh). Each phase ends
 * with a marker allocation of a size of its own (1001, 1002, ...), and the
 * program prints, for each, its CLOCK_MONOTONIC nanoseconds just before
 * and just after the call ("marker SIZE BEFORE AFTER"): the truth the
 * log's times are held to. A second thread allocates without a pause
 * from start to 1004, so that the recorder's tick goes on (it stops when
 * no thread allocates). The phases:
 *   1001  after a dense loop (20,000 malloc/free pairs, a thread reading
 *         the clock once per tick only)
 *   1002  after 60 ms of computing with no allocation and no system call
 *         (the clock read through the vDSO): the thread never left its
 *         CPU, so only the tick that moved meanwhile tells the recorder
 *         that time went by
 *   1003  after a 40 ms sleep
 *   1004  after another dense loop, right away
 *   1005  after 30 ms of computing with no thread allocating (the tick
 *         stopped)
 *   1006  by a third thread, after a dense loop
 * Not for: the order of events (rec_stress.sh, rec_xfree.sh).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ll + t.tv_nsec;
}

static void *volatile keep;

static void marker(size_t size)
{
	long long a = now();
	void *p = malloc(size);
	long long b = now();
	keep = p;
	free(p);
	printf("marker %zu %lld %lld\n", size, a, b);
}

static void dense(int n)
{
	for (int i = 0; i < n; i++) {
		void *p = malloc(16 + (size_t)(i % 64));
		keep = p;
		free(p);
	}
}

static void compute(long long ns)
{
	long long end = now() + ns;
	volatile unsigned long x = 0;
	while (now() < end)
		x++;
}

static volatile int stop;

static void *background(void *arg)
{
	(void)arg;
	while (!stop)
		dense(100);
	return NULL;
}

static void *third(void *arg)
{
	(void)arg;
	dense(20000);
	marker(1006);
	return NULL;
}

int main(void)
{
	pthread_t bg, t;

	if (pthread_create(&bg, NULL, background, NULL) != 0)
		return 1;
	dense(20000);
	marker(1001);
	compute(60000000);
	marker(1002);
	struct timespec ts = { 0, 40000000 };
	nanosleep(&ts, NULL);
	marker(1003);
	dense(20000);
	marker(1004);
	stop = 1;
	pthread_join(bg, NULL);
	compute(30000000);
	marker(1005);
	if (pthread_create(&t, NULL, third, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	return 0;
}
