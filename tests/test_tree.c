/*
 * test_tree.c - unit tests of lib/tree.c with a synthetic source: five
 * stacks over four fake return addresses (one of them an inline chain, one
 * in a module without symbols), so every node's cost below is a hand sum of
 * the stacks through it. Not here: libdw (test_symbols.c), printing
 * (test_export.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agg.h"
#include "error.h"
#include "format.h"
#include "replay.h"
#include "symbols.h"
#include "tree.h"

static const struct mt_frame f10[] = {
	{ "helper", "h.c", 5, "/bin/prog", 0x10, 1 },
	{ "compute", "c.c", 10, "/bin/prog", 0x10, 0 },
};
static const struct mt_frame f20[] = { { "main", "m.c", 3, "/bin/prog", 0x20, 0 } };
static const struct mt_frame f30[] = { { "other", "o.c", 7, "/bin/prog", 0x30, 0 } };
static const struct mt_frame f40[] = { { NULL, NULL, 0, "/usr/lib/libfoo.so", 0x40, 0 } };

static const uint64_t ips_helper[] = { 0x10, 0x20 };
static const uint64_t ips_other[] = { 0x30, 0x20 };
static const uint64_t ips_foo[] = { 0x40, 0x20 };

static const struct mt_stack stacks[] = {
	{ 0, MT_FN_MALLOC, 2, ips_helper, 0 },
	{ 1, MT_FN_MALLOC, 2, ips_other, 0 },
	{ 2, MT_FN_CALLOC, 2, ips_helper, 0 },
	{ 3, MT_FN_MALLOC, 2, ips_helper, 0 },
	{ 4, MT_FN_NEW, 2, ips_foo, 0 },
};
#define NSTACKS (sizeof(stacks) / sizeof(stacks[0]))

static int resolves;

static const struct mt_stack *fake_stack(void *ctx, uint32_t id)
{
	(void)ctx;
	return id < NSTACKS ? &stacks[id] : NULL;
}

static int fake_resolve(void *ctx, uint64_t ip, const struct mt_frame **frames, size_t *n)
{
	(void)ctx;
	resolves++;
	switch (ip) {
	case 0x10: *frames = f10; *n = 2; return 0;
	case 0x20: *frames = f20; *n = 1; return 0;
	case 0x30: *frames = f30; *n = 1; return 0;
	case 0x40: *frames = f40; *n = 1; return 0;
	}
	return MT_E_ARG;
}

static const struct mt_tree_source src = { fake_stack, fake_resolve, NULL, NULL };

struct fixture {
	struct mt_profile *p;
	struct mt_tree *t;
};

/* bytes, blocks, allocs per stack */
static const struct mt_cost costs[] = {
	{ 100, 1, 4 }, { 50, 2, 2 }, { 30, 1, 1 }, { 20, 1, 1 }, { 5, 1, 1 },
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->p = mt_profile_new();
	assert_non_null(f->p);
	for (uint32_t i = 0; i < NSTACKS; i++)
		assert_int_equal(mt_profile_add(f->p, i, &costs[i]), 0);
	resolves = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	mt_tree_free(f->t);
	mt_profile_free(f->p);
	free(f);
	return 0;
}

/* Asserts child i of n: label and cost; returns it. */
static const struct mt_tree_node *kid(const struct mt_tree_node *n, size_t i, const char *label,
				      int64_t bytes, int64_t blocks, int64_t allocs)
{
	const struct mt_tree_node *c = mt_tree_node_child(n, i);

	assert_non_null(c);
	assert_string_equal(mt_tree_node_label(c), label);
	assert_int_equal(mt_tree_node_cost(c)->bytes, bytes);
	assert_int_equal(mt_tree_node_cost(c)->blocks, blocks);
	assert_int_equal(mt_tree_node_cost(c)->allocs, allocs);
	assert_ptr_equal(mt_tree_node_parent(c), n);
	assert_int_equal(mt_tree_node_depth(c), mt_tree_node_depth(n) + 1);
	return c;
}

static void test_callee_first(void **state)
{
	struct fixture *f = *state;
	const struct mt_tree_node *r, *m, *h, *n;

	assert_int_equal(mt_tree_build(f->p, &src, NULL, &f->t), 0);
	r = mt_tree_root(f->t);
	assert_string_equal(mt_tree_node_label(r), "");
	assert_null(mt_tree_node_parent(r));
	assert_int_equal(mt_tree_node_cost(r)->bytes, 205);
	assert_int_equal(mt_tree_node_cost(r)->blocks, 6);
	assert_int_equal(mt_tree_node_cost(r)->allocs, 9);
	assert_int_equal(mt_tree_node_nchildren(r), 3);
	/* malloc = stacks 0, 1, 3 */
	m = kid(r, 0, "malloc", 170, 4, 7);
	assert_true(mt_tree_node_is_entry(m));
	assert_null(mt_tree_node_frame(m));
	kid(r, 1, "calloc", 30, 1, 1);
	n = kid(r, 2, "operator new", 5, 1, 1);
	n = kid(n, 0, "libfoo.so+0x40", 5, 1, 1);
	assert_ptr_equal(mt_tree_node_frame(n), &f40[0]);
	/* stacks 0 and 3 merge; the inline frame comes before its caller */
	assert_int_equal(mt_tree_node_nchildren(m), 2);
	h = kid(m, 0, "helper [h.c:5]", 120, 2, 5);
	assert_false(mt_tree_node_is_entry(h));
	assert_int_equal(mt_tree_node_frame(h)->inlined, 1);
	kid(m, 1, "other [o.c:7]", 50, 2, 2);
	n = kid(h, 0, "compute [c.c:10]", 120, 2, 5);
	n = kid(n, 0, "main [m.c:3]", 120, 2, 5);
	assert_int_equal(mt_tree_node_nchildren(n), 0);
	assert_null(mt_tree_node_child(n, 0));
	/* root, 3 entries, malloc: helper compute main other main,
	 * calloc: helper compute main, new: libfoo main */
	assert_int_equal(mt_tree_nnodes(f->t), 1 + 3 + 5 + 3 + 2);
	/* each distinct ip resolved once */
	assert_int_equal(resolves, 4);
}

static void test_inverted(void **state)
{
	struct fixture *f = *state;
	struct mt_tree_opts o = { 0 };
	const struct mt_tree_node *r, *m, *c, *h;

	o.inverted = 1;
	assert_int_equal(mt_tree_build(f->p, &src, &o, &f->t), 0);
	r = mt_tree_root(f->t);
	assert_int_equal(mt_tree_node_nchildren(r), 1);
	m = kid(r, 0, "main [m.c:3]", 205, 6, 9);
	assert_int_equal(mt_tree_node_nchildren(m), 3);
	c = kid(m, 0, "compute [c.c:10]", 150, 3, 6);
	kid(kid(m, 1, "other [o.c:7]", 50, 2, 2), 0, "malloc", 50, 2, 2);
	kid(kid(m, 2, "libfoo.so+0x40", 5, 1, 1), 0, "operator new", 5, 1, 1);
	h = kid(c, 0, "helper [h.c:5]", 150, 3, 6);
	assert_true(mt_tree_node_is_entry(kid(h, 0, "malloc", 120, 2, 5)));
	kid(h, 1, "calloc", 30, 1, 1);
}

static void test_depth(void **state)
{
	struct fixture *f = *state;
	struct mt_tree_opts o = { 0 };
	const struct mt_tree_node *r, *h;

	o.depth = 1;
	assert_int_equal(mt_tree_build(f->p, &src, &o, &f->t), 0);
	r = mt_tree_root(f->t);
	h = kid(kid(r, 0, "malloc", 170, 4, 7), 0, "helper [h.c:5]", 120, 2, 5);
	assert_int_equal(mt_tree_node_nchildren(h), 0);
	mt_tree_free(f->t);

	/* inverted: the outermost frame only, no entry point below it */
	o.inverted = 1;
	assert_int_equal(mt_tree_build(f->p, &src, &o, &f->t), 0);
	r = mt_tree_root(f->t);
	assert_int_equal(mt_tree_node_nchildren(kid(r, 0, "main [m.c:3]", 205, 6, 9)), 0);
}

/* Without the entry level: frame 0 under the root, merged across entries. */
static void test_skip_entry(void **state)
{
	struct fixture *f = *state;
	struct mt_tree_opts o = { 0 };
	const struct mt_tree_node *r;

	o.skip_entry = 1;
	assert_int_equal(mt_tree_build(f->p, &src, &o, &f->t), 0);
	r = mt_tree_root(f->t);
	assert_int_equal(mt_tree_node_nchildren(r), 3);
	kid(kid(r, 0, "helper [h.c:5]", 150, 3, 6), 0, "compute [c.c:10]", 150, 3, 6);
	kid(r, 1, "other [o.c:7]", 50, 2, 2);
	kid(r, 2, "libfoo.so+0x40", 5, 1, 1);
	assert_int_equal(mt_tree_gross(f->t).bytes, 205);
}

/*
 * Allocation sites first: frame 0 under the root, labelled with its entry
 * point, so malloc's and calloc's calls from helper stay apart (stacks 0
 * and 3: 100 + 20; stack 2: 30), then the callers as usual.
 */
static void test_sites(void **state)
{
	struct fixture *f = *state;
	struct mt_tree_opts o = { 0 };
	const struct mt_tree_node *r, *h;

	o.sites = 1;
	assert_int_equal(mt_tree_build(f->p, &src, &o, &f->t), 0);
	r = mt_tree_root(f->t);
	assert_int_equal(mt_tree_node_cost(r)->bytes, 205);
	assert_int_equal(mt_tree_node_nchildren(r), 4);
	h = kid(r, 0, "helper [h.c:5] via malloc", 120, 2, 5);
	assert_ptr_equal(mt_tree_node_frame(h), &f10[0]);
	assert_false(mt_tree_node_is_entry(h));
	kid(kid(h, 0, "compute [c.c:10]", 120, 2, 5), 0, "main [m.c:3]", 120, 2, 5);
	kid(r, 1, "other [o.c:7] via malloc", 50, 2, 2);
	kid(r, 2, "helper [h.c:5] via calloc", 30, 1, 1);
	kid(kid(r, 3, "libfoo.so+0x40 via operator new", 5, 1, 1), 0, "main [m.c:3]", 5, 1, 1);
	/* root, 4 sites, helper/malloc: compute main, other: main, helper/calloc:
	 * compute main, libfoo: main */
	assert_int_equal(mt_tree_nnodes(f->t), 1 + 4 + 2 + 1 + 2 + 1);
	/* the depth counts the site's frame */
	mt_tree_free(f->t);
	o.depth = 1;
	assert_int_equal(mt_tree_build(f->p, &src, &o, &f->t), 0);
	assert_int_equal(mt_tree_nnodes(f->t), 1 + 4);
}

/*
 * The functions, flat: self is the stacks' first frame (helper: stacks 0,
 * 2, 3 = 100 + 30 + 20; other: 50; the libfoo frame: 5), total every
 * function on the stack (compute under helper: 150; main on all: 205),
 * whichever tree layout they come from.
 */
static void test_fns(void **state)
{
	struct fixture *f = *state;
	static const struct { const char *name; int64_t self, total, blocks; } want[] = {
		{ "main", 0, 205, 6 }, { "compute", 0, 150, 3 }, { "helper", 150, 150, 3 },
		{ "other", 50, 50, 2 }, { "libfoo.so+0x40", 5, 5, 1 },
	};
	for (int sites = 0; sites < 2; sites++) {
		struct mt_tree_opts o = { .sites = sites };
		struct mt_tree_fn *fns;
		size_t n;

		mt_tree_free(f->t);
		assert_int_equal(mt_tree_build(f->p, &src, &o, &f->t), 0);
		assert_int_equal(mt_tree_fns(f->t, &fns, &n), 0);
		assert_int_equal(n, 5);
		mt_tree_fns_sort(fns, n, 1, MT_TREE_BY_BYTES);
		for (size_t i = 0; i < n; i++) {
			assert_string_equal(fns[i].name, want[i].name);
			assert_int_equal(fns[i].self.bytes, want[i].self);
			assert_int_equal(fns[i].total.bytes, want[i].total);
			assert_int_equal(fns[i].total.blocks, want[i].blocks);
		}
		/* by self: helper, other, libfoo, then compute and main (0, by name) */
		mt_tree_fns_sort(fns, n, 0, MT_TREE_BY_BYTES);
		assert_string_equal(fns[0].name, "helper");
		assert_int_equal(fns[0].self.allocs, 6);
		assert_string_equal(fns[1].name, "other");
		assert_string_equal(fns[2].name, "libfoo.so+0x40");
		assert_string_equal(fns[3].name, "compute");
		assert_string_equal(fns[4].name, "main");
		mt_tree_fns_free(fns, n);
	}
}

/*
 * The allocator's frames before the site: ld.so's inline calloc (stack 0:
 * _dl_new_object's 64 B), a static operator new under the standard
 * allocators' allocate() (stack 1: _M_allocate's 40 B), a frame of
 * libmemtrail.so (stack 2: xmalloc's 8 B), a stack of allocator frames
 * only (stack 3: 2 B, its entry point alone). Every stack ends in main.
 */
static const struct mt_frame a50[] = {
	{ "calloc", "include/rtld-malloc.h", 44, "/lib64/ld-linux-x86-64.so.2", 0x50, 1 },
	{ "_dl_new_object", "elf/dl-object.c", 92, "/lib64/ld-linux-x86-64.so.2", 0x50, 0 },
};
static const struct mt_frame a60[] = {
	{ "operator new(unsigned long)", NULL, 0, "/bin/prog", 0x60, 0 },
};
static const struct mt_frame a70[] = {
	{ "std::__new_allocator<int>::allocate(unsigned long, void const*)",
	  "new_allocator.h", 137, "/bin/prog", 0x70, 1 },
	{ "std::allocator_traits<std::allocator<int> >::allocate(std::allocator<int>&, "
	  "unsigned long)", "alloc_traits.h", 464, "/bin/prog", 0x70, 1 },
	{ "std::_Vector_base<int, std::allocator<int> >::_M_allocate(unsigned long)",
	  "stl_vector.h", 378, "/bin/prog", 0x70, 0 },
};
static const struct mt_frame a80[] = { { NULL, NULL, 0, "/opt/mt/libmemtrail.so", 0x80, 0 } };
static const struct mt_frame a90[] = { { "xmalloc", "x.c", 3, "/bin/prog", 0x90, 0 } };
static const struct mt_frame aa0[] = {
	{ "__libc_malloc", "malloc.c", 3287, "/lib/libc.so.6", 0xa0, 0 },
};

static const uint64_t ips_dl[] = { 0x50, 0x20 };
static const uint64_t ips_vec[] = { 0x60, 0x70, 0x20 };
static const uint64_t ips_x[] = { 0x80, 0x90, 0x20 };
static const uint64_t ips_libc[] = { 0xa0 };

static const struct mt_stack alloc_stacks[] = {
	{ 0, MT_FN_CALLOC, 2, ips_dl, 0 },
	{ 1, MT_FN_MALLOC, 3, ips_vec, 0 },
	{ 2, MT_FN_MALLOC, 3, ips_x, 0 },
	{ 3, MT_FN_MALLOC, 1, ips_libc, 0 },
};

static const struct mt_stack *alloc_stack(void *ctx, uint32_t id)
{
	(void)ctx;
	return id < 4 ? &alloc_stacks[id] : NULL;
}

static int alloc_resolve(void *ctx, uint64_t ip, const struct mt_frame **frames, size_t *n)
{
	switch (ip) {
	case 0x50: *frames = a50; *n = 2; return 0;
	case 0x60: *frames = a60; *n = 1; return 0;
	case 0x70: *frames = a70; *n = 3; return 0;
	case 0x80: *frames = a80; *n = 1; return 0;
	case 0x90: *frames = a90; *n = 1; return 0;
	case 0xa0: *frames = aa0; *n = 1; return 0;
	}
	return fake_resolve(ctx, ip, frames, n);
}

static void test_allocator_frames(void **state)
{
	struct fixture *f = *state;
	const struct mt_tree_source as = { alloc_stack, alloc_resolve, NULL, NULL };
	static const struct mt_cost ac[] = { { 64, 1, 1 }, { 40, 2, 3 }, { 8, 1, 1 }, { 2, 1, 1 } };
	static const struct mt_frame not_alloc[] = {
		{ "xmalloc", NULL, 0, "/bin/prog", 0, 0 },
		{ "malloc_consolidate", NULL, 0, "/lib/libc.so.6", 0, 0 },
		{ "std::allocator<int>::deallocate(int*, unsigned long)", NULL, 0, "/bin/prog", 0, 0 },
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)", NULL, 0,
		  "/bin/prog", 0, 0 },
		{ "operator delete(void*)", NULL, 0, "/usr/lib/libstdc++.so.6", 0, 0 },
		{ NULL, NULL, 0, "/opt/libmemtrailer.so", 0, 0 },
	};
	static const struct mt_frame is_alloc[] = {
		{ "operator new[](unsigned long, std::nothrow_t const&)", NULL, 0, NULL, 0, 0 },
		{ "operator new", NULL, 0, NULL, 0, 0 },
		{ "__GI___libc_realloc", NULL, 0, NULL, 0, 0 },
		{ "posix_memalign", NULL, 0, NULL, 0, 0 },
		{ "__gnu_cxx::new_allocator<char>::allocate(unsigned long, void const*)", NULL, 0,
		  NULL, 0, 0 },
		{ "std::__1::allocator<int>::allocate(unsigned long)", NULL, 0, NULL, 0, 0 },
		{ NULL, NULL, 0, "libmemtrail.so", 0, 0 },
	};
	const struct mt_tree_node *r, *n;
	struct mt_profile *p = mt_profile_new();
	struct mt_tree_fn *fns;
	size_t nf;

	for (size_t i = 0; i < sizeof(not_alloc) / sizeof(not_alloc[0]); i++)
		assert_false(mt_tree_frame_is_allocator(&not_alloc[i]));
	for (size_t i = 0; i < sizeof(is_alloc) / sizeof(is_alloc[0]); i++)
		assert_true(mt_tree_frame_is_allocator(&is_alloc[i]));
	assert_non_null(p);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(mt_profile_add(p, i, &ac[i]), 0);
	/* the sites, whole and pruned (at half of 114 B: the sites and the
	 * biggest one's caller) */
	for (int pruned = 0; pruned < 2; pruned++) {
		struct mt_tree_opts o = { .sites = 1, .prune_pct = pruned ? 50 : 0 };

		mt_tree_free(f->t);
		assert_int_equal(mt_tree_build(p, &as, &o, &f->t), 0);
		r = mt_tree_root(f->t);
		assert_int_equal(mt_tree_node_nchildren(r), 4);
		n = kid(r, 0, "_dl_new_object [elf/dl-object.c:92] via calloc", 64, 1, 1);
		assert_ptr_equal(mt_tree_node_frame(n), &a50[1]);
		kid(n, 0, "main [m.c:3]", 64, 1, 1);
		n = kid(r, 1, "std::_Vector_base<int, std::allocator<int> >::_M_allocate(unsigned long)"
			" [stl_vector.h:378] via malloc", 40, 2, 3);
		if (!pruned)
			kid(n, 0, "main [m.c:3]", 40, 2, 3);
		n = kid(r, 2, "xmalloc [x.c:3] via malloc", 8, 1, 1);
		n = kid(r, 3, "malloc", 2, 1, 1);
		assert_true(mt_tree_node_is_entry(n));
		assert_int_equal(mt_tree_node_nchildren(n), 0);
		assert_int_equal(mt_tree_nnodes(f->t), pruned ? 1 + 4 + 1 : 1 + 4 + 3);
		/* the depth counts from the site: one frame, the sites alone */
		o.depth = 1;
		mt_tree_free(f->t);
		assert_int_equal(mt_tree_build(p, &as, &o, &f->t), 0);
		assert_int_equal(mt_tree_nnodes(f->t), 1 + 4);
		kid(mt_tree_root(f->t), 1, "std::_Vector_base<int, std::allocator<int> >::"
		    "_M_allocate(unsigned long) [stl_vector.h:378] via malloc", 40, 2, 3);
	}
	/* the entry points' layout keeps every frame (report's default) */
	mt_tree_free(f->t);
	assert_int_equal(mt_tree_build(p, &as, NULL, &f->t), 0);
	r = mt_tree_root(f->t);
	n = kid(r, 0, "calloc", 64, 1, 1);
	kid(n, 0, "calloc [include/rtld-malloc.h:44]", 64, 1, 1);
	/* the functions: the same sites as self, no allocator among them */
	assert_int_equal(mt_tree_fns(f->t, &fns, &nf), 0);
	mt_tree_fns_sort(fns, nf, 0, MT_TREE_BY_BYTES);
	assert_int_equal(nf, 4);
	assert_string_equal(fns[0].name, "_dl_new_object");
	assert_int_equal(fns[0].self.bytes, 64);
	assert_string_equal(fns[1].name,
			    "std::_Vector_base<int, std::allocator<int> >::_M_allocate(unsigned long)");
	assert_int_equal(fns[1].self.bytes, 40);
	assert_int_equal(fns[1].self.allocs, 3);
	assert_string_equal(fns[2].name, "xmalloc");
	assert_int_equal(fns[2].self.bytes, 8);
	assert_string_equal(fns[3].name, "main");
	assert_int_equal(fns[3].self.bytes, 0);
	assert_int_equal(fns[3].total.bytes, 112);
	mt_tree_fns_free(fns, nf);
	mt_profile_free(p);
}

static int64_t root_bytes_with(struct fixture *f, const struct mt_tree_opts *o)
{
	mt_tree_free(f->t);
	f->t = NULL;
	assert_int_equal(mt_tree_build(f->p, &src, o, &f->t), 0);
	return mt_tree_node_cost(mt_tree_root(f->t))->bytes;
}

static void test_filters(void **state)
{
	struct fixture *f = *state;
	struct mt_tree_opts o = { 0 };
	struct mt_tree *t = NULL;

	o.include_function = "^compute$";         /* stacks 0, 2, 3 */
	assert_int_equal(root_bytes_with(f, &o), 150);
	o.include_function = NULL;
	o.exclude_function = "help";              /* stacks 1, 4 */
	assert_int_equal(root_bytes_with(f, &o), 55);
	o.exclude_function = "libfoo";            /* unknown function: matched by label */
	assert_int_equal(root_bytes_with(f, &o), 200);
	o.exclude_function = NULL;
	o.include_function = "^malloc$";          /* entry point: stacks 0, 1, 3 */
	assert_int_equal(root_bytes_with(f, &o), 170);
	o.include_function = "main|other";
	o.exclude_function = "other";             /* both: 0, 2, 3, 4 */
	assert_int_equal(root_bytes_with(f, &o), 155);
	o.include_function = o.exclude_function = NULL;
	o.include_module = "libfoo";
	assert_int_equal(root_bytes_with(f, &o), 5);
	o.include_module = NULL;
	o.exclude_module = "/libfoo\\.so$";
	assert_int_equal(root_bytes_with(f, &o), 200);
	o.exclude_module = "(";
	assert_int_equal(mt_tree_build(f->p, &src, &o, &t), MT_E_ARG);
	assert_null(t);
}

static void test_sort_keys(void **state)
{
	struct fixture *f = *state;
	const struct mt_tree_node *m;

	assert_int_equal(mt_tree_build(f->p, &src, NULL, &f->t), 0);
	m = mt_tree_node_child(mt_tree_root(f->t), 0);
	mt_tree_sort(f->t, MT_TREE_BY_BLOCKS);     /* helper 2 blocks = other 2: by label */
	kid(m, 0, "helper [h.c:5]", 120, 2, 5);
	kid(m, 1, "other [o.c:7]", 50, 2, 2);
	mt_tree_sort(f->t, MT_TREE_BY_NAME);
	kid(mt_tree_root(f->t), 0, "calloc", 30, 1, 1);
	kid(mt_tree_root(f->t), 1, "malloc", 170, 4, 7);
	kid(mt_tree_root(f->t), 2, "operator new", 5, 1, 1);
	mt_tree_sort(f->t, MT_TREE_BY_ALLOCS);
	kid(mt_tree_root(f->t), 0, "malloc", 170, 4, 7);
	kid(m, 0, "helper [h.c:5]", 120, 2, 5);
}

/* Signed costs: grown first (largest first), then shrunk (largest first). */
static void test_diff_order(void **state)
{
	struct fixture *f = *state;
	struct mt_profile *d = mt_profile_new();
	const struct mt_cost c[] = { { -100, -1, 0 }, { 40, 1, 1 }, { 0, 0, 3 }, { -300, -2, 0 }, { 7, 0, 0 } };
	const struct mt_tree_node *r, *m;

	for (uint32_t i = 0; i < NSTACKS; i++)
		assert_int_equal(mt_profile_add(d, i, &c[i]), 0);
	assert_int_equal(mt_tree_build(d, &src, NULL, &f->t), 0);
	r = mt_tree_root(f->t);
	assert_int_equal(mt_tree_node_cost(r)->bytes, -353);
	assert_int_equal(mt_tree_gross(f->t).bytes, 100 + 40 + 300 + 7);
	assert_int_equal(mt_tree_gross(f->t).blocks, 1 + 1 + 2 + 0);
	/* stack 2 has no live change: left out without all_stacks */
	kid(r, 0, "operator new", 7, 0, 0);
	m = kid(r, 1, "malloc", -360, -2, 1);
	assert_int_equal(mt_tree_node_nchildren(r), 2);
	kid(m, 0, "other [o.c:7]", 40, 1, 1);
	kid(m, 1, "helper [h.c:5]", -400, -3, 0);
	mt_tree_free(f->t);

	{
		struct mt_tree_opts o = { 0 };

		o.all_stacks = 1;
		assert_int_equal(mt_tree_build(d, &src, &o, &f->t), 0);
		r = mt_tree_root(f->t);
		kid(r, 1, "calloc", 0, 0, 3);
		kid(r, 2, "malloc", -360, -2, 1);
	}
	mt_profile_free(d);
}

/* A stack id the source does not know goes under "?". */
static void test_unknown_stack(void **state)
{
	struct fixture *f = *state;
	const struct mt_cost c = { 9, 1, 1 };

	assert_int_equal(mt_profile_add(f->p, 40, &c), 0);
	assert_int_equal(mt_tree_build(f->p, &src, NULL, &f->t), 0);
	assert_int_equal(mt_tree_node_cost(mt_tree_root(f->t))->bytes, 214);
	kid(mt_tree_root(f->t), 2, "?", 9, 1, 1);
	mt_tree_free(NULL);
}

/*
 * mt_tree_keep: the stacks the filters of test_filters keep, each with its
 * own cost; a stack costing nothing is left out, and one the source does
 * not know is kept (the tree's "?").
 */
static void test_keep(void **state)
{
	struct fixture *f = *state;
	struct mt_tree_opts o = { 0 };
	struct mt_profile *k = NULL;
	const struct mt_cost c = { 9, 1, 1 }, zero = { 0, 0, 0 };
	struct mt_cost t;

	o.include_function = "^compute$";         /* stacks 0, 2, 3 */
	o.depth = 1;                              /* plays no part */
	assert_int_equal(mt_tree_keep(f->p, &src, &o, &k), 0);
	t = mt_profile_total(k);
	assert_true(t.bytes == 150 && t.blocks == 3 && t.allocs == 6);
	assert_int_equal(mt_profile_get(k, 0).allocs, 4);
	assert_int_equal(mt_profile_get(k, 1).bytes, 0);
	assert_int_equal(mt_profile_get(k, 4).bytes, 0);
	mt_profile_free(k);
	o.include_function = NULL;
	o.exclude_module = "/libfoo\\.so$";      /* all but 4, and 40 */
	assert_int_equal(mt_profile_add(f->p, 40, &c), 0);
	assert_int_equal(mt_profile_add(f->p, 41, &zero), 0);
	assert_int_equal(mt_tree_keep(f->p, &src, &o, &k), 0);
	t = mt_profile_total(k);
	assert_true(t.bytes == 209 && t.blocks == 6);
	assert_int_equal(mt_profile_get(k, 40).bytes, 9);
	mt_profile_free(k);
	o.exclude_module = "(";
	assert_int_equal(mt_tree_keep(f->p, &src, &o, &k), MT_E_ARG);
	assert_null(k);
}

/*
 * p (pruned at min) against f (every node): the same labels, costs,
 * frames and entry marks, children in the same order, down to the nodes
 * below min, which have none in p.
 */
static size_t same_pruned(const struct mt_tree_node *p, const struct mt_tree_node *f,
			  int64_t min, int by_blocks)
{
	const struct mt_cost *c = mt_tree_node_cost(f);
	size_t nodes = 1;

	assert_string_equal(mt_tree_node_label(p), mt_tree_node_label(f));
	assert_memory_equal(mt_tree_node_cost(p), c, sizeof(*c));
	assert_ptr_equal(mt_tree_node_frame(p), mt_tree_node_frame(f));
	assert_int_equal(mt_tree_node_is_entry(p), mt_tree_node_is_entry(f));
	if ((by_blocks ? c->blocks : c->bytes) < min) {
		assert_int_equal(mt_tree_node_nchildren(p), 0);
		return nodes;
	}
	assert_int_equal(mt_tree_node_nchildren(p), mt_tree_node_nchildren(f));
	for (size_t i = 0; i < mt_tree_node_nchildren(f); i++)
		nodes += same_pruned(mt_tree_node_child(p, i), mt_tree_node_child(f, i), min,
				     by_blocks);
	return nodes;
}

/*
 * A pruned build (for a printout folding nodes below a share of the root)
 * keeps every node above that share exactly as the full build has it, and
 * the smaller ones without their children: callee and caller first, with
 * a depth, an unknown stack, on bytes and on blocks. Root: 205 B in 6
 * blocks (+ 9 B in 3 blocks of unknown stack 40).
 */
static void test_pruned(void **state)
{
	struct fixture *f = *state;
	static const struct { double pct; int by_blocks, inverted; unsigned depth; int sites; } cases[] = {
		{ 20, 0, 0, 0, 0 }, { 20, 0, 1, 0, 0 }, { 10, 0, 0, 1, 0 }, { 50, 1, 0, 0, 0 },
		{ 15, 1, 1, 2, 0 }, { 0.1, 0, 0, 0, 0 }, { 99, 0, 1, 0, 0 },
		{ 0.1, 0, 0, 0, 1 }, { 20, 0, 0, 0, 1 }, { 10, 1, 0, 2, 1 },
	};
	struct mt_cost c = { 9, 3, 3 };

	assert_int_equal(mt_profile_add(f->p, 40, &c), 0);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct mt_tree_opts o = { .inverted = cases[k].inverted, .depth = cases[k].depth,
					  .sites = cases[k].sites };
		struct mt_tree *full, *pruned;
		const struct mt_cost *rc;
		double key;
		size_t n;

		assert_int_equal(mt_tree_build(f->p, &src, &o, &full), 0);
		o.prune_pct = cases[k].pct;
		o.prune_by_blocks = cases[k].by_blocks;
		assert_int_equal(mt_tree_build(f->p, &src, &o, &pruned), 0);
		rc = mt_tree_node_cost(mt_tree_root(full));
		assert_int_equal(rc->bytes, 214);
		key = (double)(cases[k].by_blocks ? rc->blocks : rc->bytes);
		n = same_pruned(mt_tree_root(pruned), mt_tree_root(full),
				(int64_t)(cases[k].pct * key / 100.0 + 0.999999),
				cases[k].by_blocks);
		/* every node of the pruned tree was reached (the count has the root) */
		assert_int_equal(n, mt_tree_nnodes(pruned));
		assert_true(mt_tree_nnodes(pruned) <= mt_tree_nnodes(full));
		if (cases[k].pct <= 0.1)
			assert_int_equal(mt_tree_nnodes(pruned), mt_tree_nnodes(full));
		if (cases[k].pct >= 50)
			assert_true(mt_tree_nnodes(pruned) < mt_tree_nnodes(full));
		mt_tree_free(full);
		mt_tree_free(pruned);
	}
}

/* by_tag: a first level of tag paths, named by the source (or by number
 * without a name), the usual tree under each; never pruned. */
static const struct mt_stack tagged[] = {
	{ 0, MT_FN_MALLOC, 2, ips_helper, 0 },
	{ 1, MT_FN_MALLOC, 2, ips_other, 2 },
	{ 2, MT_FN_CALLOC, 2, ips_helper, 2 },
	{ 3, MT_FN_MALLOC, 2, ips_helper, 1 },
	{ 4, MT_FN_NEW, 2, ips_foo, 3 },
};

static const struct mt_stack *tagged_stack(void *ctx, uint32_t id)
{
	(void)ctx;
	return id < NSTACKS ? &tagged[id] : NULL;
}

static const char *tag_path(void *ctx, uint32_t id)
{
	(void)ctx;
	return id == 1 ? "parser" : id == 2 ? "parser/lexer" : NULL;
}

static void test_by_tag(void **state)
{
	struct fixture *f = *state;
	const struct mt_tree_source ts = { tagged_stack, fake_resolve, NULL, tag_path };
	struct mt_tree_opts o = { .by_tag = 1, .prune_pct = 50 };
	const struct mt_tree_node *r, *n;

	assert_int_equal(mt_tree_build(f->p, &ts, &o, &f->t), 0);
	r = mt_tree_root(f->t);
	assert_int_equal(mt_tree_node_nchildren(r), 4);
	kid(r, 0, "[no tag]", 100, 1, 4);
	n = kid(r, 1, "[tag parser/lexer]", 80, 3, 3);
	assert_null(mt_tree_node_frame(n));
	kid(n, 0, "malloc", 50, 2, 2);
	kid(n, 1, "calloc", 30, 1, 1);
	kid(r, 2, "[tag parser]", 20, 1, 1);
	/* a path the source cannot name: its number; all below 50 % kept */
	n = kid(r, 3, "[tag 3]", 5, 1, 1);
	n = kid(n, 0, "operator new", 5, 1, 1);
	kid(n, 0, "libfoo.so+0x40", 5, 1, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_callee_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_by_tag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inverted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_depth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_skip_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sites, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allocator_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sort_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_stack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pruned, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
