/*
 * sizes.c - requested sizes per stack and power-of-two bucket (see sizes.h).
 *
 * Each stack keeps a short array of the buckets it has met: a call site
 * usually asks for one size or a few, so a scan of that array is the whole
 * cost of a call, and memory is one entry per (stack, bucket) pair. Not
 * here: the replay that feeds it (lib/agg.c), output.
 */
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "error.h"
#include "sizes.h"

struct sz_ent {
	uint64_t calls, bytes;
	unsigned k;
};

/*
 * A stack's buckets, in bucket order; bit k of the mask says bucket k is
 * there, so its place is the number of bits below k: one lookup per call,
 * however many sizes the stack asks for.
 */
struct sz_stack {
	uint64_t calls, bytes;    /* every call of the stack */
	struct sz_ent *e;         /* its buckets, with buckets on */
	uint32_t n, cap;
	uint64_t mask;            /* buckets 0 .. 63 */
	int has64;                /* bucket 64 (the last entry when present) */
};

struct mt_sizes {
	struct sz_stack *s;       /* by stack id */
	size_t n, cap;
	int buckets;              /* mt_sizes_buckets */
};

struct mt_sizes *mt_sizes_new(void)
{
	return calloc(1, sizeof(struct mt_sizes));
}

void mt_sizes_clear(struct mt_sizes *z)
{
	for (size_t i = 0; i < z->n; i++) {
		z->s[i].calls = z->s[i].bytes = 0;
		z->s[i].n = 0;
		z->s[i].mask = 0;
		z->s[i].has64 = 0;
	}
}

void mt_sizes_buckets(struct mt_sizes *z, int on)
{
	z->buckets = on;
}

void mt_sizes_free(struct mt_sizes *z)
{
	if (!z)
		return;
	for (size_t i = 0; i < z->cap; i++)
		free(z->s[i].e);
	free(z->s);
	free(z);
}

unsigned mt_sizes_bucket_of(uint64_t size)
{
	return size ? 64u - (unsigned)__builtin_clzll(size) : 0;
}

void mt_sizes_bucket_range(unsigned k, uint64_t *lo, uint64_t *hi)
{
	if (k == 0) {
		*lo = *hi = 0;
		return;
	}
	*lo = 1ull << (k - 1);
	*hi = k >= 64 ? UINT64_MAX : (1ull << k) - 1;
}

int mt_sizes_add(struct mt_sizes *z, uint32_t stack, uint64_t size, uint64_t count,
		 uint64_t asked)
{
	unsigned k = mt_sizes_bucket_of(asked);
	struct sz_stack *st;

	if (stack >= z->n) {
		if (stack >= z->cap) {
			size_t cap = z->cap ? 2 * z->cap : 256;
			struct sz_stack *s;

			while (cap <= stack)
				cap *= 2;
			s = realloc(z->s, cap * sizeof(*s));
			if (!s)
				return MT_E_NOMEM;
			memset(s + z->cap, 0, (cap - z->cap) * sizeof(*s));
			z->s = s;
			z->cap = cap;
		}
		z->n = (size_t)stack + 1;
	}
	st = &z->s[stack];
	st->calls += count;
	st->bytes += size;
	if (!z->buckets)
		return 0;
	{
		uint32_t i = k < 64 ? (uint32_t)__builtin_popcountll(st->mask & ((1ull << k) - 1)) :
			st->n - (uint32_t)st->has64;
		int present = k < 64 ? (int)(st->mask >> k & 1) : st->has64;

		if (present) {
			st->e[i].calls += count;
			st->e[i].bytes += size;
			return 0;
		}
		if (st->n == st->cap) {
			uint32_t cap = st->cap ? 2 * st->cap : 2;
			struct sz_ent *e = realloc(st->e, cap * sizeof(*e));

			if (!e)
				return MT_E_NOMEM;
			st->e = e;
			st->cap = cap;
		}
		memmove(&st->e[i + 1], &st->e[i], (st->n - i) * sizeof(*st->e));
		st->e[i].k = k;
		st->e[i].calls = count;
		st->e[i].bytes = size;
		st->n++;
		if (k < 64)
			st->mask |= 1ull << k;
		else
			st->has64 = 1;
	}
	return 0;
}

int mt_sizes_histogram(const struct mt_sizes *z, const struct mt_profile *only,
		       struct mt_sizes_bucket *out)
{
	memset(out, 0, MT_SIZES_NBUCKETS * sizeof(*out));
	if (!z->buckets)
		return MT_E_ARG;
	for (size_t i = 0; i < z->n; i++) {
		const struct sz_stack *st = &z->s[i];

		if (only) {
			struct mt_cost c = mt_profile_get(only, (uint32_t)i);

			if (!c.bytes && !c.blocks && !c.allocs)
				continue;
		}
		for (uint32_t j = 0; j < st->n; j++) {
			out[st->e[j].k].calls += st->e[j].calls;
			out[st->e[j].k].bytes += st->e[j].bytes;
		}
	}
	return 0;
}

struct mt_profile *mt_sizes_calls(const struct mt_sizes *z)
{
	struct mt_profile *p = mt_profile_new();

	if (!p)
		return NULL;
	for (size_t i = 0; i < z->n; i++) {
		const struct sz_stack *st = &z->s[i];
		struct mt_cost c = { (int64_t)st->bytes, (int64_t)st->calls, (int64_t)st->calls };

		if (!st->calls)
			continue;
		if (mt_profile_add(p, (uint32_t)i, &c) < 0) {
			mt_profile_free(p);
			return NULL;
		}
	}
	return p;
}
