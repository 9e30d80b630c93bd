/*
 * leak_threads.c - a leak check after many threads: N threads (argv[1],
 * default 1000) are alive at once, each with a block of its own, then
 * free it and end; each thread costs the recorder mappings of its own (its
 * ring and stack table), which the leak scan leaves out of its roots. A
 * list of them with room for 4,096 once made the scan give up after some
 * 650 threads, for the rest of the run.
 *
 * Worked out: the threads' N blocks of 100 B are freed before they end
 * (joined before main goes on); main then loses its only pointer to one
 * block of 77 B. At exit: 77 B definitely lost in 1 block, nothing else
 * live (no output, so no stdout buffer).
 *
 * For: tests/e2e/leak_memcheck.sh, against memcheck.
 */
#include <pthread.h>
#include <stdlib.h>

static pthread_barrier_t all;
void *volatile lost;

static void *run(void *arg)
{
	void *volatile p = malloc(100);

	(void)arg;
	pthread_barrier_wait(&all);     /* every thread alive, each block live */
	free(p);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	pthread_t *t = malloc((size_t)n * sizeof(*t));
	pthread_attr_t at;

	if (!t || n < 1)
		return 1;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 << 10);
	pthread_barrier_init(&all, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], &at, run, NULL))
			return 1;
	pthread_barrier_wait(&all);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&all);
	pthread_attr_destroy(&at);
	free(t);
	lost = malloc(77);
	lost = NULL;                    /* definitely lost */
	return 0;
}
