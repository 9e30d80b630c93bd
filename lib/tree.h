/*
 * tree.h - call trees built from a profile (lib/agg.h): the model behind
 * every tree of `memtrail report` and the tree pane of `memtrail view`.
 *
 * Each stack of the profile becomes one branch. Each recorded ip expands to
 * its frames (the inlined functions at that address, innermost first, then
 * the function they were inlined into), and a frame is identified by its
 * label, mt_frame_format()'s "function [file:line]" or "module+0xOFF".
 *   callee first (default): root -> entry point (mt_fn_name: "malloc",
 *     "operator new"...) -> frame 0 -> frame 1 ... outward to main/_start.
 *   inverted (caller first): root -> outermost frame ... -> frame 0 ->
 *     entry point.
 *   allocation sites (sites): root -> the site, labelled "LABEL via ENTRY"
 *     -> its caller ... outward. The site is the first frame outside the
 *     allocator and memtrail (mt_tree_frame_is_allocator): the recorder's
 *     stacks start at the caller of the entry point, and the frames before
 *     the site that still belong to the allocator (ld.so's inline malloc,
 *     a static operator new, std::allocator<T>::allocate) are left out; a
 *     stack with no frame outside them is its entry point alone.
 * Siblings with the same label are merged; a node's cost is the sum of the
 * stacks through it, the root's the total of the stacks kept.
 * Grouped by tag (by_tag): one more level under the root, a node per tag
 * path of the stacks (memtrail_tag_push scopes), "[tag PATH]" or
 * "[no tag]", and the tree as above under each.
 *
 * Filters, applied per stack before building: include_function keeps only
 * stacks with a frame whose function name (or label, when the function is
 * unknown) or entry point name matches; exclude_function drops every stack
 * with such a frame; include_module / exclude_module do the same with the
 * frames' module paths. Patterns are POSIX extended regexes, unanchored.
 *
 * Not here: folding below a threshold and --top (printing, lib/report.c),
 * the viewer's expanded/selected state (viewer/).
 */
#ifndef MT_TREE_H
#define MT_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "agg.h"

struct mt_tree;
struct mt_tree_node;
struct mt_frame;
struct mt_stack;
struct mt_module;
struct mt_replay;
struct mt_symbols;

/*
 * Where the builder gets stacks and frames. stack() returns the stack with
 * that id or NULL (then the stack's cost is put under one "?" branch).
 * resolve() maps a recorded ip to >= 1 frames, innermost first, valid while
 * the tree is being built; it returns 0 or a negative MT_E_*.
 */
struct mt_tree_source {
	const struct mt_stack *(*stack)(void *ctx, uint32_t id);
	int (*resolve)(void *ctx, uint64_t ip, const struct mt_frame **frames, size_t *nframes);
	void *ctx;
	/* The path of tag path id (mt_stack.tag, not 0), for by_tag; NULL
	 * (the callback, or its result): the path is shown as its number. */
	const char *(*tag)(void *ctx, uint32_t id);
};

/* The usual source: a replay's stacks and a symbolizer of its modules. */
struct mt_tree_std {
	struct mt_replay *replay;
	struct mt_symbols *symbols;
	struct mt_tree_source source;
};

/*
 * Fills *std for the replay r after a run: creates a symbolizer with r's
 * modules and points std->source at both. Returns 0 or a negative MT_E_*.
 * mt_tree_std_fini frees the symbolizer (the replay stays the caller's).
 */
int mt_tree_std_init(struct mt_tree_std *std, struct mt_replay *r);
/*
 * The same during a run, when the replay's tables belong to its decoder
 * (lib/replay.c): with the n modules its consumer heard of so far
 * (on_module), in the order it heard of them.
 */
int mt_tree_std_init_mods(struct mt_tree_std *std, struct mt_replay *r,
			  const struct mt_module *const *mods, size_t n);
void mt_tree_std_fini(struct mt_tree_std *std);

struct mt_tree_opts {
	int inverted;               /* caller first */
	unsigned depth;             /* frames kept per branch (entry point not counted); 0 = all */
	int all_stacks;             /* also stacks whose only cost is allocs (bytes = blocks = 0) */
	const char *include_function, *exclude_function;  /* POSIX EREs or NULL */
	const char *include_module, *exclude_module;
	int skip_entry;             /* callee first without the entry-point level
				       (massif's trees: frame 0 under the root) */
	int sites;                  /* callee first, allocation sites at the top:
				       frame 0 under the root, its label ending
				       in " via " and the entry point (malloc,
				       operator new...); not with inverted */
	int net_paths;              /* mt_tree_gross sums each distinct branch's net
				       cost, not each stack's: for a profile whose
				       stacks of two runs cancel out where their
				       frames match (report --compare) */
	/*
	 * For a printout that folds nodes below prune_pct percent of the
	 * root's bytes (of its blocks with prune_by_blocks): such nodes are
	 * made, with their exact costs, but not their children, which could
	 * only be smaller. Memory then follows what is printed, not the
	 * stacks' depth. Only for profiles without negative costs (not a
	 * diff); 0: every node.
	 */
	double prune_pct;
	int prune_by_blocks;
	int by_tag;                 /* a first level of tag paths (see the top);
				       the tree is then not pruned */
};

/* How children are ordered. */
enum mt_tree_key {
	MT_TREE_BY_BYTES = 0,   /* bytes, largest first; with negative costs (diffs),
				   grown first (largest growth first), then shrunk
				   (largest shrink first) */
	MT_TREE_BY_BLOCKS,      /* the same on blocks */
	MT_TREE_BY_ALLOCS,      /* the same on allocs */
	MT_TREE_BY_NAME,        /* label, ascending (strcmp) */
};

/*
 * Builds the tree of profile p with source src and options o (NULL: the
 * defaults, all zero). Children come sorted by MT_TREE_BY_BYTES, ties by
 * label. Returns 0 and *out (owned by the caller), MT_E_ARG for a bad regex,
 * or another negative MT_E_*.
 */
int mt_tree_build(const struct mt_profile *p, const struct mt_tree_source *src,
		  const struct mt_tree_opts *o, struct mt_tree **out);

/*
 * The stacks of p that a tree built with o would keep (its filters; depth,
 * inversion and the rest play no part), with their costs: a new profile
 * owned by the caller in *out, for figures that are not trees (the size
 * histogram). Stacks costing nothing at all are left out. Returns 0,
 * MT_E_ARG for a bad regex, or another negative MT_E_*.
 */
int mt_tree_keep(const struct mt_profile *p, const struct mt_tree_source *src,
		 const struct mt_tree_opts *o, struct mt_profile **out);

/* Re-sorts every node's children by key; ties by label, then first seen. */
void mt_tree_sort(struct mt_tree *t, enum mt_tree_key key);

/* The root (label "", cost = the total). Never NULL. */
const struct mt_tree_node *mt_tree_root(const struct mt_tree *t);

/*
 * The sum over the stacks kept of |bytes|, |blocks|, |allocs|: the scale of
 * a diff's percentages (equal to the root's cost when no cost is negative).
 */
struct mt_cost mt_tree_gross(const struct mt_tree *t);

/* Number of nodes, root included. */
size_t mt_tree_nnodes(const struct mt_tree *t);

/* A node's label: the entry point name, a frame label, a tag path's
 * "[tag PATH]" (by_tag), or "" for the root. */
const char *mt_tree_node_label(const struct mt_tree_node *n);

/* A node's cost: the sum over the stacks through it. */
const struct mt_cost *mt_tree_node_cost(const struct mt_tree_node *n);

/*
 * The frame a node stands for (the first one seen with its label), or NULL
 * for the root, entry-point and tag-path nodes. Valid as long as the source's frames.
 */
const struct mt_frame *mt_tree_node_frame(const struct mt_tree_node *n);

/* 1 for an entry-point node (malloc, operator new...), else 0. */
int mt_tree_node_is_entry(const struct mt_tree_node *n);

/* The parent (NULL for the root) and depth (0 for the root). */
const struct mt_tree_node *mt_tree_node_parent(const struct mt_tree_node *n);
unsigned mt_tree_node_depth(const struct mt_tree_node *n);

/* Children in the current order; child(i) is NULL when i is out of range. */
size_t mt_tree_node_nchildren(const struct mt_tree_node *n);
const struct mt_tree_node *mt_tree_node_child(const struct mt_tree_node *n, size_t i);

/*
 * 1 when frame f is the allocator's rather than a caller's: a frame in
 * libmemtrail.so; a C allocation function (malloc, calloc, realloc,
 * reallocarray, memalign, posix_memalign, aligned_alloc, valloc, pvalloc,
 * also as glibc's __libc_NAME, and the dynamic linker's inline wrappers of
 * the same names); operator new and new[] in every form; the C++ standard
 * allocators' allocate() (std::allocator, std::__new_allocator,
 * __gnu_cxx::new_allocator, std::allocator_traits, libc++'s). Decided from
 * the frame's function name and module, whatever the program.
 */
int mt_tree_frame_is_allocator(const struct mt_frame *f);

/*
 * The functions of a callee-first tree (not inverted), for a flat list of
 * allocation sites: self is the cost of the stacks whose first frame
 * outside the allocator (mt_tree_frame_is_allocator) is in the function,
 * total the cost of the stacks with the function anywhere (once per stack,
 * recursion too). A function is its frames' function name, or the label
 * for frames without one; the allocator's frames before the site are no
 * function of the list.
 */
struct mt_tree_fn {
	char *name;               /* owned by the array */
	struct mt_cost self, total;
};

/*
 * The functions of t into *out (*n of them, in no order; free with
 * mt_tree_fns_free), from a tree built callee first (entry level or not,
 * sites or not) without pruning. Returns 0 or MT_E_NOMEM.
 */
int mt_tree_fns(const struct mt_tree *t, struct mt_tree_fn **out, size_t *n);

/*
 * Sorts fns by their self (by_total 0) or total cost's key figure, as
 * mt_tree_sort orders children (diffs: grown first, then shrunk); ties by
 * name. MT_TREE_BY_NAME: by name.
 */
void mt_tree_fns_sort(struct mt_tree_fn *fns, size_t n, int by_total, enum mt_tree_key key);

/* Frees what mt_tree_fns returned; NULL is a no-op. */
void mt_tree_fns_free(struct mt_tree_fn *fns, size_t n);

/* Frees a tree; NULL is a no-op. */
void mt_tree_free(struct mt_tree *t);

#endif
