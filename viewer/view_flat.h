/*
 * view_flat.h - the flat list of `memtrail view` (f): the functions of the
 * tree the viewer shows (lib/tree.h mt_tree_fns), by self or by total
 * cost, with a selected row, for the question "which functions hold the
 * most". No curses here: view_draw.c draws it, view_keys.c drives it.
 *
 * Not here: the tree pane (view_model.h); computing the figures (lib/).
 */
#ifndef MT_VIEW_FLAT_H
#define MT_VIEW_FLAT_H

#include <stddef.h>

#include "tree.h"

struct mt_view_flat;

/* A new, empty list. NULL when out of memory. */
struct mt_view_flat *mt_view_flat_new(void);

/*
 * Fills the list with the functions of t (callee first, see mt_tree_fns),
 * sorted as before; the selection goes back to the function of the same
 * name when there is one. Returns 0 or MT_E_NOMEM.
 */
int mt_view_flat_set(struct mt_view_flat *f, const struct mt_tree *t);

/* Sorts by total (1) or self (0) cost on key, the selection kept. */
void mt_view_flat_sort(struct mt_view_flat *f, int by_total, enum mt_tree_key key);
int mt_view_flat_by_total(const struct mt_view_flat *f);
enum mt_tree_key mt_view_flat_key(const struct mt_view_flat *f);

/* The order in words, for headings: "self bytes", "total calls"... (static). */
const char *mt_view_flat_order_name(const struct mt_view_flat *f);

/*
 * The next order (s in the list): self then total bytes, self then total
 * blocks, self then total calls, and round again (from the name order:
 * self bytes); the selection kept.
 */
void mt_view_flat_next_order(struct mt_view_flat *f);

/* The rows: the functions with a non-zero figure in the sorted cost. */
size_t mt_view_flat_nrows(const struct mt_view_flat *f);
const struct mt_tree_fn *mt_view_flat_row(const struct mt_view_flat *f, size_t i);

/* The selection, moving it (clamped), and the first row to show. */
size_t mt_view_flat_selected(const struct mt_view_flat *f);
void mt_view_flat_move(struct mt_view_flat *f, long delta);
size_t mt_view_flat_scroll(struct mt_view_flat *f, size_t height);

/* Frees the list; NULL is a no-op. */
void mt_view_flat_free(struct mt_view_flat *f);

#endif
