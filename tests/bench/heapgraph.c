/*
 * heapgraph.c - benchmark workload for `make bench`: a large live heap
 * for the leak check to scan, the same for memtrail's scan at exit and
 * LeakSanitizer's.
 *
 *   heapgraph NODES
 *
 * It builds a chained hash table of NODES nodes (24 to 136 B each, a key
 * string of its own, 16 to 80 B, and a pointer to an earlier node), all
 * reachable from a global: every block is scanned, none reported. Then:
 *   - built plainly, it returns from main: under `memtrail record` with
 *     MEMTRAIL_LEAK_SCAN_STATS=1 the scan at exit says what it took;
 *   - built with -fsanitize=leak -DHEAPGRAPH_LSAN, it runs
 *     __lsan_do_recoverable_leak_check() and prints on stderr
 *     "lsan scan: W ns wall, C ns cpu" (CPU: the process's and its
 *     waited-for children's, as LeakSanitizer scans from a cloned tracer
 *     task), then leaves with _exit (no second check at exit).
 * Either way stdout gets one checksum line, the same on every run.
 *
 * Not a test: the bench only checks that the line is the native run's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#ifdef HEAPGRAPH_LSAN
#include <sanitizer/lsan_interface.h>
#endif

struct node {
	struct node *next;    /* the chain */
	struct node *back;    /* an earlier node */
	char *key;
	long pad[];
};

struct node **table;
size_t nbuckets;

static uint64_t lcg = 12345;

static uint64_t rnd(void)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return lcg >> 33;
}

#ifdef HEAPGRAPH_LSAN
static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct rusage s, c;
	getrusage(RUSAGE_SELF, &s);
	getrusage(RUSAGE_CHILDREN, &c);
	return (uint64_t)(s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec +
			  c.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(s.ru_utime.tv_usec + s.ru_stime.tv_usec + c.ru_utime.tv_usec +
			  c.ru_stime.tv_usec) * 1000ull;
}
#endif

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	struct node *prev = NULL;
	uint64_t sum = 0;

	if (n <= 0) {
		fprintf(stderr, "usage: heapgraph NODES\n");
		return 2;
	}
	nbuckets = (size_t)n / 4 + 1;
	table = calloc(nbuckets, sizeof(*table));
	if (!table)
		return 1;
	for (long i = 0; i < n; i++) {
		size_t extra = (size_t)(rnd() % 15) * 8, klen = 16 + (size_t)(rnd() % 9) * 8;
		struct node *nd = malloc(sizeof(*nd) + extra);
		char *key = malloc(klen);
		if (!nd || !key)
			return 1;
		memset(key, 'a' + (int)(i % 26), klen - 1);
		key[klen - 1] = '\0';
		nd->key = key;
		nd->back = prev && (i & 1) ? prev : NULL;
		for (size_t k = 0; k < extra / 8; k++)
			nd->pad[k] = (long)rnd();
		size_t b = (size_t)rnd() % nbuckets;
		nd->next = table[b];
		table[b] = nd;
		prev = nd;
		sum += klen + extra;
	}
	printf("%ld nodes, %llu bytes of keys and padding\n", n, (unsigned long long)sum);
	fflush(stdout);
#ifdef HEAPGRAPH_LSAN
	struct timespec t0, t1;
	uint64_t c0 = cpu_ns();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int leaks = __lsan_do_recoverable_leak_check();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	uint64_t c1 = cpu_ns();
	fprintf(stderr, "lsan scan: %llu ns wall, %llu ns cpu%s\n",
		(unsigned long long)(ns_of(&t1) - ns_of(&t0)), (unsigned long long)(c1 - c0),
		leaks ? " (leaks found)" : "");
	_exit(0);
#endif
	return 0;
}
