/*
 * large.c - benchmark workload for `make bench`: large blocks, from 64 KiB to
 * 16 MiB, on both sides of glibc's mmap threshold, with realloc growth.
 *
 *   large ROUNDS
 *
 * Each round allocates 32 blocks (malloc or calloc) of log-uniform sizes in
 * [64 KiB, 16 MiB], writes one byte in every 16th page, frees them in a
 * scrambled order, then grows one buffer by realloc from 64 KiB to 16 MiB in
 * steps of x1.5 and frees it. Counts (computed by the program, not measured):
 * allocations = ROUNDS x (32 + 1 + growth steps), where each growth realloc
 * counts as one free and one allocation, as in memcheck; frees = allocations.
 * The checksum depends only on the data written, so the output is the same
 * with or without a profiler.
 *
 * Not a test: it only gives the benchmark a workload with few, big events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBLOCKS 32
#define MIN_SIZE (64ul << 10)
#define MAX_SIZE (16ul << 20)
#define STRIDE (16ul * 4096)

static unsigned long lcg_state = 42;

static unsigned long next_rand(void)
{
	lcg_state = lcg_state * 6364136223846793005ul + 1442695040888963407ul;
	return lcg_state >> 33;
}

/* Log-uniform in [MIN_SIZE, MAX_SIZE]: 8 doublings, 64 steps each. */
static size_t pick_size(void)
{
	unsigned step = (unsigned)(next_rand() % (8 * 64 + 1));
	double s = (double)MIN_SIZE;
	unsigned i;

	for (i = 0; i < step; i++)
		s *= 1.0108892860517005; /* 2^(1/64) */
	if (s > (double)MAX_SIZE)
		s = (double)MAX_SIZE;
	return (size_t)s + next_rand() % 4096;
}

static unsigned long touch(unsigned char *p, size_t size, unsigned seed)
{
	unsigned long sum = 0;
	size_t off;

	for (off = 0; off < size; off += STRIDE) {
		p[off] = (unsigned char)(seed + off / STRIDE);
		sum += p[off];
	}
	p[size - 1] = (unsigned char)seed;
	return sum + p[size - 1];
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 100;
	unsigned char *blk[NBLOCKS];
	unsigned long allocs = 0, frees = 0, sum = 0;
	unsigned r, i;

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NBLOCKS; i++) {
			size_t size = pick_size();

			blk[i] = (i % 4 == 3) ? calloc(1, size) : malloc(size);
			if (!blk[i]) {
				perror("large: malloc");
				return 1;
			}
			allocs++;
			sum += touch(blk[i], size, r + i);
		}
		for (i = 0; i < NBLOCKS; i++) {
			/* 13 is odd: a permutation of the 32 slots. */
			free(blk[(i * 13 + r) % NBLOCKS]);
			frees++;
		}

		size_t size = MIN_SIZE;
		unsigned char *buf = malloc(size), *nbuf;

		if (!buf) {
			perror("large: malloc");
			return 1;
		}
		allocs++;
		sum += touch(buf, size, r);
		while (size < MAX_SIZE) {
			size_t nsize = size + size / 2;

			if (nsize > MAX_SIZE)
				nsize = MAX_SIZE;
			nbuf = realloc(buf, nsize);
			if (!nbuf) {
				perror("large: realloc");
				return 1;
			}
			/* One free of the old block and one allocation. */
			allocs++;
			frees++;
			buf = nbuf;
			sum += buf[0] + touch(buf + size, nsize - size, r);
			size = nsize;
		}
		free(buf);
		frees++;
	}
	printf("large: rounds=%u allocations=%lu frees=%lu checksum=%lu\n",
	       rounds, allocs, frees, sum);
	return 0;
}
