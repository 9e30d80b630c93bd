/*
 * tags.c - scoped tags: memtrail_tag_push("parser") / memtrail_tag_pop()
 * (include/memtrail.h), each thread's stack of tag paths, and the table of
 * distinct tag paths.
 *
 * The design, and why:
 *   - A tag path ("parser/lexer") is interned once, as (parent path, name)
 *     -> id, and written once as a TAG record. A thread's tag stack holds
 *     path ids, so the innermost path is one thread-local word, `cur`.
 *   - The hooks put `cur` into the stack identity (hooks.c's capture hashes
 *     it, tables.c compares it): the same frames under two tag paths are
 *     two stacks, and a STACK record names its tag path. So ALLOC and
 *     REALLOC records stay as they are, and a malloc pays one TLS load and
 *     no lock or table of its own for its tag: O(1), whatever the nesting.
 *   - A push looks its (parent, name) up in a small per-thread cache first,
 *     so a scope entered over and over (a request loop) takes no lock; only
 *     a path the thread has not met recently takes the log lock (core.c
 *     mt_rec_tag), and a path new to the process writes its TAG there.
 *   - The stack has a fixed depth (MT_MAX_TAG_DEPTH, the format's limit):
 *     pushes beyond it are counted, not recorded (their allocations count
 *     under the deepest recorded path), and the pops that match them only
 *     take the count down, so pushes and pops stay paired. A pop with
 *     nothing pushed is ignored. A push that cannot be interned (out of
 *     memory, recording stopped, a NULL or empty name, called from inside
 *     memtrail on this thread) pushes the enclosing path again, for the
 *     same reason.
 *   - Nothing here allocates from the heap: the table lives in mmap'ed
 *     memory (tables.c's mt_mem_alloc), the stacks and caches in
 *     initial-exec TLS.
 *
 * Not for: writing records or locking (core.c does both around
 * mt_tags_intern and mt_tags_emit), the hooks (hooks.c).
 */
#include <string.h>

#include "recorder.h"
#include "writer.h"

__thread struct mt_tagstack mt_tagtls __attribute__((tls_model("initial-exec")));

/* Pushes beyond the depth, over the run (a message the first time). */
static unsigned long overflowed;

/* ---- the table of tag paths (with the log lock) ------------------------------- */

struct tag {
	uint32_t parent;
	uint32_t len;
	char *name;           /* NUL-terminated, in the arena */
	uint64_t hash;
};

struct mt_tags {
	struct tag *tags;     /* [id - 1] */
	size_t n, cap;
	uint32_t *slots;      /* open addressing: id, 0 = empty */
	size_t mask;
	char *arena;          /* names, back to back; chunks never move */
	size_t arena_left;
};

static uint64_t tag_hash(uint32_t parent, const char *name, size_t len)
{
	uint64_t h = 0x9E3779B97F4A7C15ull * (parent + 1ull);

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

struct mt_tags *mt_tags_new(void)
{
	struct mt_tags *t = mt_mem_alloc_kept(sizeof(*t));

	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->mask = 255;
	t->slots = mt_mem_alloc_kept((t->mask + 1) * sizeof(*t->slots));
	if (!t->slots) {
		mt_mem_free(t);
		return NULL;
	}
	memset(t->slots, 0, (t->mask + 1) * sizeof(*t->slots));
	return t;
}

static int tags_rehash(struct mt_tags *t)
{
	size_t nmask = t->mask * 2 + 1;
	uint32_t *ns = mt_mem_alloc_kept((nmask + 1) * sizeof(*ns));

	if (!ns)
		return -1;
	memset(ns, 0, (nmask + 1) * sizeof(*ns));
	for (size_t id = 1; id <= t->n; id++) {
		size_t i = t->tags[id - 1].hash & nmask;

		while (ns[i])
			i = (i + 1) & nmask;
		ns[i] = (uint32_t)id;
	}
	mt_mem_free(t->slots);
	t->slots = ns;
	t->mask = nmask;
	return 0;
}

static char *arena_copy(struct mt_tags *t, const char *name, size_t len)
{
	char *p;

	if (len + 1 > t->arena_left) {
		size_t sz = len + 1 > 65536 ? len + 1 : 65536;

		/* the old chunk is kept: names point into it */
		if (!(t->arena = mt_mem_alloc_kept(sz)))
			return NULL;
		t->arena_left = sz;
	}
	p = t->arena;
	memcpy(p, name, len);
	p[len] = 0;
	t->arena += len + 1;
	t->arena_left -= len + 1;
	return p;
}

int64_t mt_tags_intern(struct mt_tags *t, uint32_t parent, const char *name, int *is_new)
{
	size_t len = strnlen(name, MT_MAX_STRING);
	uint64_t h = tag_hash(parent, name, len);
	size_t i = h & t->mask;
	struct tag *g;

	*is_new = 0;
	if (!len || parent > t->n)
		return -1;
	for (; t->slots[i]; i = (i + 1) & t->mask) {
		g = &t->tags[t->slots[i] - 1];
		if (g->hash == h && g->parent == parent && g->len == len &&
		    !memcmp(g->name, name, len))
			return t->slots[i];
	}
	if (t->n >= MT_MAX_TAGS)
		return -1;
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		struct tag *nt = mt_mem_alloc_kept(ncap * sizeof(*nt));

		if (!nt)
			return -1;
		if (t->n)
			memcpy(nt, t->tags, t->n * sizeof(*nt));
		mt_mem_free(t->tags);
		t->tags = nt;
		t->cap = ncap;
	}
	if ((t->n + 1) * 2 > t->mask + 1) {
		if (tags_rehash(t) < 0)
			return -1;
		for (i = h & t->mask; t->slots[i]; i = (i + 1) & t->mask)
			;
	}
	g = &t->tags[t->n];
	if (!(g->name = arena_copy(t, name, len)))
		return -1;
	g->parent = parent;
	g->len = (uint32_t)len;
	g->hash = h;
	t->slots[i] = (uint32_t)++t->n;
	*is_new = 1;
	return (int64_t)t->n;
}

int mt_tags_write(const struct mt_tags *t, struct mt_writer *w, uint64_t time, uint32_t id)
{
	const struct tag *g = &t->tags[id - 1];

	return mt_writer_tag(w, time, id, g->parent, g->name);
}

int mt_tags_emit(const struct mt_tags *t, struct mt_writer *w, uint64_t time)
{
	int rc = 0;

	for (uint32_t id = 1; id <= t->n && rc == 0; id++)
		rc = mt_tags_write(t, w, time, id);
	return rc;
}

/* ---- each thread's stack (no lock) --------------------------------------------- */

/*
 * The id of (parent, name) from this thread's cache, 0 if not there. The
 * cache keeps a copy of short names: the program's string may be a buffer
 * whose content changes at the same address.
 */
static uint32_t cache_find(struct mt_tagstack *ts, uint32_t parent, const char *name)
{
	for (unsigned k = 0; k < MT_TAG_CACHE; k++) {
		struct mt_tagcache *e = &ts->cache[k];

		if (e->id && e->parent == parent && !strncmp(e->name, name, sizeof(e->name)))
			return e->id;
	}
	return 0;
}

static void cache_put(struct mt_tagstack *ts, uint32_t parent, const char *name, uint32_t id)
{
	struct mt_tagcache *e = &ts->cache[ts->next++ % MT_TAG_CACHE];

	if (strnlen(name, sizeof(e->name)) >= sizeof(e->name))
		return;      /* too long to keep: looked up under the lock */
	strcpy(e->name, name);
	e->parent = parent;
	e->id = id;
}

MT_EXPORT void memtrail_tag_push_impl(const char *name)
{
	struct mt_tagstack *ts = &mt_tagtls;
	uint32_t id = ts->cur;

	mt_rec_init();
	if (ts->depth >= MT_MAX_TAG_DEPTH) {
		ts->over++;
		if (__atomic_fetch_add(&overflowed, 1, __ATOMIC_RELAXED) == 0)
			mt_say("tag scopes nested deeper than 64: the deeper ones are not recorded",
			       NULL);
		return;
	}
	if (name && *name && !mt_tls.guard && mt_rec_active) {
		uint32_t c = cache_find(ts, ts->cur, name);

		if (c) {
			id = c;
		} else if ((id = mt_rec_tag(ts->cur, name)) != ts->cur) {
			cache_put(ts, ts->cur, name, id);
		}
	}
	ts->ids[ts->depth++] = id;
	ts->cur = id;
}

MT_EXPORT void memtrail_tag_pop_impl(void)
{
	struct mt_tagstack *ts = &mt_tagtls;

	if (ts->over) {
		ts->over--;
		return;
	}
	if (!ts->depth)
		return;      /* more pops than pushes: nothing to undo */
	ts->depth--;
	ts->cur = ts->depth ? ts->ids[ts->depth - 1] : 0;
}

/* The same under the API's own names, for programs without the header
 * that declare them weak or look them up with dlsym (as for snapshots). */
MT_EXPORT void memtrail_tag_push(const char *name)
{
	memtrail_tag_push_impl(name);
}

MT_EXPORT void memtrail_tag_pop(void)
{
	memtrail_tag_pop_impl();
}
