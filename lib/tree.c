/*
 * tree.c - builds call trees from a profile (see tree.h for the contract).
 *
 * Labels are interned, so that a node's children are found through one hash
 * table keyed by (label pointer, parent). Every recorded ip is resolved,
 * formatted and matched against the filters once per build. Nodes live in
 * fixed blocks so that the pointers handed out stay valid. Not here:
 * folding, printing, the viewer's state.
 */
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "format.h"
#include "replay.h"
#include "symbols.h"
#include "tree.h"

#define NODE_BLOCK 1024

/*
 * Trees of many deep, distinct stacks have millions of nodes, most with
 * one child: a node is kept small, its only child needs no array, and only
 * the children of wide nodes go in the builder's index (WIDE).
 */
struct mt_tree_node {
	const char *label;
	struct mt_tree_node *parent;
	union {
		struct mt_tree_node *one;     /* capkids 0: the child, if any */
		struct mt_tree_node **many;   /* capkids > 0 */
	} kids;
	uint32_t nkids, capkids;
	struct mt_cost cost;
	const struct mt_frame *frame;
	uint32_t order;           /* creation order, the last tie-break */
	unsigned depth : 31;
	unsigned entry : 1;
};

/* Children of a node past this many are found through the builder's index. */
#define WIDE 8

static struct mt_tree_node *kid(const struct mt_tree_node *n, size_t i)
{
	return n->capkids ? n->kids.many[i] : n->kids.one;
}

/* An interned string, owned by the tree. */
struct strent {
	struct strent *all;       /* every string of the tree */
	struct strent *chain;     /* same hash */
	char s[];
};

struct mt_tree {
	struct mt_tree_node root;
	struct mt_tree_node **blocks;
	size_t nblocks, nnodes;   /* nnodes excludes the root */
	struct strent *strs;
	struct mt_cost gross;
};

/* ---- a small open-addressing hash table ---------------------------------- */

struct slot {
	uint64_t key1;
	const void *key2;
	void *val;
	int used;
};

struct table {
	struct slot *s;
	size_t cap, n;            /* cap a power of two */
};

static uint64_t mix(uint64_t k1, const void *k2)
{
	uint64_t h = k1 * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)k2 * 0xc2b2ae3d27d4eb4full;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	return h;
}

static struct slot *table_find(const struct table *t, uint64_t k1, const void *k2)
{
	size_t i;

	if (!t->cap)
		return NULL;
	for (i = mix(k1, k2) & (t->cap - 1); t->s[i].used; i = (i + 1) & (t->cap - 1))
		if (t->s[i].key1 == k1 && t->s[i].key2 == k2)
			return &t->s[i];
	return NULL;
}

static int table_put(struct table *t, uint64_t k1, const void *k2, void *val)
{
	size_t i;

	if (2 * (t->n + 1) > t->cap) {
		struct table nt = { NULL, t->cap ? 2 * t->cap : 256, 0 };

		nt.s = calloc(nt.cap, sizeof(*nt.s));
		if (!nt.s)
			return MT_E_NOMEM;
		for (i = 0; i < t->cap; i++)
			if (t->s[i].used)
				table_put(&nt, t->s[i].key1, t->s[i].key2, t->s[i].val);
		free(t->s);
		*t = nt;
	}
	for (i = mix(k1, k2) & (t->cap - 1); t->s[i].used; i = (i + 1) & (t->cap - 1))
		;
	t->s[i].key1 = k1;
	t->s[i].key2 = k2;
	t->s[i].val = val;
	t->s[i].used = 1;
	t->n++;
	return 0;
}

/* ---- the builder's state ------------------------------------------------- */

enum { RE_INC_FN, RE_EXC_FN, RE_INC_MOD, RE_EXC_MOD, RE_N };

/* One frame of a resolved ip. */
struct fent {
	const char *label;        /* interned */
	const struct mt_frame *frame;
	int alloc;                /* the allocator's (mt_tree_frame_is_allocator) */
};

/* A resolved ip: its frames, innermost first, and the filters it matches. */
struct ipinfo {
	size_t n;
	unsigned match;           /* bit RE_* set when a frame matches that filter */
	struct fent f[];
};

struct build {
	struct mt_tree *t;
	struct table strings;     /* hash -> chain of struct strent */
	struct table kids;        /* (label, parent) -> child */
	struct table ips;         /* ip -> struct ipinfo */
	const struct mt_tree_source *src;
	struct mt_tree_opts o;
	regex_t re[RE_N];
	int have_re[RE_N];
	struct fent *path;        /* the flattened frames of one stack */
	size_t path_cap;
	char *buf;                /* label formatting */
	size_t buf_cap;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static const char *intern(struct build *b, const char *s)
{
	uint64_t h = str_hash(s);
	struct slot *sl = table_find(&b->strings, h, NULL);
	struct strent *e;
	size_t len;

	for (e = sl ? sl->val : NULL; e; e = e->chain)
		if (!strcmp(e->s, s))
			return e->s;
	len = strlen(s);
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	memcpy(e->s, s, len + 1);
	if (sl) {
		e->chain = sl->val;
		sl->val = e;
	} else {
		e->chain = NULL;
		if (table_put(&b->strings, h, NULL, e) < 0) {
			free(e);
			return NULL;
		}
	}
	e->all = b->t->strs;
	b->t->strs = e;
	return e->s;
}

static struct mt_tree_node *new_node(struct build *b, struct mt_tree_node *parent,
				     const char *label)
{
	struct mt_tree *t = b->t;
	struct mt_tree_node *n;

	if (t->nnodes % NODE_BLOCK == 0) {
		struct mt_tree_node **bl = realloc(t->blocks, (t->nblocks + 1) * sizeof(*bl));

		if (!bl)
			return NULL;
		t->blocks = bl;
		bl[t->nblocks] = calloc(NODE_BLOCK, sizeof(**bl));
		if (!bl[t->nblocks])
			return NULL;
		t->nblocks++;
	}
	n = &t->blocks[t->nnodes / NODE_BLOCK][t->nnodes % NODE_BLOCK];
	n->order = (uint32_t)t->nnodes++;
	n->label = label;
	n->parent = parent;
	n->depth = parent->depth + 1;
	if (!parent->capkids && !parent->nkids) {
		parent->kids.one = n;
	} else {
		if (parent->nkids == parent->capkids || !parent->capkids) {
			uint32_t cap = parent->capkids ? 2 * parent->capkids : 4;
			struct mt_tree_node **k = malloc(cap * sizeof(*k));

			if (!k)
				return NULL;
			if (parent->capkids)
				memcpy(k, parent->kids.many, parent->nkids * sizeof(*k));
			else
				k[0] = parent->kids.one;
			if (parent->capkids)
				free(parent->kids.many);
			parent->kids.many = k;
			parent->capkids = cap;
		}
		parent->kids.many[parent->nkids] = n;
	}
	parent->nkids++;
	/* a node turning wide: its children so far go in the index */
	if (parent->nkids == WIDE + 1) {
		for (uint32_t i = 0; i < parent->nkids; i++)
			if (table_put(&b->kids, (uint64_t)(uintptr_t)parent->kids.many[i]->label,
				      parent, parent->kids.many[i]) < 0)
				return NULL;
	} else if (parent->nkids > WIDE &&
		   table_put(&b->kids, (uint64_t)(uintptr_t)label, parent, n) < 0) {
		return NULL;
	}
	return n;
}

/* The child of parent with this (interned) label, created when missing. */
static struct mt_tree_node *child(struct build *b, struct mt_tree_node *parent,
				  const char *label)
{
	struct slot *sl;

	if (parent->nkids <= WIDE) {
		for (uint32_t i = 0; i < parent->nkids; i++)
			if (kid(parent, i)->label == label)
				return kid(parent, i);
		return new_node(b, parent, label);
	}
	sl = table_find(&b->kids, (uint64_t)(uintptr_t)label, parent);
	return sl ? sl->val : new_node(b, parent, label);
}

static const char *format_label(struct build *b, const struct mt_frame *f)
{
	size_t need = mt_frame_format(f, b->buf, b->buf_cap);

	if (need >= b->buf_cap) {
		char *p = realloc(b->buf, need + 1);

		if (!p)
			return NULL;
		b->buf = p;
		b->buf_cap = need + 1;
		mt_frame_format(f, b->buf, b->buf_cap);
	}
	return intern(b, b->buf);
}

/* s with prefix p, or NULL. */
static const char *after(const char *s, const char *p)
{
	size_t n = strlen(p);

	return strncmp(s, p, n) ? NULL : s + n;
}

int mt_tree_frame_is_allocator(const struct mt_frame *f)
{
	/* the C allocation functions, also under glibc's internal names */
	static const char *const c_fns[] = {
		"malloc", "calloc", "realloc", "reallocarray", "memalign",
		"posix_memalign", "aligned_alloc", "valloc", "pvalloc",
	};
	/* the C++ standard allocators, whose allocate() only calls operator new */
	static const char *const cxx_allocators[] = {
		"std::allocator<", "std::__new_allocator<", "__gnu_cxx::new_allocator<",
		"std::allocator_traits<", "std::__1::allocator<",
		"std::__1::allocator_traits<",
	};
	const char *name = f->function, *base, *r;

	if (f->module) {
		base = strrchr(f->module, '/');
		base = base ? base + 1 : f->module;
		if (after(base, "libmemtrail.so"))
			return 1;
	}
	if (!name)
		return 0;
	/* operator new, new[], their nothrow and aligned forms */
	if ((r = after(name, "operator new")) && (!*r || *r == '(' || *r == '['))
		return 1;
	if ((r = after(name, "__GI_")))
		name = r;
	if ((r = after(name, "__libc_")) || (r = after(name, "__")))
		name = r;
	for (size_t i = 0; i < sizeof(c_fns) / sizeof(c_fns[0]); i++)
		if (!strcmp(name, c_fns[i]))
			return 1;
	name = f->function;
	if (after(name, "std::__1::__libcpp_allocate") ||
	    after(name, "std::__1::__libcpp_operator_new<"))
		return 1;
	for (size_t i = 0; i < sizeof(cxx_allocators) / sizeof(cxx_allocators[0]); i++)
		if (after(name, cxx_allocators[i]) && strstr(name, ">::allocate("))
			return 1;
	return 0;
}

static int filter_match(const struct build *b, int which, const char *s)
{
	return b->have_re[which] && s && !regexec(&b->re[which], s, 0, NULL, 0);
}

/* The resolved frames of ip, from the cache or resolved now. */
static int resolve_ip(struct build *b, uint64_t ip, const struct ipinfo **out)
{
	struct slot *sl = table_find(&b->ips, ip, NULL);
	const struct mt_frame *frames;
	struct ipinfo *in;
	size_t n = 0;
	int rc;

	if (sl) {
		*out = sl->val;
		return 0;
	}
	rc = b->src->resolve(b->src->ctx, ip, &frames, &n);
	if (rc < 0)
		return rc;
	in = calloc(1, sizeof(*in) + (n ? n : 1) * sizeof(in->f[0]));
	if (!in)
		return MT_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct mt_frame *f = &frames[i];

		in->f[i].frame = f;
		in->f[i].alloc = mt_tree_frame_is_allocator(f);
		in->f[i].label = format_label(b, f);
		if (!in->f[i].label) {
			free(in);
			return MT_E_NOMEM;
		}
		if (filter_match(b, RE_INC_FN, f->function ? f->function : in->f[i].label))
			in->match |= 1u << RE_INC_FN;
		if (filter_match(b, RE_EXC_FN, f->function ? f->function : in->f[i].label))
			in->match |= 1u << RE_EXC_FN;
		if (filter_match(b, RE_INC_MOD, f->module))
			in->match |= 1u << RE_INC_MOD;
		if (filter_match(b, RE_EXC_MOD, f->module))
			in->match |= 1u << RE_EXC_MOD;
	}
	in->n = n;
	if (table_put(&b->ips, ip, NULL, in) < 0) {
		free(in);
		return MT_E_NOMEM;
	}
	*out = in;
	return 0;
}

static int path_push(struct build *b, size_t n, const struct fent *f)
{
	if (n >= b->path_cap) {
		size_t cap = b->path_cap ? 2 * b->path_cap : 64;
		struct fent *p = realloc(b->path, cap * sizeof(*p));

		if (!p)
			return MT_E_NOMEM;
		b->path = p;
		b->path_cap = cap;
	}
	b->path[n] = *f;
	return 0;
}

static void add_cost(struct mt_tree_node *n, const struct mt_cost *c)
{
	n->cost.bytes += c->bytes;
	n->cost.blocks += c->blocks;
	n->cost.allocs += c->allocs;
}

static void add_gross(struct mt_tree *t, const struct mt_cost *c)
{
	t->gross.bytes += c->bytes < 0 ? -c->bytes : c->bytes;
	t->gross.blocks += c->blocks < 0 ? -c->blocks : c->blocks;
	t->gross.allocs += c->allocs < 0 ? -c->allocs : c->allocs;
}

/* The child of n for the program's entry point, its cost increased by c. */
static struct mt_tree_node *add_entry(struct build *b, struct mt_tree_node *n,
				      const char *entry, const struct mt_cost *c)
{
	n = child(b, n, entry);
	if (!n)
		return NULL;
	n->entry = 1;
	add_cost(n, c);
	return n;
}

/* The child of n for the frame f, its cost increased by c. */
static struct mt_tree_node *add_frame(struct build *b, struct mt_tree_node *n,
				      const struct fent *f, const struct mt_cost *c)
{
	n = child(b, n, f->label);
	if (!n)
		return NULL;
	if (!n->frame)
		n->frame = f->frame;
	add_cost(n, c);
	return n;
}

/* by_tag: the child of n for tag path id, its cost increased by c. */
static struct mt_tree_node *add_tag(struct build *b, struct mt_tree_node *n, uint32_t id,
				    const struct mt_cost *c)
{
	const char *path = id && b->src->tag ? b->src->tag(b->src->ctx, id) : NULL;
	size_t size = (path ? strlen(path) : 0) + 32;
	char *s = malloc(size);
	const char *label;

	if (!s)
		return NULL;
	if (!id)
		snprintf(s, size, "[no tag]");
	else if (path)
		snprintf(s, size, "[tag %s]", path);
	else
		snprintf(s, size, "[tag %" PRIu32 "]", id);
	label = intern(b, s);
	free(s);
	if (!label || !(n = child(b, n, label)))
		return NULL;
	add_cost(n, c);
	return n;
}

/*
 * The label of an allocation site (mt_tree_opts.sites): frame label l, then
 * " via " and the entry point, interned. NULL when out of memory.
 */
static const char *site_label(struct build *b, const char *l, const char *entry)
{
	size_t n = strlen(l) + strlen(entry) + sizeof(" via ");
	char *s = malloc(n);
	const char *r;

	if (!s)
		return NULL;
	snprintf(s, n, "%s via %s", l, entry);
	r = intern(b, s);
	free(s);
	return r;
}

/*
 * The frames of stack s into b->path (*np of them) and its entry point's
 * label; returns 1 when the filters keep the stack, 0 when they drop it,
 * or a negative MT_E_*. In the sites layout the allocator's frames before
 * the first frame outside it are left out of the path, *nskip of them
 * (the filters still see them).
 */
static int stack_path(struct build *b, const struct mt_stack *s, const char **entry,
		      size_t *np, size_t *nskip)
{
	int leading = b->o.sites && !b->o.inverted;
	unsigned match = 0;
	int rc;

	*np = 0;
	*nskip = 0;
	*entry = intern(b, mt_fn_name(s->fn));
	if (!*entry)
		return MT_E_NOMEM;
	if (filter_match(b, RE_INC_FN, *entry))
		match |= 1u << RE_INC_FN;
	if (filter_match(b, RE_EXC_FN, *entry))
		match |= 1u << RE_EXC_FN;
	for (uint32_t i = 0; i < s->depth; i++) {
		const struct ipinfo *in;

		rc = resolve_ip(b, s->ips[i], &in);
		if (rc < 0)
			return rc;
		match |= in->match;
		for (size_t k = 0; k < in->n; k++) {
			if (leading && in->f[k].alloc) {
				(*nskip)++;
				continue;
			}
			leading = 0;
			if ((rc = path_push(b, (*np)++, &in->f[k])) < 0)
				return rc;
		}
	}
	if (b->have_re[RE_INC_FN] && !(match & (1u << RE_INC_FN)))
		return 0;
	if (b->have_re[RE_INC_MOD] && !(match & (1u << RE_INC_MOD)))
		return 0;
	if (match & (1u << RE_EXC_FN | 1u << RE_EXC_MOD))
		return 0;
	return 1;
}

/* Adds one stack's cost along its branch. */
/* A node's own cost (its cost less its children's) into the gross. */
static void add_own(struct mt_tree *t, const struct mt_tree_node *n)
{
	struct mt_cost own = n->cost;

	for (size_t i = 0; i < n->nkids; i++) {
		own.bytes -= kid(n, i)->cost.bytes;
		own.blocks -= kid(n, i)->cost.blocks;
		own.allocs -= kid(n, i)->cost.allocs;
	}
	add_gross(t, &own);
}

/* net_paths: the gross again, as the sum of every branch's net cost. */
static void net_gross(struct mt_tree *t)
{
	memset(&t->gross, 0, sizeof(t->gross));
	add_own(t, &t->root);
	for (size_t i = 0; i < t->nnodes; i++)
		add_own(t, &t->blocks[i / NODE_BLOCK][i % NODE_BLOCK]);
}

static int add_stack(struct build *b, uint32_t id, const struct mt_cost *c)
{
	const struct mt_stack *s = b->src->stack(b->src->ctx, id);
	struct mt_tree_node *n = &b->t->root;
	const char *entry;
	size_t np, nskip, first, count;
	int rc;

	if (!s) {
		n = child(b, n, intern(b, "?"));
		if (!n)
			return MT_E_NOMEM;
		add_cost(&b->t->root, c);
		add_cost(n, c);
		add_gross(b->t, c);
		return 0;
	}
	rc = stack_path(b, s, &entry, &np, &nskip);
	if (rc <= 0)
		return rc;

	count = b->o.depth && b->o.depth < np ? b->o.depth : np;
	add_cost(n, c);
	add_gross(b->t, c);
	if (b->o.by_tag && !(n = add_tag(b, n, s->tag, c)))
		return MT_E_NOMEM;
	if (b->o.sites && !b->o.inverted) {
		struct fent site;

		if (!count)
			return add_entry(b, n, entry, c) ? 0 : MT_E_NOMEM;
		site = b->path[0];
		if (!(site.label = site_label(b, site.label, entry)) ||
		    !(n = add_frame(b, n, &site, c)))
			return MT_E_NOMEM;
		for (size_t i = 1; i < count; i++)
			if (!(n = add_frame(b, n, &b->path[i], c)))
				return MT_E_NOMEM;
		return 0;
	}
	if (!b->o.inverted) {
		if (!b->o.skip_entry && !(n = add_entry(b, n, entry, c)))
			return MT_E_NOMEM;
		for (size_t i = 0; i < count; i++)
			if (!(n = add_frame(b, n, &b->path[i], c)))
				return MT_E_NOMEM;
		return 0;
	}
	first = np - count;
	for (size_t i = np; i-- > first;)
		if (!(n = add_frame(b, n, &b->path[i], c)))
			return MT_E_NOMEM;
	if (count == np && !add_entry(b, n, entry, c))
		return MT_E_NOMEM;
	return 0;
}

static void build_fini(struct build *b)
{
	for (size_t i = 0; i < b->ips.cap; i++)
		if (b->ips.s[i].used)
			free(b->ips.s[i].val);
	free(b->ips.s);
	free(b->kids.s);
	free(b->strings.s);
	for (int i = 0; i < RE_N; i++)
		if (b->have_re[i])
			regfree(&b->re[i]);
	free(b->path);
	free(b->buf);
}

/*
 * The order of two figures of a tree or a list: grown (positive) first,
 * then zero, then shrunk; larger magnitude first; 0 when equal.
 */
static int cmp_signed(int64_t ka, int64_t kb)
{
	int ga = ka > 0 ? 0 : ka == 0 ? 1 : 2;
	int gb = kb > 0 ? 0 : kb == 0 ? 1 : 2;

	if (ga != gb)
		return ga - gb;
	if (ka != kb)
		return ga == 0 ? (ka < kb ? 1 : -1) : (ka < kb ? -1 : 1);
	return 0;
}

/* ---- functions, flat -------------------------------------------------------- */

struct fns {
	struct mt_tree_fn *a;
	size_t n, cap;
	struct table idx;         /* str_hash(name) -> first index + 1 */
	size_t *next;             /* the next index + 1 with the same hash, 0: none */
	unsigned *active;         /* nodes of the function on the walk's path */
	char *buf;
	size_t buf_cap;
};

/* The function of a frame node: its name, or its frame's label without the site's suffix. */
static const char *fn_name(struct fns *f, const struct mt_tree_node *n)
{
	size_t need;

	if (!n->frame)
		return n->label;
	if (n->frame->function)
		return n->frame->function;
	need = mt_frame_format(n->frame, f->buf, f->buf_cap);
	if (need >= f->buf_cap) {
		char *p = realloc(f->buf, need + 1);

		if (!p)
			return NULL;
		f->buf = p;
		f->buf_cap = need + 1;
		mt_frame_format(n->frame, f->buf, f->buf_cap);
	}
	return f->buf;
}

/* The index of the function called name, added when new; SIZE_MAX when out of memory. */
static size_t fn_index(struct fns *f, const char *name)
{
	uint64_t h = str_hash(name);
	struct slot *sl = table_find(&f->idx, h, NULL);
	size_t i;

	for (i = sl ? (size_t)(uintptr_t)sl->val : 0; i; i = f->next[i - 1])
		if (!strcmp(f->a[i - 1].name, name))
			return i - 1;
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct mt_tree_fn *a = realloc(f->a, cap * sizeof(*a));
		size_t *next = a ? realloc(f->next, cap * sizeof(*next)) : NULL;
		unsigned *active = next ? realloc(f->active, cap * sizeof(*active)) : NULL;

		if (a)
			f->a = a;
		if (next)
			f->next = next;
		if (!active)
			return SIZE_MAX;
		f->active = active;
		f->cap = cap;
	}
	i = f->n;
	memset(&f->a[i], 0, sizeof(f->a[i]));
	if (!(f->a[i].name = strdup(name)))
		return SIZE_MAX;
	f->active[i] = 0;
	f->next[i] = sl ? (size_t)(uintptr_t)sl->val : 0;
	if (sl)
		sl->val = (void *)(uintptr_t)(i + 1);
	else if (table_put(&f->idx, h, NULL, (void *)(uintptr_t)(i + 1)) < 0) {
		free(f->a[i].name);
		return SIZE_MAX;
	}
	f->n++;
	return i;
}

static void cost_add(struct mt_cost *to, const struct mt_cost *c)
{
	to->bytes += c->bytes;
	to->blocks += c->blocks;
	to->allocs += c->allocs;
}

/* first: n's children are the stacks' first frames (n the root or an entry point) */
static int fns_walk(struct fns *f, const struct mt_tree_node *n, int first)
{
	for (size_t i = 0; i < n->nkids; i++) {
		const struct mt_tree_node *c = kid(n, i);
		const char *name;
		size_t k;
		int rc;

		/* an entry point, or an allocator's frame before the site */
		if (c->entry || (first && c->frame && mt_tree_frame_is_allocator(c->frame))) {
			if ((rc = fns_walk(f, c, 1)) < 0)
				return rc;
			continue;
		}
		if (!(name = fn_name(f, c)) || (k = fn_index(f, name)) == SIZE_MAX)
			return MT_E_NOMEM;
		if (first)
			cost_add(&f->a[k].self, &c->cost);
		if (!f->active[k])
			cost_add(&f->a[k].total, &c->cost);
		f->active[k]++;
		rc = fns_walk(f, c, 0);
		f->active[k]--;
		if (rc < 0)
			return rc;
	}
	return 0;
}

int mt_tree_fns(const struct mt_tree *t, struct mt_tree_fn **out, size_t *n)
{
	struct fns f = { 0 };
	int rc = fns_walk(&f, &t->root, 1);

	free(f.idx.s);
	free(f.next);
	free(f.active);
	free(f.buf);
	if (rc < 0) {
		mt_tree_fns_free(f.a, f.n);
		*out = NULL;
		*n = 0;
		return rc;
	}
	*out = f.a;
	*n = f.n;
	return 0;
}

void mt_tree_fns_free(struct mt_tree_fn *fns, size_t n)
{
	for (size_t i = 0; fns && i < n; i++)
		free(fns[i].name);
	free(fns);
}

struct fns_key {
	int by_total;
	enum mt_tree_key key;
};

static int64_t fn_key(const struct mt_tree_fn *f, const struct fns_key *k)
{
	const struct mt_cost *c = k->by_total ? &f->total : &f->self;

	return k->key == MT_TREE_BY_BLOCKS ? c->blocks :
	       k->key == MT_TREE_BY_ALLOCS ? c->allocs : c->bytes;
}

/* As cmp_nodes: grown first, then zero, then shrunk, larger magnitude first. */
static int cmp_fns(const void *pa, const void *pb, void *arg)
{
	const struct mt_tree_fn *a = pa, *b = pb;
	const struct fns_key *k = arg;
	int c = k->key != MT_TREE_BY_NAME ? cmp_signed(fn_key(a, k), fn_key(b, k)) : 0;

	return c ? c : strcmp(a->name, b->name);
}

void mt_tree_fns_sort(struct mt_tree_fn *fns, size_t n, int by_total, enum mt_tree_key key)
{
	struct fns_key k = { by_total, key };

	if (n > 1)
		qsort_r(fns, n, sizeof(*fns), cmp_fns, &k);
}

/* ---- sorting ------------------------------------------------------------- */

static int64_t key_of(const struct mt_tree_node *n, enum mt_tree_key key)
{
	switch (key) {
	case MT_TREE_BY_BLOCKS:
		return n->cost.blocks;
	case MT_TREE_BY_ALLOCS:
		return n->cost.allocs;
	default:
		return n->cost.bytes;
	}
}

/* Grown (positive) first, then zero, then shrunk; larger magnitude first. */
static int cmp_nodes(const void *pa, const void *pb, void *arg)
{
	const struct mt_tree_node *a = *(const struct mt_tree_node *const *)pa;
	const struct mt_tree_node *b = *(const struct mt_tree_node *const *)pb;
	enum mt_tree_key key = *(const enum mt_tree_key *)arg;
	int c;

	if (key != MT_TREE_BY_NAME && (c = cmp_signed(key_of(a, key), key_of(b, key))) != 0)
		return c;
	c = strcmp(a->label, b->label);
	if (c)
		return c;
	return a->order < b->order ? -1 : a->order > b->order;
}

static void sort_node(struct mt_tree_node *n, enum mt_tree_key *key)
{
	if (n->nkids > 1)
		qsort_r(n->kids.many, n->nkids, sizeof(*n->kids.many), cmp_nodes, key);
}

void mt_tree_sort(struct mt_tree *t, enum mt_tree_key key)
{
	sort_node(&t->root, &key);
	for (size_t i = 0; i < t->nnodes; i++)
		sort_node(&t->blocks[i / NODE_BLOCK][i % NODE_BLOCK], &key);
}

/* ---- building ------------------------------------------------------------ */

/* Sets b up for source src and options o: the filters compiled, an empty tree. */
static int build_init(struct build *b, const struct mt_tree_source *src,
		      const struct mt_tree_opts *o)
{
	static const struct mt_tree_opts defaults;
	const char *pat[RE_N];

	memset(b, 0, sizeof(*b));
	b->o = o ? *o : defaults;
	b->src = src;
	pat[RE_INC_FN] = b->o.include_function;
	pat[RE_EXC_FN] = b->o.exclude_function;
	pat[RE_INC_MOD] = b->o.include_module;
	pat[RE_EXC_MOD] = b->o.exclude_module;
	for (int i = 0; i < RE_N; i++) {
		if (!pat[i])
			continue;
		if (regcomp(&b->re[i], pat[i], REG_EXTENDED | REG_NOSUB))
			return MT_E_ARG;
		b->have_re[i] = 1;
	}
	b->t = calloc(1, sizeof(*b->t));
	if (!b->t)
		return MT_E_NOMEM;
	b->t->root.label = "";
	return 0;
}

/* ---- building top down, pruned ------------------------------------------------ */

/*
 * One stack in the pruned build: where it is along its branch. A branch is
 * the entry point (unless skipped) then the stack's frames, innermost
 * first, or, inverted, its frames outermost first then the entry point
 * (when no frame was cut by the depth); ip i's inline frame k is next.
 */
struct member {
	const struct mt_stack *s;
	const char *entry;
	const char *label;        /* of the next item, for grouping */
	const struct mt_frame *frame;
	struct mt_cost c;
	uint32_t id;
	uint32_t left;            /* items still to come */
	int32_t i, k;             /* the next frame (ip i, inline frame k) */
	int entry_next;           /* the next item is the entry point */
	int site_next;            /* the next item is frame 0 as a site (sites) */
};

/* The label and frame of m's next item (m->left > 0). */
static int member_peek(struct build *b, struct member *m)
{
	const struct ipinfo *in;
	int rc;

	if (m->entry_next) {
		m->label = m->entry;
		m->frame = NULL;
		return 0;
	}
	rc = resolve_ip(b, m->s->ips[m->i], &in);
	if (rc < 0)
		return rc;
	m->label = in->f[m->k].label;
	m->frame = in->f[m->k].frame;
	if (m->site_next && !(m->label = site_label(b, m->label, m->entry)))
		return MT_E_NOMEM;
	return 0;
}

/* Moves m past its next item. */
static int member_next(struct build *b, struct member *m)
{
	const struct ipinfo *in;
	int rc;

	m->left--;
	m->site_next = 0;
	if (m->entry_next) {
		m->entry_next = 0;
		return 0;
	}
	if (!b->o.inverted) {
		for (m->k++;; m->i++, m->k = 0) {
			if ((uint32_t)m->i >= m->s->depth)
				return 0;
			if ((rc = resolve_ip(b, m->s->ips[m->i], &in)) < 0)
				return rc;
			if ((size_t)m->k < in->n)
				return 0;
		}
	}
	for (m->k--; m->k < 0;) {
		if (--m->i < 0) {
			/* past the outermost frame: the entry point, if left */
			m->entry_next = m->left > 0;
			return 0;
		}
		if ((rc = resolve_ip(b, m->s->ips[m->i], &in)) < 0)
			return rc;
		m->k = (int32_t)in->n - 1;
	}
	return 0;
}

static int cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	if (x->label != y->label)
		return (uintptr_t)x->label < (uintptr_t)y->label ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Gives node n, on whose branch members m[0..nm) all are, its children:
 * one per distinct next item, with the members' summed costs, expanded in
 * turn when significant. Each child's order is its first stack's id, the
 * order the stack-by-stack build makes them in.
 */
static int expand(struct build *b, struct mt_tree_node *n, struct member *m, size_t nm,
		  double min)
{
	size_t lo = 0, hi;
	int rc;

	/* members ending here hold their cost in n already */
	for (size_t j = 0; j < nm; j++)
		if (m[j].left && (rc = member_peek(b, &m[j])) < 0)
			return rc;
	if (nm > 1)
		qsort(m, nm, sizeof(*m), cmp_member);
	while (lo < nm) {
		struct mt_tree_node *c;
		uint32_t first = UINT32_MAX;
		double key;

		if (!m[lo].left) {
			lo++;
			continue;
		}
		for (hi = lo; hi < nm && m[hi].left && m[hi].label == m[lo].label; hi++)
			if (m[hi].id < first)
				first = m[hi].id;
		c = new_node(b, n, m[lo].label);
		if (!c)
			return MT_E_NOMEM;
		c->order = first;
		c->frame = m[lo].frame;
		c->entry = m[lo].entry_next;
		for (size_t j = lo; j < hi; j++) {
			add_cost(c, &m[j].c);
			if ((rc = member_next(b, &m[j])) < 0)
				return rc;
		}
		key = (double)(b->o.prune_by_blocks ? c->cost.blocks : c->cost.bytes);
		if (key >= min && (rc = expand(b, c, m + lo, hi - lo, min)) < 0)
			return rc;
		lo = hi;
	}
	return 0;
}

/* The tree of p built top down, pruned (mt_tree_opts.prune_pct). */
static int build_pruned(struct build *b, const struct mt_profile *p)
{
	size_t n = mt_profile_nstacks(p), nm = 0;
	struct member *m = calloc(n ? n : 1, sizeof(*m));
	struct mt_tree_node *root = &b->t->root, *unknown = NULL;
	double total, min;
	int rc = 0;

	if (!m)
		return MT_E_NOMEM;
	for (uint32_t id = 0; id < n; id++) {
		struct mt_cost c = mt_profile_get(p, id);
		const struct mt_stack *s;
		struct member *x = &m[nm];
		size_t np, nskip, count;

		if (!c.bytes && !c.blocks && (!b->o.all_stacks || !c.allocs))
			continue;
		if (!(s = b->src->stack(b->src->ctx, id))) {
			if (!unknown && !(unknown = child(b, root, intern(b, "?")))) {
				rc = MT_E_NOMEM;
				goto out;
			}
			add_cost(root, &c);
			add_cost(unknown, &c);
			add_gross(b->t, &c);
			continue;
		}
		rc = stack_path(b, s, &x->entry, &np, &nskip);
		if (rc < 0)
			goto out;
		if (!rc)
			continue;
		rc = 0;
		add_cost(root, &c);
		add_gross(b->t, &c);
		count = b->o.depth && b->o.depth < np ? b->o.depth : np;
		x->s = s;
		x->c = c;
		x->id = id;
		if (!b->o.inverted) {
			x->entry_next = b->o.sites ? !count : !b->o.skip_entry;
			x->left = (uint32_t)(count + nskip) + (uint32_t)x->entry_next;
			x->i = 0;
			x->k = 0;
			/* to the first ip with a frame */
			while (count && (uint32_t)x->i < s->depth) {
				const struct ipinfo *in;

				if ((rc = resolve_ip(b, s->ips[x->i], &in)) < 0)
					goto out;
				if (in->n)
					break;
				x->i++;
			}
			/* past the allocator's frames that stack_path left out */
			for (size_t j = 0; count && j < nskip; j++)
				if ((rc = member_next(b, x)) < 0)
					goto out;
			if (!count)
				x->left -= (uint32_t)nskip;
			x->site_next = b->o.sites && count;
		} else {
			/* the outermost frame, then inward; past the depth, no entry */
			x->left = (uint32_t)count + (count == np);
			x->i = (int32_t)s->depth;
			x->k = -1;
			x->entry_next = 0;
			if (count) {
				x->left++;
				if ((rc = member_next(b, x)) < 0)   /* onto the last frame */
					goto out;
			} else {
				x->entry_next = x->left > 0;
			}
		}
		nm++;
	}
	total = (double)(b->o.prune_by_blocks ? root->cost.blocks : root->cost.bytes);
	min = b->o.prune_pct * total / 100.0;
	rc = expand(b, root, m, nm, min);
out:
	free(m);
	return rc;
}

int mt_tree_build(const struct mt_profile *p, const struct mt_tree_source *src,
		  const struct mt_tree_opts *o, struct mt_tree **out)
{
	struct build b;
	size_t n;
	int rc;

	*out = NULL;
	rc = build_init(&b, src, o);
	if (rc < 0)
		goto fail;
	n = mt_profile_nstacks(p);
	/* the pruned builder knows no tag level: by_tag builds it all */
	if (b.o.prune_pct > 0 && !b.o.net_paths && !b.o.by_tag) {
		rc = build_pruned(&b, p);
		if (rc < 0)
			goto fail;
	}
	for (uint32_t id = 0; !(b.o.prune_pct > 0 && !b.o.net_paths && !b.o.by_tag) && id < n;
	     id++) {
		struct mt_cost c = mt_profile_get(p, id);

		if (!c.bytes && !c.blocks && (!b.o.all_stacks || !c.allocs))
			continue;
		rc = add_stack(&b, id, &c);
		if (rc < 0)
			goto fail;
	}
	if (b.o.net_paths)
		net_gross(b.t);
	mt_tree_sort(b.t, MT_TREE_BY_BYTES);
	build_fini(&b);
	*out = b.t;
	return 0;
fail:
	mt_tree_free(b.t);
	build_fini(&b);
	return rc;
}

int mt_tree_keep(const struct mt_profile *p, const struct mt_tree_source *src,
		 const struct mt_tree_opts *o, struct mt_profile **out)
{
	struct build b;
	struct mt_profile *kept = NULL;
	size_t n = mt_profile_nstacks(p);
	int rc;

	*out = NULL;
	rc = build_init(&b, src, o);
	if (rc == 0 && !(kept = mt_profile_new()))
		rc = MT_E_NOMEM;
	for (uint32_t id = 0; rc == 0 && id < n; id++) {
		struct mt_cost c = mt_profile_get(p, id);
		const struct mt_stack *s;
		const char *entry;
		size_t np, nskip;

		if (!c.bytes && !c.blocks && !c.allocs)
			continue;
		s = src->stack(src->ctx, id);
		/* a stack the source lacks: the tree's "?" branch keeps it */
		rc = s ? stack_path(&b, s, &entry, &np, &nskip) : 1;
		if (rc == 1)
			rc = mt_profile_add(kept, id, &c);
	}
	mt_tree_free(b.t);
	build_fini(&b);
	if (rc < 0) {
		mt_profile_free(kept);
		return rc;
	}
	*out = kept;
	return 0;
}

void mt_tree_free(struct mt_tree *t)
{
	struct strent *e, *next;

	if (!t)
		return;
	if (t->root.capkids)
		free(t->root.kids.many);
	for (size_t i = 0; i < t->nnodes; i++)
		if (t->blocks[i / NODE_BLOCK][i % NODE_BLOCK].capkids)
			free(t->blocks[i / NODE_BLOCK][i % NODE_BLOCK].kids.many);
	for (size_t i = 0; i < t->nblocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	for (e = t->strs; e; e = next) {
		next = e->all;
		free(e);
	}
	free(t);
}

/* ---- the standard source ------------------------------------------------- */

static const struct mt_stack *std_stack(void *ctx, uint32_t id)
{
	const struct mt_tree_std *std = ctx;

	if (id >= mt_replay_nstacks(std->replay))
		return NULL;
	return mt_replay_stack(std->replay, id);
}

static int std_resolve(void *ctx, uint64_t ip, const struct mt_frame **frames, size_t *n)
{
	const struct mt_tree_std *std = ctx;

	return mt_symbols_resolve(std->symbols, ip, frames, n);
}

static const char *std_tag(void *ctx, uint32_t id)
{
	const struct mt_tree_std *std = ctx;

	return mt_replay_tag(std->replay, id);
}

int mt_tree_std_init_mods(struct mt_tree_std *std, struct mt_replay *r,
			  const struct mt_module *const *mods, size_t n)
{
	int rc;

	std->replay = r;
	std->symbols = mt_symbols_new();
	if (!std->symbols)
		return MT_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		rc = mt_symbols_add_module(std->symbols, mods ? mods[i] : mt_replay_module(r, i));
		if (rc < 0) {
			mt_symbols_free(std->symbols);
			std->symbols = NULL;
			return rc;
		}
	}
	std->source.stack = std_stack;
	std->source.resolve = std_resolve;
	std->source.tag = std_tag;
	std->source.ctx = std;
	return 0;
}

int mt_tree_std_init(struct mt_tree_std *std, struct mt_replay *r)
{
	return mt_tree_std_init_mods(std, r, NULL, mt_replay_nmodules(r));
}

void mt_tree_std_fini(struct mt_tree_std *std)
{
	mt_symbols_free(std->symbols);
	std->symbols = NULL;
}

/* ---- walking ------------------------------------------------------------- */

const struct mt_tree_node *mt_tree_root(const struct mt_tree *t)
{
	return &t->root;
}

struct mt_cost mt_tree_gross(const struct mt_tree *t)
{
	return t->gross;
}

size_t mt_tree_nnodes(const struct mt_tree *t)
{
	return t->nnodes + 1;
}

const char *mt_tree_node_label(const struct mt_tree_node *n)
{
	return n->label;
}

const struct mt_cost *mt_tree_node_cost(const struct mt_tree_node *n)
{
	return &n->cost;
}

const struct mt_frame *mt_tree_node_frame(const struct mt_tree_node *n)
{
	return n->frame;
}

int mt_tree_node_is_entry(const struct mt_tree_node *n)
{
	return n->entry;
}

const struct mt_tree_node *mt_tree_node_parent(const struct mt_tree_node *n)
{
	return n->parent;
}

unsigned mt_tree_node_depth(const struct mt_tree_node *n)
{
	return n->depth;
}

size_t mt_tree_node_nchildren(const struct mt_tree_node *n)
{
	return n->nkids;
}

const struct mt_tree_node *mt_tree_node_child(const struct mt_tree_node *n, size_t i)
{
	return i < n->nkids ? kid(n, i) : NULL;
}
