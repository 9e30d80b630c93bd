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

struct sz_stack {
	struct sz_ent *e;
	uint32_t n, cap;
};

struct mt_sizes {
	struct sz_stack *s;       /* by stack id */
	size_t n, cap;
};

struct mt_sizes *mt_sizes_new(void)
{
	return calloc(1, sizeof(struct mt_sizes));
}

void mt_sizes_clear(struct mt_sizes *z)
{
	for (size_t i = 0; i < z->n; i++)
		z->s[i].n = 0;
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

int mt_sizes_add(struct mt_sizes *z, uint32_t stack, uint64_t size)
{
	unsigned k = mt_sizes_bucket_of(size);
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
	for (uint32_t i = 0; i < st->n; i++) {
		if (st->e[i].k == k) {
			st->e[i].calls++;
			st->e[i].bytes += size;
			return 0;
		}
	}
	if (st->n == st->cap) {
		uint32_t cap = st->cap ? 2 * st->cap : 2;
		struct sz_ent *e = realloc(st->e, cap * sizeof(*e));

		if (!e)
			return MT_E_NOMEM;
		st->e = e;
		st->cap = cap;
	}
	st->e[st->n].k = k;
	st->e[st->n].calls = 1;
	st->e[st->n].bytes = size;
	st->n++;
	return 0;
}

void mt_sizes_histogram(const struct mt_sizes *z, const struct mt_profile *only,
			struct mt_sizes_bucket *out)
{
	memset(out, 0, MT_SIZES_NBUCKETS * sizeof(*out));
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
}

struct mt_profile *mt_sizes_calls(const struct mt_sizes *z)
{
	struct mt_profile *p = mt_profile_new();

	if (!p)
		return NULL;
	for (size_t i = 0; i < z->n; i++) {
		const struct sz_stack *st = &z->s[i];
		struct mt_cost c = { 0, 0, 0 };

		if (!st->n)
			continue;
		for (uint32_t j = 0; j < st->n; j++) {
			c.bytes += (int64_t)st->e[j].bytes;
			c.blocks += (int64_t)st->e[j].calls;
		}
		c.allocs = c.blocks;
		if (mt_profile_add(p, (uint32_t)i, &c) < 0) {
			mt_profile_free(p);
			return NULL;
		}
	}
	return p;
}
