/*
 * view_flat.c - the flat list of functions of `memtrail view` (see
 * view_flat.h). Pure state: no curses, no output.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "view_flat.h"

struct mt_view_flat {
	struct mt_tree_fn *fns;
	size_t n, nrows;          /* rows: the first nrows of fns once sorted */
	size_t sel, top;
	int by_total;
	enum mt_tree_key key;
};

struct mt_view_flat *mt_view_flat_new(void)
{
	return calloc(1, sizeof(struct mt_view_flat));
}

void mt_view_flat_free(struct mt_view_flat *f)
{
	if (!f)
		return;
	mt_tree_fns_free(f->fns, f->n);
	free(f);
}

static int64_t flat_figure(const struct mt_view_flat *f, const struct mt_tree_fn *fn)
{
	const struct mt_cost *c = f->by_total ? &fn->total : &fn->self;

	return f->key == MT_TREE_BY_BLOCKS ? c->blocks : f->key == MT_TREE_BY_ALLOCS ?
		c->allocs : c->bytes;
}

/*
 * Sorts, moves the functions without this figure (between the grown and
 * the shrunk ones of a diff) to the end, out of the rows, and puts the
 * selection on the function called name.
 */
static void resort(struct mt_view_flat *f, const char *name)
{
	struct mt_tree_fn *tmp = f->n ? malloc(f->n * sizeof(*tmp)) : NULL;
	size_t k = 0, z = 0;

	mt_tree_fns_sort(f->fns, f->n, f->by_total, f->key);
	f->nrows = f->n;
	if (tmp) {
		for (size_t i = 0; i < f->n; i++)
			if (flat_figure(f, &f->fns[i]))
				tmp[k++] = f->fns[i];
		f->nrows = k;
		for (size_t i = 0; i < f->n; i++)
			if (!flat_figure(f, &f->fns[i]))
				tmp[k + z++] = f->fns[i];
		memcpy(f->fns, tmp, f->n * sizeof(*tmp));
		free(tmp);
	}
	f->sel = 0;
	for (size_t i = 0; name && i < f->nrows; i++)
		if (!strcmp(f->fns[i].name, name))
			f->sel = i;
}

int mt_view_flat_set(struct mt_view_flat *f, const struct mt_tree *t)
{
	struct mt_tree_fn *fns;
	char *name = NULL;
	size_t n;
	int rc = mt_tree_fns(t, &fns, &n);

	if (rc < 0)
		return rc;
	if (f->sel < f->nrows && !(name = strdup(f->fns[f->sel].name))) {
		mt_tree_fns_free(fns, n);
		return MT_E_NOMEM;
	}
	mt_tree_fns_free(f->fns, f->n);
	f->fns = fns;
	f->n = n;
	resort(f, name);
	free(name);
	return 0;
}

void mt_view_flat_sort(struct mt_view_flat *f, int by_total, enum mt_tree_key key)
{
	const char *name = f->sel < f->nrows ? f->fns[f->sel].name : NULL;
	char *keep = name ? strdup(name) : NULL;

	f->by_total = by_total;
	f->key = key;
	resort(f, keep);
	free(keep);
}

int mt_view_flat_by_total(const struct mt_view_flat *f)
{
	return f->by_total;
}

enum mt_tree_key mt_view_flat_key(const struct mt_view_flat *f)
{
	return f->key;
}

const char *mt_view_flat_order_name(const struct mt_view_flat *f)
{
	static const char *const names[2][MT_TREE_BY_NAME + 1] = {
		{ "self bytes", "self blocks", "self calls", "name" },
		{ "total bytes", "total blocks", "total calls", "name" },
	};

	return names[f->by_total ? 1 : 0][f->key <= MT_TREE_BY_NAME ? f->key : 0];
}

void mt_view_flat_next_order(struct mt_view_flat *f)
{
	enum mt_tree_key key = f->key;
	int by_total = !f->by_total;

	if (key == MT_TREE_BY_NAME) {
		key = MT_TREE_BY_BYTES;
		by_total = 0;
	} else if (!by_total) {
		key = key == MT_TREE_BY_BYTES ? MT_TREE_BY_BLOCKS :
		      key == MT_TREE_BY_BLOCKS ? MT_TREE_BY_ALLOCS : MT_TREE_BY_BYTES;
	}
	mt_view_flat_sort(f, by_total, key);
}

size_t mt_view_flat_nrows(const struct mt_view_flat *f)
{
	return f->nrows;
}

const struct mt_tree_fn *mt_view_flat_row(const struct mt_view_flat *f, size_t i)
{
	return i < f->nrows ? &f->fns[i] : NULL;
}

size_t mt_view_flat_selected(const struct mt_view_flat *f)
{
	return f->sel;
}

void mt_view_flat_move(struct mt_view_flat *f, long delta)
{
	if (delta < 0 && (size_t)-delta > f->sel)
		f->sel = 0;
	else
		f->sel += (size_t)delta;
	if (f->sel >= f->nrows)
		f->sel = f->nrows ? f->nrows - 1 : 0;
}

size_t mt_view_flat_scroll(struct mt_view_flat *f, size_t height)
{
	if (!height)
		return f->sel;
	if (f->sel < f->top)
		f->top = f->sel;
	else if (f->sel >= f->top + height)
		f->top = f->sel - height + 1;
	if (f->nrows <= height)
		f->top = 0;
	return f->top;
}
