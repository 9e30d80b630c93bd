/*
 * view_model.h - the tree pane's state in `memtrail view`: which nodes of a
 * call tree (lib/tree.h) are expanded, the visible rows that follows from
 * that, the selected row, sorting and searching.
 *
 * A chain of frames, each its parent's only child with the same figures,
 * shows its first two frames, one "... N frames ..." row for the frames
 * between (two or more) and its last frame, until the user expands that
 * row: the children of an expanded node are always rows of their own.
 *
 * Expansion and selection are remembered by path (the labels from the top
 * down), so they survive installing a new tree for another point of the run
 * wherever the same call paths exist; rows nobody touched since the
 * dominant chain opened open on the new tree's (mt_view_model_reopen). The model never draws and never
 * includes <curses.h>: view_draw.c reads the rows, view_keys.c calls the
 * functions below.
 *
 * Not here: what the tree is a profile of (view_data.h), the timeline
 * (view_timeline.h).
 */
#ifndef MT_VIEW_MODEL_H
#define MT_VIEW_MODEL_H

#include <stddef.h>

#include "format.h"
#include "tree.h"

struct mt_view_model;

/* One visible row: a node below the root (the root itself is not a row). */
struct mt_view_row {
	const struct mt_tree_node *node;
	unsigned depth;          /* 0 for the root's children */
	int expanded;            /* its children are the rows that follow */
	size_t nchildren;
	unsigned fold;           /* 0, or this row stands for `fold` frames, from
				    node down, each the only child of the one
				    above with the same figures ("... N frames
				    ..."); the end of the chain is the next row */
};

/* A new model with no tree. NULL when out of memory. */
struct mt_view_model *mt_view_model_new(void);

/*
 * Installs tree t (the model owns it from now on, and frees the previous
 * one). Nodes whose paths were expanded stay expanded; the selection moves
 * to the row with the previously selected path, or its nearest ancestor
 * still present, or the first row. Returns 0 or MT_E_NOMEM (t is then freed).
 */
int mt_view_model_set_tree(struct mt_view_model *m, struct mt_tree *t);

/* The installed tree, or NULL. */
const struct mt_tree *mt_view_model_tree(const struct mt_view_model *m);

/* Forgets every expanded path and the selection (e.g. on inverting). */
void mt_view_model_forget(struct mt_view_model *m);

/* Visible rows: 0 .. nrows-1, in display order. */
size_t mt_view_model_nrows(const struct mt_view_model *m);
const struct mt_view_row *mt_view_model_row(const struct mt_view_model *m, size_t i);

/* The selected row index (0 when there are no rows). */
size_t mt_view_model_selected(const struct mt_view_model *m);

/* Selects row i, clamped to the rows; or moves the selection by delta. */
void mt_view_model_select(struct mt_view_model *m, size_t i);
void mt_view_model_move(struct mt_view_model *m, long delta);

/*
 * Expands the selected row (no-op on a leaf or an expanded row); on a
 * folded chain's row, shows its frames. Returns 1 if the rows changed, 0
 * if not, MT_E_NOMEM.
 */
int mt_view_model_expand(struct mt_view_model *m);

/*
 * Collapses the selected row if it is expanded, else selects its parent.
 * Returns 1 if anything changed, 0 if not, MT_E_NOMEM.
 */
int mt_view_model_collapse(struct mt_view_model *m);

/*
 * Opens the dominant chain: from the root's biggest child (by key's figure,
 * sizes of diffs counted both ways), expands each node down to the first
 * whose biggest child holds less than half of it, expands that one too and
 * selects it. Other expanded paths stay. 1 if anything changed, 0, or
 * MT_E_NOMEM.
 */
int mt_view_model_dominant(struct mt_view_model *m, enum mt_tree_key key);

/*
 * While the rows are still the ones mt_view_model_dominant opened (nothing
 * expanded, collapsed, selected, searched or forgotten since), opens the
 * dominant chain by key afresh, every other path closed: for a new point
 * or order that the user has not looked into yet. 1 if anything changed,
 * 0 (also when the user moved), or MT_E_NOMEM.
 */
int mt_view_model_reopen(struct mt_view_model *m, enum mt_tree_key key);

/* Expands the selected row's whole subtree (unfolding its chains). 1 if changed, 0, or MT_E_NOMEM. */
int mt_view_model_expand_all(struct mt_view_model *m);

/* Re-sorts the tree's children by key and rebuilds the rows. 0 or MT_E_NOMEM. */
int mt_view_model_sort(struct mt_view_model *m, enum mt_tree_key key);

/*
 * Searches the whole tree (expanded or not), in display order, for the next
 * node after the selected one whose label contains needle (ignoring case),
 * wrapping around; with from_selected, the selected node itself counts too.
 * Expands its ancestors and selects it. Returns 0, MT_E_NOTFOUND (nothing
 * changes) or MT_E_NOMEM.
 */
int mt_view_model_search(struct mt_view_model *m, const char *needle, int from_selected);

/*
 * The same for a function's places: nodes whose label is the function
 * name's ("NAME", "NAME [file:line]", "NAME via ENTRY"), case and all.
 */
int mt_view_model_find_function(struct mt_view_model *m, const char *name, int from_selected);

/*
 * The first row to show in a pane of height rows so that the selection is
 * visible, scrolling as little as possible from the last call's answer.
 */
size_t mt_view_model_scroll(struct mt_view_model *m, size_t height);

/* The first row to show, as the last mt_view_model_scroll() left it. */
size_t mt_view_model_top(const struct mt_view_model *m);

/*
 * The leaks view's kinds per row: the trees of each leak kind's blocks
 * (enum mt_leak_kind order), built with the tree's options; the model
 * owns them from now on and frees those it had. NULL: none.
 */
void mt_view_model_set_kinds(struct mt_view_model *m, struct mt_tree *kinds[MT_LEAK_KINDS]);

/* 1 when the kinds' trees are set, else 0. */
int mt_view_model_has_kinds(const struct mt_view_model *m);

/*
 * Row i's figures in each kind: the cost of the node with the row's path
 * (its labels from the top down) in each kind's tree, zero where the
 * kind has no such node. 0, or -1 (out zeroed) without kinds or row i.
 */
int mt_view_model_row_kinds(const struct mt_view_model *m, size_t i,
			    struct mt_cost out[MT_LEAK_KINDS]);

/* Frees the model, its tree and the kinds' trees; NULL is a no-op. */
void mt_view_model_free(struct mt_view_model *m);

#endif
