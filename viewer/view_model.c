/*
 * view_model.c - expanded paths, visible rows, selection, sort and search
 * of the tree pane (see view_model.h). Pure state: no curses, no output.
 *
 * A path is the labels from the root's child down to a node joined by '\n'
 * (labels never hold a newline); the expanded paths live in a chained hash
 * set so that a tree built for another point keeps the user's expansion.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "view_model.h"

struct pathent {
	struct pathent *next;
	char s[];
};

struct buf {
	char *p;
	size_t len, cap;
};

struct mt_view_model {
	struct mt_tree *tree;
	struct mt_view_row *rows;
	size_t nrows, cap;
	size_t sel, top;

	struct pathent **set;     /* expanded paths */
	size_t nbuckets, nset;

	char *sel_path;           /* the selected row's path while rebuilding */
	int auto_rows;            /* the rows are the dominant chain's, untouched */

	struct mt_tree *kinds[MT_LEAK_KINDS];  /* the leak kinds' trees, or none */
};

/* ---- paths ---------------------------------------------------------------- */

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

static struct pathent **set_find(const struct mt_view_model *m, const char *s, size_t n)
{
	struct pathent **pp;

	if (!m->nbuckets)
		return NULL;
	pp = &m->set[hash(s, n) % m->nbuckets];
	for (; *pp; pp = &(*pp)->next)
		if (!strncmp((*pp)->s, s, n) && (*pp)->s[n] == '\0')
			return pp;
	return pp;
}

static int set_has(const struct mt_view_model *m, const char *s, size_t n)
{
	struct pathent **pp = set_find(m, s, n);

	return pp && *pp;
}

static int set_grow(struct mt_view_model *m)
{
	size_t nb = m->nbuckets ? 2 * m->nbuckets : 64;
	struct pathent **set = calloc(nb, sizeof(*set));

	if (!set)
		return MT_E_NOMEM;
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct pathent *e = m->set[i], *next;

		for (; e; e = next) {
			size_t k = hash(e->s, strlen(e->s)) % nb;

			next = e->next;
			e->next = set[k];
			set[k] = e;
		}
	}
	free(m->set);
	m->set = set;
	m->nbuckets = nb;
	return 0;
}

static int set_add(struct mt_view_model *m, const char *s, size_t n)
{
	struct pathent **pp, *e;

	if (m->nset >= m->nbuckets && set_grow(m) < 0)
		return MT_E_NOMEM;
	pp = set_find(m, s, n);
	if (*pp)
		return 0;
	e = malloc(sizeof(*e) + n + 1);
	if (!e)
		return MT_E_NOMEM;
	memcpy(e->s, s, n);
	e->s[n] = '\0';
	e->next = NULL;
	*pp = e;
	m->nset++;
	return 0;
}

static void set_del(struct mt_view_model *m, const char *s, size_t n)
{
	struct pathent **pp = set_find(m, s, n), *e;

	if (!pp || !*pp)
		return;
	e = *pp;
	*pp = e->next;
	free(e);
	m->nset--;
}

static void set_clear(struct mt_view_model *m)
{
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct pathent *e = m->set[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
		m->set[i] = NULL;
	}
	m->nset = 0;
}

static int buf_put(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return MT_E_NOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

/* Appends node's label to the path in b (with a separator unless at the top). */
static int path_push(struct buf *b, const struct mt_tree_node *n)
{
	const char *l = mt_tree_node_label(n);

	if (b->len && buf_put(b, "\n", 1) < 0)
		return MT_E_NOMEM;
	return buf_put(b, l, strlen(l));
}

/* The path of node n into b (b emptied first). */
static int path_of(struct buf *b, const struct mt_tree_node *n)
{
	unsigned depth = n ? mt_tree_node_depth(n) : 0;
	const struct mt_tree_node **chain;
	size_t k = 0;
	int rc = 0;

	b->len = 0;
	if (buf_put(b, "", 0) < 0)
		return MT_E_NOMEM;
	if (!depth)
		return 0;
	chain = malloc(depth * sizeof(*chain));
	if (!chain)
		return MT_E_NOMEM;
	for (; n && mt_tree_node_parent(n) && k < depth; n = mt_tree_node_parent(n))
		chain[k++] = n;
	while (k-- && rc == 0)
		rc = path_push(b, chain[k]);
	free(chain);
	return rc;
}

/* ---- rows ----------------------------------------------------------------- */

static int row_push(struct mt_view_model *m, const struct mt_tree_node *n,
		    unsigned depth, int expanded, unsigned fold)
{
	if (m->nrows == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		struct mt_view_row *r = realloc(m->rows, cap * sizeof(*r));

		if (!r)
			return MT_E_NOMEM;
		m->rows = r;
		m->cap = cap;
	}
	m->rows[m->nrows].node = n;
	m->rows[m->nrows].depth = depth;
	m->rows[m->nrows].expanded = expanded;
	m->rows[m->nrows].nchildren = mt_tree_node_nchildren(n);
	m->rows[m->nrows].fold = fold;
	m->nrows++;
	return 0;
}

/* n's only child when it has the same figures as n, else NULL. */
static const struct mt_tree_node *same_only_child(const struct mt_tree_node *n)
{
	const struct mt_tree_node *c;
	const struct mt_cost *a, *b;

	if (mt_tree_node_nchildren(n) != 1)
		return NULL;
	c = mt_tree_node_child(n, 0);
	a = mt_tree_node_cost(n);
	b = mt_tree_node_cost(c);
	return a->bytes == b->bytes && a->blocks == b->blocks && a->allocs == b->allocs ?
		c : NULL;
}

/*
 * The key that says a chain starting at the node of the path in p is
 * shown unfolded: the path behind a byte no label holds.
 */
static int unfold_key(struct buf *k, const char *p, size_t n)
{
	k->len = 0;
	return buf_put(k, "\001", 1) < 0 || buf_put(k, p, n) < 0 ? MT_E_NOMEM : 0;
}

struct walk {
	struct mt_view_model *m;
	struct buf path;
	struct buf key;
	size_t best;          /* row whose path is the longest prefix of sel_path */
	size_t best_len;
	int found;
};

/* Pushes a row for the node at w->path, noting it if it is the selection's. */
static int visit(struct walk *w, const struct mt_tree_node *n, unsigned depth, int exp,
		 unsigned fold)
{
	struct mt_view_model *m = w->m;

	if (m->sel_path && !w->found) {
		size_t sl = strlen(m->sel_path);

		if (w->path.len == sl && !memcmp(w->path.p, m->sel_path, sl)) {
			w->best = m->nrows;
			w->found = 1;
		} else if (w->path.len < sl && w->path.len > w->best_len &&
			   !memcmp(w->path.p, m->sel_path, w->path.len) &&
			   m->sel_path[w->path.len] == '\n') {
			w->best = m->nrows;
			w->best_len = w->path.len;
		}
	}
	return row_push(m, n, depth, exp, fold);
}

static int rows_walk(struct walk *w, const struct mt_tree_node *parent, unsigned depth);

/*
 * The rows of node c (its label already on w->path) and, when expanded, of
 * what is below it. When c is its parent's only child with the same
 * figures (chained), a chain goes on through c: the frames below c that
 * go on with it are one folded row, then the chain's last frame. So the
 * children of an expanded node are always rows; the fold starts one
 * level down.
 */
static int rows_node(struct walk *w, const struct mt_tree_node *c, unsigned depth,
		     int chained)
{
	struct mt_view_model *m = w->m;
	const struct mt_tree_node *n1, *end, *next;
	unsigned hidden = 0;
	size_t save = w->path.len;
	int exp = mt_tree_node_nchildren(c) && set_has(m, w->path.p, w->path.len);

	if (visit(w, c, depth, exp, 0) < 0)
		return MT_E_NOMEM;
	if (!exp)
		return 0;
	/* the frames between c and the end of its chain */
	n1 = same_only_child(c);
	for (end = n1; end && (next = same_only_child(end)); end = next)
		hidden++;
	if (!chained || hidden < 2)
		return rows_walk(w, c, depth + 1);
	if (path_push(&w->path, n1) < 0 || unfold_key(&w->key, w->path.p, w->path.len) < 0)
		return MT_E_NOMEM;
	if (set_has(m, w->key.p, w->key.len)) {
		/* unfolded: the frames as ordinary rows */
		w->path.len = save;
		w->path.p[save] = '\0';
		return rows_walk(w, c, depth + 1);
	}
	if (visit(w, n1, depth + 1, 1, hidden) < 0)
		return MT_E_NOMEM;
	for (const struct mt_tree_node *x = mt_tree_node_child(n1, 0); x != end;
	     x = mt_tree_node_child(x, 0))
		if (path_push(&w->path, x) < 0)
			return MT_E_NOMEM;
	if (path_push(&w->path, end) < 0 || rows_node(w, end, depth + 2, 1) < 0)
		return MT_E_NOMEM;
	w->path.len = save;
	w->path.p[save] = '\0';
	return 0;
}

static int rows_walk(struct walk *w, const struct mt_tree_node *parent, unsigned depth)
{
	size_t nc = mt_tree_node_nchildren(parent);
	int chained = mt_tree_node_parent(parent) && same_only_child(parent);

	for (size_t i = 0; i < nc; i++) {
		const struct mt_tree_node *c = mt_tree_node_child(parent, i);
		size_t save = w->path.len;

		if (path_push(&w->path, c) < 0 || rows_node(w, c, depth, chained) < 0)
			return MT_E_NOMEM;
		w->path.len = save;
		w->path.p[save] = '\0';
	}
	return 0;
}

/* Rebuilds the rows, putting the selection back on the remembered path. */
static int rebuild(struct mt_view_model *m)
{
	struct walk w = { .m = m };
	int rc = 0;

	if (m->nrows && !m->sel_path) {
		struct buf b = { 0 };

		if (path_of(&b, m->rows[m->sel < m->nrows ? m->sel : 0].node) < 0)
			return MT_E_NOMEM;
		m->sel_path = b.p;
	}
	m->nrows = 0;
	if (m->tree && buf_put(&w.path, "", 0) == 0)
		rc = rows_walk(&w, mt_tree_root(m->tree), 0);
	else if (m->tree)
		rc = MT_E_NOMEM;
	free(w.path.p);
	free(w.key.p);
	m->sel = m->sel_path && (w.found || w.best_len) ? w.best : 0;
	if (m->sel >= m->nrows)
		m->sel = m->nrows ? m->nrows - 1 : 0;
	free(m->sel_path);
	m->sel_path = NULL;
	return rc;
}

/* ---- the API -------------------------------------------------------------- */

struct mt_view_model *mt_view_model_new(void)
{
	return calloc(1, sizeof(struct mt_view_model));
}

void mt_view_model_free(struct mt_view_model *m)
{
	if (!m)
		return;
	set_clear(m);
	free(m->set);
	free(m->rows);
	free(m->sel_path);
	mt_tree_free(m->tree);
	mt_view_model_set_kinds(m, NULL);
	free(m);
}

int mt_view_model_set_tree(struct mt_view_model *m, struct mt_tree *t)
{
	int rc;

	/* remember the selection by path before the old nodes go away */
	if (m->nrows && !m->sel_path) {
		struct buf b = { 0 };

		if (path_of(&b, m->rows[m->sel].node) < 0) {
			mt_tree_free(t);
			return MT_E_NOMEM;
		}
		m->sel_path = b.p;
	}
	mt_tree_free(m->tree);
	m->tree = t;
	m->nrows = 0;
	rc = rebuild(m);
	return rc;
}

const struct mt_tree *mt_view_model_tree(const struct mt_view_model *m)
{
	return m->tree;
}

void mt_view_model_forget(struct mt_view_model *m)
{
	m->auto_rows = 0;
	set_clear(m);
	free(m->sel_path);
	m->sel_path = NULL;
	m->sel = m->top = 0;
	m->nrows = 0;
	rebuild(m);
}

size_t mt_view_model_nrows(const struct mt_view_model *m)
{
	return m->nrows;
}

const struct mt_view_row *mt_view_model_row(const struct mt_view_model *m, size_t i)
{
	return i < m->nrows ? &m->rows[i] : NULL;
}

size_t mt_view_model_selected(const struct mt_view_model *m)
{
	return m->sel;
}

void mt_view_model_select(struct mt_view_model *m, size_t i)
{
	m->auto_rows = 0;
	m->sel = !m->nrows ? 0 : i < m->nrows ? i : m->nrows - 1;
}

void mt_view_model_move(struct mt_view_model *m, long delta)
{
	m->auto_rows = 0;
	if (delta < 0 && (size_t)-delta > m->sel)
		m->sel = 0;
	else
		mt_view_model_select(m, m->sel + (size_t)delta);
}

/* Adds or removes the path of node n in the expanded set. */
static int mark(struct mt_view_model *m, const struct mt_tree_node *n, int on)
{
	struct buf b = { 0 };
	int rc = path_of(&b, n);

	if (rc == 0) {
		if (on)
			rc = set_add(m, b.p, b.len);
		else
			set_del(m, b.p, b.len);
	}
	free(b.p);
	return rc;
}

/* Marks a chain from node n down as shown unfolded. */
static int unfold(struct mt_view_model *m, const struct mt_tree_node *n)
{
	struct buf b = { 0 }, k = { 0 };
	int rc = path_of(&b, n);

	if (rc == 0)
		rc = unfold_key(&k, b.p, b.len);
	if (rc == 0)
		rc = set_add(m, k.p, k.len);
	free(b.p);
	free(k.p);
	return rc;
}

/* Expands every ancestor of n below the root and unfolds the chains on the way. */
static int reveal(struct mt_view_model *m, const struct mt_tree_node *n)
{
	if (unfold(m, n) < 0)
		return MT_E_NOMEM;
	for (const struct mt_tree_node *p = mt_tree_node_parent(n);
	     p && mt_tree_node_parent(p); p = mt_tree_node_parent(p))
		if (mark(m, p, 1) < 0 || unfold(m, p) < 0)
			return MT_E_NOMEM;
	return 0;
}

int mt_view_model_expand(struct mt_view_model *m)
{
	const struct mt_view_row *r = mt_view_model_row(m, m->sel);

	m->auto_rows = 0;
	if (r && r->fold) {
		/*
		 * the chain's frames as rows, each expanded as it was shown,
		 * none of them folding what is left of the chain below it
		 */
		const struct mt_tree_node *n = r->node;

		for (unsigned i = 0; i < r->fold; i++, n = mt_tree_node_child(n, 0))
			if (unfold(m, n) < 0 || mark(m, n, 1) < 0)
				return MT_E_NOMEM;
		return rebuild(m) < 0 ? MT_E_NOMEM : 1;
	}
	if (!r || !r->nchildren || r->expanded)
		return 0;
	if (mark(m, r->node, 1) < 0)
		return MT_E_NOMEM;
	return rebuild(m) < 0 ? MT_E_NOMEM : 1;
}

int mt_view_model_collapse(struct mt_view_model *m)
{
	const struct mt_view_row *r = mt_view_model_row(m, m->sel);

	m->auto_rows = 0;
	if (!r)
		return 0;
	if (r->expanded) {
		if (mark(m, r->node, 0) < 0)
			return MT_E_NOMEM;
		return rebuild(m) < 0 ? MT_E_NOMEM : 1;
	}
	/* go to the parent: the nearest row above with a smaller depth */
	for (size_t i = m->sel; i-- > 0;) {
		if (m->rows[i].depth < r->depth) {
			m->sel = i;
			return 1;
		}
	}
	return 0;
}

static int expand_sub(struct mt_view_model *m, struct buf *b, const struct mt_tree_node *n)
{
	size_t nc = mt_tree_node_nchildren(n);

	struct buf k = { 0 };
	int rc;

	if (!nc)
		return 0;
	rc = unfold_key(&k, b->p, b->len);
	if (rc == 0)
		rc = set_add(m, k.p, k.len);
	free(k.p);
	if (rc < 0 || set_add(m, b->p, b->len) < 0)
		return MT_E_NOMEM;
	for (size_t i = 0; i < nc; i++) {
		const struct mt_tree_node *c = mt_tree_node_child(n, i);
		size_t save = b->len;

		if (path_push(b, c) < 0 || expand_sub(m, b, c) < 0)
			return MT_E_NOMEM;
		b->len = save;
		b->p[save] = '\0';
	}
	return 0;
}

int mt_view_model_expand_all(struct mt_view_model *m)
{
	const struct mt_view_row *r = mt_view_model_row(m, m->sel);
	struct buf b = { 0 };
	size_t before = m->nrows;
	int rc;

	m->auto_rows = 0;
	if (!r || !r->nchildren)
		return 0;
	rc = path_of(&b, r->node);
	if (rc == 0)
		rc = expand_sub(m, &b, r->node);
	free(b.p);
	if (rc < 0 || rebuild(m) < 0)
		return MT_E_NOMEM;
	return m->nrows != before;
}

/* The figure the dominant chain follows, counted both ways (diffs). */
static int64_t figure(const struct mt_tree_node *n, enum mt_tree_key key)
{
	const struct mt_cost *c = mt_tree_node_cost(n);
	int64_t v = key == MT_TREE_BY_BLOCKS ? c->blocks :
		    key == MT_TREE_BY_ALLOCS ? c->allocs : c->bytes;

	return v < 0 ? -v : v;
}

/* n's child with the largest figure (the first of equals), or NULL. */
static const struct mt_tree_node *biggest(const struct mt_tree_node *n, enum mt_tree_key key)
{
	const struct mt_tree_node *best = NULL;

	for (size_t i = 0, nc = mt_tree_node_nchildren(n); i < nc; i++) {
		const struct mt_tree_node *c = mt_tree_node_child(n, i);

		if (!best || figure(c, key) > figure(best, key))
			best = c;
	}
	return best;
}

int mt_view_model_dominant(struct mt_view_model *m, enum mt_tree_key key)
{
	const struct mt_tree_node *n, *c;
	struct buf b = { 0 };
	size_t before = m->nrows, sel = m->sel;

	if (!m->tree || !(n = biggest(mt_tree_root(m->tree), key)))
		return 0;
	for (;;) {
		c = biggest(n, key);
		if (c && mark(m, n, 1) < 0)
			return MT_E_NOMEM;
		/* about half: a child of 5 under 10 still leads the way */
		if (!c || figure(c, key) * 2 < figure(n, key))
			break;
		n = c;
	}
	if (path_of(&b, n) < 0)
		return MT_E_NOMEM;
	free(m->sel_path);
	m->sel_path = b.p;
	if (rebuild(m) < 0)
		return MT_E_NOMEM;
	m->auto_rows = 1;
	return m->nrows != before || m->sel != sel;
}

int mt_view_model_reopen(struct mt_view_model *m, enum mt_tree_key key)
{
	if (!m->auto_rows)
		return 0;
	mt_view_model_forget(m);
	return mt_view_model_dominant(m, key);
}

int mt_view_model_sort(struct mt_view_model *m, enum mt_tree_key key)
{
	if (!m->tree)
		return 0;
	mt_tree_sort(m->tree, key);
	return rebuild(m);
}

struct search {
	const char *needle;
	int function;                      /* needle is a function's name (exact) */
	const struct mt_tree_node *start;  /* the selected node */
	int passed;                        /* the walk is past start */
	int from_selected;
	const struct mt_tree_node *first;  /* first match anywhere (for wrapping) */
	const struct mt_tree_node *hit;    /* first match after start */
};

/*
 * A label matches a search's needle: contains it ignoring case, or, for a
 * function, is that function's label ("NAME", "NAME [file:line]", "NAME via
 * ENTRY" or both).
 */
static int matches(const struct search *s, const char *label)
{
	size_t n = strlen(s->needle);

	if (!s->function)
		return strcasestr(label, s->needle) != NULL;
	return !strncmp(label, s->needle, n) &&
	       (!label[n] || !strncmp(label + n, " [", 2) || !strncmp(label + n, " via ", 5));
}

static void search_walk(struct search *s, const struct mt_tree_node *n)
{
	size_t nc = mt_tree_node_nchildren(n);

	for (size_t i = 0; i < nc && !s->hit; i++) {
		const struct mt_tree_node *c = mt_tree_node_child(n, i);
		int match = matches(s, mt_tree_node_label(c));

		if (c == s->start) {
			if (match && s->from_selected) {
				s->hit = c;
				return;
			}
			s->passed = 1;
		} else if (match) {
			if (!s->first)
				s->first = c;
			if (s->passed) {
				s->hit = c;
				return;
			}
		}
		search_walk(s, c);
	}
}

static int search(struct mt_view_model *m, const char *needle, int function,
		  int from_selected)
{
	const struct mt_view_row *r = mt_view_model_row(m, m->sel);
	struct search s = { .needle = needle, .function = function,
			    .from_selected = from_selected };
	const struct mt_tree_node *hit;
	struct buf b = { 0 };

	if (!m->tree || !needle || !*needle)
		return MT_E_NOTFOUND;
	s.start = r ? r->node : NULL;
	s.passed = !r;
	search_walk(&s, mt_tree_root(m->tree));
	hit = s.hit ? s.hit : s.first;
	if (!hit && r && matches(&s, mt_tree_node_label(r->node)))
		hit = r->node;     /* the only match is the selected node */
	if (!hit)
		return MT_E_NOTFOUND;
	m->auto_rows = 0;
	if (reveal(m, hit) < 0 || path_of(&b, hit) < 0)
		return MT_E_NOMEM;
	free(m->sel_path);
	m->sel_path = b.p;
	return rebuild(m) < 0 ? MT_E_NOMEM : 0;
}

int mt_view_model_search(struct mt_view_model *m, const char *needle, int from_selected)
{
	return search(m, needle, 0, from_selected);
}

int mt_view_model_find_function(struct mt_view_model *m, const char *name, int from_selected)
{
	return search(m, name, 1, from_selected);
}

size_t mt_view_model_scroll(struct mt_view_model *m, size_t height)
{
	if (!height)
		return m->sel;
	if (m->sel < m->top)
		m->top = m->sel;
	else if (m->sel >= m->top + height)
		m->top = m->sel - height + 1;
	/* no empty space at the bottom while rows remain above */
	if (m->nrows >= height && m->top > m->nrows - height)
		m->top = m->nrows - height;
	if (m->nrows < height)
		m->top = 0;
	return m->top;
}

size_t mt_view_model_top(const struct mt_view_model *m)
{
	return m->top;
}

/* ---- leak kinds per row ------------------------------------------------------ */

void mt_view_model_set_kinds(struct mt_view_model *m, struct mt_tree *kinds[MT_LEAK_KINDS])
{
	for (unsigned k = 0; k < MT_LEAK_KINDS; k++) {
		mt_tree_free(m->kinds[k]);
		m->kinds[k] = kinds ? kinds[k] : NULL;
	}
}

int mt_view_model_has_kinds(const struct mt_view_model *m)
{
	return m->kinds[0] != NULL;
}

/* The child of n labelled label, or NULL. */
static const struct mt_tree_node *child_named(const struct mt_tree_node *n, const char *label)
{
	size_t nc = mt_tree_node_nchildren(n);

	for (size_t i = 0; i < nc; i++) {
		const struct mt_tree_node *c = mt_tree_node_child(n, i);

		if (strcmp(mt_tree_node_label(c), label) == 0)
			return c;
	}
	return NULL;
}

int mt_view_model_row_kinds(const struct mt_view_model *m, size_t i,
			    struct mt_cost out[MT_LEAK_KINDS])
{
	const struct mt_tree_node *path[256];
	const struct mt_tree_node *n;
	unsigned depth = 0;

	memset(out, 0, MT_LEAK_KINDS * sizeof(*out));
	if (!mt_view_model_has_kinds(m) || i >= m->nrows)
		return -1;
	/* the row's path, from the root's child down (a deeper row than the
	 * array holds shows no kinds: none is that deep in practice) */
	for (n = m->rows[i].node; mt_tree_node_parent(n); n = mt_tree_node_parent(n)) {
		if (depth == sizeof(path) / sizeof(path[0]))
			return -1;
		path[depth++] = n;
	}
	for (unsigned k = 0; k < MT_LEAK_KINDS; k++) {
		const struct mt_tree_node *at = mt_tree_root(m->kinds[k]);

		for (unsigned d = depth; at && d-- > 0;)
			at = child_named(at, mt_tree_node_label(path[d]));
		if (at)
			out[k] = *mt_tree_node_cost(at);
	}
	return 0;
}
