/*
 * ring_threads.c - four threads that churn with malloc, realloc and free
 * at once, for a bounded log (tests/e2e/rec_ring.sh): its segments begin
 * while reallocs are half written and blocks move between threads' arenas,
 * and a replay from the oldest kept segment's BASE must still end with the
 * figures the recorder counted (END): every allocation, free and byte.
 *
 * Not for: exact figures of its own (the interleaving varies), other tests.
 * Each thread frees all it allocated: nothing is live at exit.
 */
#include <pthread.h>
#include <stdlib.h>

static void *run(void *arg)
{
	unsigned long x = (unsigned long)arg * 7919 + 1;
	void *pool[512] = { 0 };

	for (long i = 0; i < 400000; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		unsigned j = (unsigned)(x >> 33) % 512;

		if ((x >> 20) % 3 == 0) {
			void *p = realloc(pool[j], 8 + (x >> 40) % 300);

			if (p)
				pool[j] = p;
		} else {
			free(pool[j]);
			pool[j] = malloc(8 + (x >> 44) % 200);
		}
	}
	for (int j = 0; j < 512; j++)
		free(pool[j]);
	return NULL;
}

int main(void)
{
	pthread_t t[4];

	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}
