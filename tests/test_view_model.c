/*
 * test_view_model.c - unit tests of the viewer's state without a terminal:
 * the tree pane model (viewer/view_model.c), the timeline model
 * (viewer/view_timeline.c), the log session (viewer/view_data.c) and the
 * app state (viewer/view_app.c). These files never include <curses.h>, so
 * this program compiles them in directly.
 *
 * The trees come from a real log of samples/phases.c, recorded when the
 * group starts (with memtrail record, or the preload library
 * directly). Expected figures are the sample's own: the totals from its
 * memtrail-expect block, read from samples/phases.c at run time, and the
 * per-function figures from the arithmetic in its header comment (cited at
 * each check). Without a recorder or the sample, every test is skipped.
 *
 * Following a log still being written (view --follow) is tested on a log
 * of its own, written chunk by chunk.
 *
 * Not here: drawing and keys (tests/e2e/view_*.sh drive the real program).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../viewer/view_model.c"
#include "../viewer/view_flat.c"
#include "../viewer/view_timeline.c"
#include "../viewer/view_data.c"
#include "../viewer/view_app.c"

#include "report.h"
#include "session.h"
#include "testlog.c"

/* The sample's memtrail-expect block. */
struct expect {
	long long peak_bytes, peak_blocks, leaked_bytes, leaked_blocks;
	long long allocations, bytes_allocated;
	long long snap_bytes[8], snap_blocks[8];
	int nsnaps;
};

struct fixture {
	char dir[64];
	char log[128];
	struct expect ex;
	struct mt_view_app app;
	int have_app;
};

static struct fixture *fx;   /* the group's state: one recording for all tests */

static int read_expect(struct expect *ex)
{
	char path[512], line[512];
	FILE *f;
	int in = 0;

	memset(ex, 0, sizeof(*ex));
	snprintf(path, sizeof(path), "%s/samples/phases.c", tl_top());
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;
		long long a, b;
		int idx;

		while (*p == ' ' || *p == '*' || *p == '\t')
			p++;
		if (!strncmp(p, "memtrail-expect:", 16)) {
			in = 1;
			continue;
		}
		if (!in)
			continue;
		if (*p == '\n' || *p == '/')
			break;
		if (sscanf(p, "allocations %lld", &a) == 1)
			ex->allocations = a;
		else if (sscanf(p, "bytes_allocated %lld", &a) == 1)
			ex->bytes_allocated = a;
		else if (sscanf(p, "peak_bytes %lld", &a) == 1)
			ex->peak_bytes = a;
		else if (sscanf(p, "peak_blocks %lld", &a) == 1)
			ex->peak_blocks = a;
		else if (sscanf(p, "leaked_bytes %lld", &a) == 1)
			ex->leaked_bytes = a;
		else if (sscanf(p, "leaked_blocks %lld", &a) == 1)
			ex->leaked_blocks = a;
		else if (sscanf(p, "snapshot %d label %*s live_bytes %lld live_blocks %lld",
				&idx, &a, &b) == 3 && idx >= 0 && idx < 8) {
			ex->snap_bytes[idx] = a;
			ex->snap_blocks[idx] = b;
			if (idx + 1 > ex->nsnaps)
				ex->nsnaps = idx + 1;
		}
	}
	fclose(f);
	return ex->peak_bytes && ex->nsnaps == 3 ? 0 : -1;
}

/* Records the sample into f->log; 0 when a log exists afterwards. */
static int record(struct fixture *f)
{
	const char *b = tl_build();
	char *cmd;
	int rc;

	if (asprintf(&cmd,
		 "cd '%s' && if [ -x '%s/memtrail' ]; then "
		 "'%s/memtrail' record -o '%s' -- '%s/samples/phases'; else "
		 "MEMTRAIL_OUTPUT='%s' LD_PRELOAD='%s/libmemtrail.so' '%s/samples/phases'; fi"
		 " >/dev/null 2>&1",
		 f->dir, b, b, f->log, b, f->log, b, b) < 0)
		return -1;
	rc = system(cmd);
	free(cmd);
	if (rc != 0)
		return -1;
	return access(f->log, R_OK);
}

static int group_setup(void **state)
{
	struct mt_view_data *d;
	uint64_t off;

	(void)state;
	fx = calloc(1, sizeof(*fx));
	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/mt-test-view.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->log, sizeof(fx->log), "%s/phases.data", fx->dir);
	if (read_expect(&fx->ex) < 0 || record(fx) < 0)
		return 0;          /* the tests skip */
	if (mt_view_data_open(fx->log, 0, NULL, &d, &off) < 0)
		return -1;
	if (mt_view_app_init(&fx->app, fx->log, d, 30, 100) < 0)
		return -1;
	fx->have_app = 1;
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[256];

	(void)state;
	if (fx->have_app)
		mt_view_app_fini(&fx->app);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	if (system(cmd) != 0)
		return -1;
	free(fx);
	return 0;
}

/*
 * Each test starts from the peak, live, callee first from the entry points,
 * by bytes, nothing expanded.
 */
static int setup(void **state)
{
	struct mt_view_app *app = &fx->app;

	*state = app;
	if (!fx->have_app)
		return 0;
	app->mode = MT_VIEW_LIVE;
	app->inverted = 0;
	app->entries = 1;        /* the report's layout: the entry points first */
	app->sort = MT_TREE_BY_BYTES;
	mt_view_timeline_peak(app->tl);
	if (mt_view_app_refresh(app) < 0)
		return -1;
	mt_view_model_sort(app->model, MT_TREE_BY_BYTES);
	mt_view_model_forget(app->model);
	return 0;
}

/*
 * Builds the tree of the app's new state from nothing expanded (a new view
 * opens on its dominant chain: test_sites_first_screen), for the tests
 * that open rows one by one.
 */
static int refresh_closed(struct mt_view_app *app)
{
	int rc = mt_view_app_refresh(app);

	mt_view_model_forget(app->model);
	return rc;
}

static struct mt_view_app *get(void **state)
{
	if (!fx->have_app)
		skip();
	return *state;
}

/* The function name of a row's label (up to " [" or the end). */
static int is_fn(const struct mt_view_row *r, const char *fn)
{
	const char *l = mt_tree_node_label(r->node);
	size_t n = strlen(fn);

	return !strncmp(l, fn, n) && (l[n] == '\0' || l[n] == ' ');
}

/* The first row at depth whose function is fn, or SIZE_MAX. */
static size_t find(const struct mt_view_model *m, unsigned depth, const char *fn)
{
	for (size_t i = 0; i < mt_view_model_nrows(m); i++)
		if (mt_view_model_row(m, i)->depth == depth && is_fn(mt_view_model_row(m, i), fn))
			return i;
	return SIZE_MAX;
}

static const struct mt_cost *cost(const struct mt_view_model *m, size_t i)
{
	assert_true(i < mt_view_model_nrows(m));
	return mt_tree_node_cost(mt_view_model_row(m, i)->node);
}

/* Selects the row with fn at depth and expands it. */
static size_t open_row(struct mt_view_model *m, unsigned depth, const char *fn)
{
	size_t i = find(m, depth, fn);

	assert_true(i != SIZE_MAX);
	mt_view_model_select(m, i);
	assert_int_equal(mt_view_model_expand(m), 1);
	return i;
}

/*
 * At the peak (phases.c: "362,624 B in 23 blocks"): malloc holds the config
 * (1,024), the 4 entries (1,024), the row table (128), rows 8..15 (8 x
 * 4,096) and the scratch (262,144) = 297,088 B in 15 blocks, after 22 + 1
 * allocations; realloc holds rows 0..7 grown to 8,192 B: 65,536 B in 8.
 */
static void test_peak_top_rows(void **state)
{
	struct mt_view_app *app = get(state);
	struct mt_view_model *m = app->model;

	assert_int_equal(app->total.bytes, fx->ex.peak_bytes);
	assert_int_equal(app->total.blocks, fx->ex.peak_blocks);
	assert_int_equal(mt_view_model_nrows(m), 2);
	assert_true(is_fn(mt_view_model_row(m, 0), "malloc"));
	assert_int_equal(cost(m, 0)->bytes, 297088);
	assert_int_equal(cost(m, 0)->blocks, 15);
	assert_int_equal(cost(m, 0)->allocs, 23);
	assert_true(is_fn(mt_view_model_row(m, 1), "realloc"));
	assert_int_equal(cost(m, 1)->bytes, 65536);
	assert_int_equal(cost(m, 1)->blocks, 8);
	assert_int_equal(cost(m, 0)->bytes + cost(m, 1)->bytes, fx->ex.peak_bytes);
	assert_int_equal(mt_view_model_selected(m), 0);
}

/*
 * Expanding malloc, then xmalloc under it, shows the callers by bytes:
 * make_report 262,144 (1 block), build_index 32,768 (rows 8..15, 8 blocks),
 * then the 1,024 B config and entries of load_config and the 128 B table.
 */
static void test_expand(void **state)
{
	struct mt_view_app *app = get(state);
	struct mt_view_model *m = app->model;
	size_t x, r;

	open_row(m, 0, "malloc");
	assert_int_equal(mt_view_model_nrows(m), 3);
	x = open_row(m, 1, "xmalloc");
	assert_int_equal(cost(m, x)->bytes, 297088);
	r = find(m, 2, "make_report");
	assert_int_equal(r, x + 1);
	assert_int_equal(cost(m, r)->bytes, 262144);
	assert_int_equal(cost(m, r)->blocks, 1);
	assert_true(is_fn(mt_view_model_row(m, r + 1), "build_index"));
	assert_int_equal(cost(m, r + 1)->bytes, 32768);
	assert_int_equal(cost(m, r + 1)->blocks, 8);
	assert_true(is_fn(mt_view_model_row(m, r + 2), "load_config"));
	assert_int_equal(cost(m, r + 2)->bytes, 1024);
	assert_true(is_fn(mt_view_model_row(m, r + 3), "load_config"));
	assert_int_equal(cost(m, r + 3)->bytes, 1024);
	assert_int_equal(cost(m, r + 2)->blocks + cost(m, r + 3)->blocks, 5);
	assert_true(is_fn(mt_view_model_row(m, r + 4), "build_index"));
	assert_int_equal(cost(m, r + 4)->bytes, 128);
	/* realloc's row follows malloc's subtree */
	assert_true(is_fn(mt_view_model_row(m, r + 5), "realloc"));
	assert_int_equal(mt_view_model_row(m, r + 5)->depth, 0);
	/* expanding an expanded row changes nothing */
	mt_view_model_select(m, x);
	assert_int_equal(mt_view_model_expand(m), 0);
}

/* Collapsing folds the rows; on a folded row it goes to the parent. */
static void test_collapse(void **state)
{
	struct mt_view_app *app = get(state);
	struct mt_view_model *m = app->model;
	size_t x, r;

	open_row(m, 0, "malloc");
	x = open_row(m, 1, "xmalloc");
	r = find(m, 2, "make_report");
	mt_view_model_select(m, r);
	assert_int_equal(mt_view_model_collapse(m), 1);       /* to its parent */
	assert_int_equal(mt_view_model_selected(m), x);
	assert_int_equal(mt_view_model_collapse(m), 1);       /* folds xmalloc */
	assert_int_equal(mt_view_model_nrows(m), 3);
	assert_int_equal(mt_view_model_selected(m), x);
	assert_int_equal(mt_view_model_collapse(m), 1);       /* to malloc */
	assert_int_equal(mt_view_model_selected(m), 0);
	assert_int_equal(mt_view_model_collapse(m), 1);       /* folds malloc */
	assert_int_equal(mt_view_model_nrows(m), 2);
	assert_int_equal(mt_view_model_collapse(m), 0);       /* a top row: nothing */
}

/* Counts the nodes under n (n excluded). */
static size_t subtree(const struct mt_tree_node *n)
{
	size_t k = 0;

	for (size_t i = 0; i < mt_tree_node_nchildren(n); i++)
		k += 1 + subtree(mt_tree_node_child(n, i));
	return k;
}

/* '*' shows every node under the row; the rows' bytes add up at each level. */
static void test_expand_all(void **state)
{
	struct mt_view_app *app = get(state);
	struct mt_view_model *m = app->model;
	const struct mt_tree_node *malloc_node = mt_view_model_row(m, 0)->node;

	mt_view_model_select(m, 0);
	assert_int_equal(mt_view_model_expand_all(m), 1);
	assert_int_equal(mt_view_model_nrows(m), 2 + subtree(malloc_node));
	/* every expanded row's bytes are the sum of its children's */
	for (size_t i = 0; i < mt_view_model_nrows(m); i++) {
		const struct mt_view_row *r = mt_view_model_row(m, i);
		int64_t sum = 0;

		if (!r->expanded)
			continue;
		for (size_t j = i + 1; j < mt_view_model_nrows(m) &&
		     mt_view_model_row(m, j)->depth > r->depth; j++)
			if (mt_view_model_row(m, j)->depth == r->depth + 1)
				sum += mt_tree_node_cost(mt_view_model_row(m, j)->node)->bytes;
		assert_int_equal(sum, mt_tree_node_cost(r->node)->bytes);
	}
	/* the leaves include main, every branch of malloc runs through it */
	assert_true(find(m, 4, "main") != SIZE_MAX || find(m, 3, "main") != SIZE_MAX);
}

/*
 * Inverted (caller first): every stack goes through main, once per call
 * site (main's frames differ by line), so the row above the first main is
 * main's caller with the whole peak, and under it the four call sites of
 * main, each with one phase function: make_report 262,144, grow_rows
 * 65,536 (the 8 realloc'd rows), build_index 32,896 (rows 8..15 still
 * 4,096 B + the 128 B table), load_config 2,048.
 */
static void test_invert(void **state)
{
	struct mt_view_app *app = get(state);
	struct mt_view_model *m = app->model;
	static const struct { const char *fn; int64_t bytes; } site[4] = {
		{ "make_report", 262144 }, { "grow_rows", 65536 },
		{ "build_index", 8 * 4096 + 128 }, { "load_config", 2048 },
	};
	size_t i, caller;
	unsigned d;

	app->inverted = 1;
	assert_int_equal(refresh_closed(app), 0);
	assert_int_equal(app->total.bytes, fx->ex.peak_bytes);
	/* "main" also matches __libc_start_main: go on to main itself */
	for (int k = 0; k < 10; k++) {
		assert_int_equal(mt_view_model_search(m, "main", 0), 0);
		if (is_fn(mt_view_model_row(m, mt_view_model_selected(m)), "main"))
			break;
	}
	i = mt_view_model_selected(m);
	assert_true(is_fn(mt_view_model_row(m, i), "main"));
	d = mt_view_model_row(m, i)->depth;
	/* its caller, the row above with the smaller depth */
	assert_int_equal(mt_view_model_collapse(m), 1);
	caller = mt_view_model_selected(m);
	assert_int_equal(mt_view_model_row(m, caller)->depth + 1, d);
	assert_int_equal(cost(m, caller)->bytes, fx->ex.peak_bytes);
	assert_int_equal(mt_view_model_row(m, caller)->nchildren, 4);
	/* each call site of main: its callee (one node per line of the callee
	 * that allocates: build_index has two) holds all of the site */
	i = caller + 1;
	for (size_t k = 0; k < 4; k++) {
		int64_t sum = 0;

		assert_true(i < mt_view_model_nrows(m));
		mt_view_model_select(m, i);
		assert_true(is_fn(mt_view_model_row(m, i), "main"));
		assert_int_equal(mt_view_model_row(m, i)->depth, d);
		assert_int_equal(cost(m, i)->bytes, site[k].bytes);
		assert_int_equal(mt_view_model_expand(m), 1);
		for (i++; i < mt_view_model_nrows(m) && mt_view_model_row(m, i)->depth > d; i++) {
			assert_int_equal(mt_view_model_row(m, i)->depth, d + 1);
			assert_true(is_fn(mt_view_model_row(m, i), site[k].fn));
			sum += cost(m, i)->bytes;
		}
		assert_int_equal(sum, site[k].bytes);
	}
	/* the allocation functions are the leaves now */
	assert_int_equal(mt_view_model_search(m, "grow_rows", 1), 0);
	assert_int_equal(mt_view_model_expand_all(m), 1);
	assert_int_equal(mt_view_model_search(m, "realloc", 1), 0);
	assert_int_equal(mt_view_model_row(m, mt_view_model_selected(m))->nchildren, 0);
	assert_int_equal(cost(m, mt_view_model_selected(m))->bytes, 65536);
	app->inverted = 0;
}

/* s: by name the rows are in strcmp order; by blocks, largest first. */
static void test_sort(void **state)
{
	struct mt_view_app *app = get(state);
	struct mt_view_model *m = app->model;
	size_t x, n;

	open_row(m, 0, "malloc");
	x = open_row(m, 1, "xmalloc");
	assert_int_equal(mt_view_model_sort(m, MT_TREE_BY_NAME), 0);
	/* the selection stays on xmalloc, which stays expanded */
	assert_true(is_fn(mt_view_model_row(m, mt_view_model_selected(m)), "xmalloc"));
	x = mt_view_model_selected(m);
	n = mt_view_model_row(m, x)->nchildren;
	assert_int_equal(n, 5);
	for (size_t i = x + 2; i < x + 1 + n; i++)
		assert_true(strcmp(mt_tree_node_label(mt_view_model_row(m, i - 1)->node),
				   mt_tree_node_label(mt_view_model_row(m, i)->node)) <= 0);
	assert_true(is_fn(mt_view_model_row(m, x + 1), "build_index"));
	assert_true(is_fn(mt_view_model_row(m, x + n), "make_report"));
	/* by blocks: build_index's 8 rows first, make_report's 1 block last */
	assert_int_equal(mt_view_model_sort(m, MT_TREE_BY_BLOCKS), 0);
	x = mt_view_model_selected(m);
	assert_true(is_fn(mt_view_model_row(m, x + 1), "build_index"));
	assert_int_equal(cost(m, x + 1)->blocks, 8);
	for (size_t i = x + 2; i < x + 1 + n; i++)
		assert_true(cost(m, i - 1)->blocks >= cost(m, i)->blocks);
	/* by allocations: build_index made 16 rows, make_report 1 */
	assert_int_equal(mt_view_model_sort(m, MT_TREE_BY_ALLOCS), 0);
	x = mt_view_model_selected(m);
	assert_int_equal(cost(m, x + 1)->allocs, 16);
	assert_int_equal(mt_view_model_sort(m, MT_TREE_BY_BYTES), 0);
}

/* /: finds folded nodes, expands their ancestors, wraps around. */
static void test_search(void **state)
{
	struct mt_view_app *app = get(state);
	struct mt_view_model *m = app->model;
	size_t i;

	assert_int_equal(mt_view_model_search(m, "MAKE_report", 1), 0);
	i = mt_view_model_selected(m);
	assert_true(is_fn(mt_view_model_row(m, i), "make_report"));
	assert_int_equal(mt_view_model_row(m, i)->depth, 2);
	assert_int_equal(cost(m, i)->bytes, 262144);
	/* the only match: the next one wraps to itself */
	assert_int_equal(mt_view_model_search(m, "make_report", 0), 0);
	assert_int_equal(mt_view_model_selected(m), i);
	/* two load_config nodes: next goes to the other one, then back */
	assert_int_equal(mt_view_model_search(m, "load_config", 0), 0);
	i = mt_view_model_selected(m);
	assert_true(is_fn(mt_view_model_row(m, i), "load_config"));
	assert_int_equal(mt_view_model_search(m, "load_config", 0), 0);
	assert_true(mt_view_model_selected(m) != i);
	assert_true(is_fn(mt_view_model_row(m, mt_view_model_selected(m)), "load_config"));
	assert_int_equal(mt_view_model_search(m, "load_config", 0), 0);
	assert_int_equal(mt_view_model_selected(m), i);
	assert_int_equal(mt_view_model_search(m, "no_such_function", 0), MT_E_NOTFOUND);
	assert_int_equal(mt_view_model_selected(m), i);
}

/*
 * The viewer's first screen: allocation sites first, the dominant chain
 * open. At the peak (phases.c) xmalloc's malloc calls hold 297,088 B in 15
 * blocks after 23 calls (test_peak_top_rows), grow_rows' realloc calls
 * 65,536 B in 8. make_report's 262,144 B are more than half of xmalloc's,
 * so it opens; its callers main ... _start have its figures, one caller
 * each: main is a row, the frames between main and the last are one
 * folded row, and the last, a leaf, is where the chain ends and the
 * selection rests.
 * Under xmalloc then: build_index's 8 rows (32,768), load_config's config
 * and entries (1,024 each), build_index's table (128).
 */
static void test_sites_first_screen(void **state)
{
	struct mt_view_app *app = get(state);
	struct mt_view_model *m = app->model;
	const struct mt_view_row *r;
	const struct mt_tree_node *n;
	unsigned hidden = 0;

	app->entries = 0;
	assert_int_equal(mt_view_app_refresh(app), 0);
	assert_int_equal(mt_view_model_nrows(m), 10);
	r = mt_view_model_row(m, 0);
	assert_string_equal(mt_tree_node_label(r->node), "xmalloc [samples/phases.c:94] via malloc");
	assert_true(r->expanded);
	assert_int_equal(cost(m, 0)->bytes, 297088);
	assert_int_equal(cost(m, 0)->blocks, 15);
	assert_int_equal(cost(m, 0)->allocs, 23);
	r = mt_view_model_row(m, 1);
	assert_true(is_fn(r, "make_report") && r->expanded && r->depth == 1);
	assert_int_equal(cost(m, 1)->bytes, 262144);
	/* make_report's caller, a row of its own, then the fold */
	r = mt_view_model_row(m, 2);
	assert_true(is_fn(r, "main") && r->expanded && r->depth == 2 && r->fold == 0);
	assert_int_equal(cost(m, 2)->bytes, 262144);
	r = mt_view_model_row(m, 3);
	assert_int_equal(r->depth, 3);
	assert_true(r->fold >= 2);
	assert_ptr_equal(mt_tree_node_parent(r->node), mt_view_model_row(m, 2)->node);
	for (n = r->node; mt_tree_node_nchildren(n); n = mt_tree_node_child(n, 0))
		hidden++;
	assert_int_equal(r->fold, hidden);
	assert_int_equal(cost(m, 3)->bytes, 262144);
	/* the chain's last frame under it, a leaf, selected */
	r = mt_view_model_row(m, 4);
	assert_ptr_equal(r->node, n);
	assert_int_equal(r->depth, 4);
	assert_int_equal(r->nchildren, 0);
	assert_int_equal(r->fold, 0);
	assert_int_equal(cost(m, 4)->bytes, 262144);
	assert_int_equal(mt_view_model_selected(m), 4);
	assert_true(is_fn(mt_view_model_row(m, 5), "build_index"));
	assert_int_equal(cost(m, 5)->bytes, 32768);
	assert_true(is_fn(mt_view_model_row(m, 6), "load_config"));
	assert_true(is_fn(mt_view_model_row(m, 7), "load_config"));
	assert_int_equal(cost(m, 8)->bytes, 128);
	r = mt_view_model_row(m, 9);
	assert_string_equal(mt_tree_node_label(r->node),
			    "grow_rows [samples/phases.c:130] via realloc");
	assert_false(r->expanded);
	assert_int_equal(r->depth, 0);
	assert_int_equal(cost(m, 9)->bytes, 65536);
	assert_int_equal(cost(m, 9)->blocks, 8);
	/* Enter on the fold: its frames as rows, the selection on the first */
	mt_view_model_select(m, 3);
	assert_int_equal(mt_view_model_expand(m), 1);
	assert_int_equal(mt_view_model_nrows(m), 10 - 1 + hidden);
	assert_int_equal(mt_view_model_selected(m), 3);
	for (size_t i = 0; i < hidden; i++) {
		r = mt_view_model_row(m, 3 + i);
		assert_true(r->fold == 0 && r->expanded && r->depth == 3 + i);
	}
	assert_ptr_equal(mt_view_model_row(m, 3 + hidden)->node, n);
	assert_int_equal(mt_view_model_row(m, 3 + hidden)->depth, 3 + hidden);
	/* e: the entry points first, again on its chain: malloc, xmalloc, make_report, main */
	app->entries = 1;
	assert_int_equal(mt_view_app_refresh(app), 0);
	assert_true(is_fn(mt_view_model_row(m, 0), "malloc"));
	assert_true(mt_view_model_row(m, 0)->expanded);
	assert_true(is_fn(mt_view_model_row(m, 1), "xmalloc"));
	assert_true(is_fn(mt_view_model_row(m, 2), "make_report"));
	assert_true(is_fn(mt_view_model_row(m, 3), "main"));
	assert_int_equal(mt_view_model_row(m, 4)->fold, hidden);
	assert_int_equal(mt_view_model_row(m, 5)->nchildren, 0);
	assert_int_equal(cost(m, 5)->bytes, 262144);
	assert_int_equal(mt_view_model_selected(m), 5);
}

/*
 * Another point: rows nobody touched since the chain opened open on the new
 * point's chain; rows the user moved in stay. At the end (phases.c: 9,216
 * B, the config's 1,024 from load_config and rows 14 and 15, 8,192 B, from
 * build_index, all through xmalloc), build_index's 8,192 B are more than
 * half of xmalloc's: its chain opens, down to its last frame, and the peak's
 * make_report is gone. Moved once, back to the peak: xmalloc and
 * build_index stay open, make_report stays closed.
 */
static void test_reopen(void **state)
{
	struct mt_view_app *app = get(state);
	struct mt_view_model *m = app->model;
	const struct mt_view_row *r;
	size_t i;

	app->entries = 0;
	assert_int_equal(mt_view_app_refresh(app), 0);
	assert_true(is_fn(mt_view_model_row(m, 1), "make_report"));
	mt_view_timeline_end(app->tl);
	assert_int_equal(mt_view_app_refresh(app), 0);
	assert_int_equal(app->total.bytes, 9216);
	r = mt_view_model_row(m, 0);
	assert_true(is_fn(r, "xmalloc") && r->expanded);
	r = mt_view_model_row(m, 1);
	assert_true(is_fn(r, "build_index") && r->expanded);
	assert_int_equal(cost(m, 1)->bytes, 8192);
	r = mt_view_model_row(m, mt_view_model_selected(m));
	assert_int_equal(r->nchildren, 0);
	assert_int_equal(mt_tree_node_cost(r->node)->bytes, 8192);
	assert_int_equal(find(m, 1, "make_report"), SIZE_MAX);
	/* s: the same chain by blocks (2 of 3), reopened as well */
	app->sort = MT_TREE_BY_BLOCKS;
	mt_view_model_sort(m, app->sort);
	assert_true(mt_view_model_reopen(m, app->sort) >= 0);
	assert_true(is_fn(mt_view_model_row(m, 1), "build_index"));
	assert_int_equal(mt_view_model_row(m, mt_view_model_selected(m))->nchildren, 0);
	app->sort = MT_TREE_BY_BYTES;
	mt_view_model_sort(m, app->sort);
	/* the user moves: nothing reopens any more */
	mt_view_model_move(m, -1);
	assert_int_equal(mt_view_model_reopen(m, app->sort), 0);
	mt_view_timeline_peak(app->tl);
	assert_int_equal(mt_view_app_refresh(app), 0);
	assert_true(mt_view_model_row(m, 0)->expanded);
	i = find(m, 1, "build_index");
	assert_true(i != SIZE_MAX && mt_view_model_row(m, i)->expanded);
	i = find(m, 1, "make_report");
	assert_true(i != SIZE_MAX && !mt_view_model_row(m, i)->expanded);
	app->entries = 1;
}

/* Search and '*' show what a fold hides. */
static void test_fold_search(void **state)
{
	struct mt_view_app *app = get(state);
	struct mt_view_model *m = app->model;
	const struct mt_tree_node *hid;
	char name[256];
	size_t i;

	/* malloc, xmalloc, make_report, main, the fold, the last frame */
	mt_view_model_dominant(m, MT_TREE_BY_BYTES);
	assert_true(mt_view_model_row(m, 4)->fold >= 2);
	hid = mt_view_model_row(m, 4)->node;
	snprintf(name, sizeof(name), "%s", mt_tree_node_label(hid));
	/* from main, the next node with that label is the hidden one */
	mt_view_model_select(m, 3);
	assert_int_equal(mt_view_model_search(m, name, 0), 0);
	i = mt_view_model_selected(m);
	assert_ptr_equal(mt_view_model_row(m, i)->node, hid);
	assert_int_equal(mt_view_model_row(m, i)->fold, 0);
	assert_int_equal(mt_view_model_row(m, i)->depth, 4);
	/* '*' on malloc: every node, no fold */
	mt_view_model_forget(m);
	mt_view_model_dominant(m, MT_TREE_BY_BYTES);
	mt_view_model_select(m, 0);
	assert_int_equal(mt_view_model_expand_all(m), 1);
	assert_int_equal(mt_view_model_nrows(m), 2 + subtree(mt_view_model_row(m, 0)->node));
	for (i = 0; i < mt_view_model_nrows(m); i++)
		assert_int_equal(mt_view_model_row(m, i)->fold, 0);
}

/*
 * f: the flat list at the peak (phases.c, see test_sites_first_screen):
 * by self, the two allocation sites, xmalloc 297,088 B then grow_rows
 * 65,536 B; by total, main's 362,624 B come before xmalloc, make_report
 * holds 262,144 B and nothing itself; its places in the tree: one row.
 */
static void test_flat(void **state)
{
	struct mt_view_app *app = get(state);
	struct mt_view_flat *f = mt_view_flat_new();
	const struct mt_tree_fn *fn;
	size_t i, mr = SIZE_MAX, mn = SIZE_MAX, xm = SIZE_MAX;

	assert_non_null(f);
	assert_int_equal(mt_view_flat_set(f, mt_view_model_tree(app->model)), 0);
	assert_int_equal(mt_view_flat_nrows(f), 2);
	assert_string_equal(mt_view_flat_row(f, 0)->name, "xmalloc");
	assert_int_equal(mt_view_flat_row(f, 0)->self.bytes, 297088);
	assert_int_equal(mt_view_flat_row(f, 0)->self.allocs, 23);
	assert_string_equal(mt_view_flat_row(f, 1)->name, "grow_rows");
	assert_int_equal(mt_view_flat_row(f, 1)->self.blocks, 8);
	mt_view_flat_move(f, 1);
	mt_view_flat_sort(f, 1, MT_TREE_BY_BYTES);
	/* the selection follows grow_rows */
	assert_string_equal(mt_view_flat_row(f, mt_view_flat_selected(f))->name, "grow_rows");
	for (i = 0; (fn = mt_view_flat_row(f, i)); i++) {
		if (!strcmp(fn->name, "make_report"))
			mr = i;
		else if (!strcmp(fn->name, "main"))
			mn = i;
		else if (!strcmp(fn->name, "xmalloc"))
			xm = i;
	}
	assert_true(mn < xm && xm < mr && mr != SIZE_MAX);
	assert_int_equal(mt_view_flat_row(f, mn)->total.bytes, fx->ex.peak_bytes);
	assert_int_equal(mt_view_flat_row(f, mr)->total.bytes, 262144);
	assert_int_equal(mt_view_flat_row(f, mr)->self.bytes, 0);
	/* s: from total bytes to self blocks (xmalloc's 15, grow_rows' 8),
	 * total blocks, self calls (xmalloc's 23), total calls (31, main's
	 * and its callers': xmalloc's 23 and grow_rows' 8), self bytes again */
	mt_view_flat_next_order(f);
	assert_false(mt_view_flat_by_total(f));
	assert_int_equal(mt_view_flat_key(f), MT_TREE_BY_BLOCKS);
	assert_int_equal(mt_view_flat_nrows(f), 2);
	assert_int_equal(mt_view_flat_row(f, 0)->self.blocks, 15);
	mt_view_flat_next_order(f);
	assert_true(mt_view_flat_by_total(f));
	assert_int_equal(mt_view_flat_key(f), MT_TREE_BY_BLOCKS);
	mt_view_flat_next_order(f);
	assert_false(mt_view_flat_by_total(f));
	assert_int_equal(mt_view_flat_key(f), MT_TREE_BY_ALLOCS);
	assert_string_equal(mt_view_flat_row(f, 0)->name, "xmalloc");
	assert_int_equal(mt_view_flat_row(f, 0)->self.allocs, 23);
	mt_view_flat_next_order(f);
	assert_true(mt_view_flat_by_total(f));
	assert_int_equal(mt_view_flat_key(f), MT_TREE_BY_ALLOCS);
	assert_string_equal(mt_view_flat_order_name(f), "total calls");
	assert_int_equal(mt_view_flat_row(f, 0)->total.allocs, 31);
	mt_view_flat_next_order(f);
	assert_false(mt_view_flat_by_total(f));
	assert_int_equal(mt_view_flat_key(f), MT_TREE_BY_BYTES);
	assert_string_equal(mt_view_flat_row(f, 0)->name, "xmalloc");
	mt_view_flat_free(f);
	/* make_report's place: under malloc and xmalloc; then nowhere else */
	assert_int_equal(mt_view_model_find_function(app->model, "make_report", 1), 0);
	i = mt_view_model_selected(app->model);
	assert_string_equal(mt_tree_node_label(mt_view_model_row(app->model, i)->node),
			    "make_report [samples/phases.c:142]");
	assert_int_equal(mt_view_model_find_function(app->model, "make_report", 0), 0);
	assert_int_equal(mt_view_model_selected(app->model), i);
	/* not a part of a name: "make" is no function */
	assert_int_equal(mt_view_model_find_function(app->model, "make", 1), MT_E_NOTFOUND);
}

/*
 * l: the leaks (phases.c: the 1,024 B config from load_config and rows 14
 * and 15 of build_index) against the expect block's leaked figures; K:
 * each kind's blocks.
 */
static void test_leaks(void **state)
{
	struct mt_view_app *app = get(state);
	struct mt_view_model *m = app->model;
	size_t x, r;

	app->mode = MT_VIEW_LEAKS;
	assert_int_equal(refresh_closed(app), 0);
	assert_int_equal(app->total.bytes, fx->ex.leaked_bytes);
	assert_int_equal(app->total.blocks, fx->ex.leaked_blocks);
	open_row(m, 0, "malloc");
	x = open_row(m, 1, "xmalloc");
	r = find(m, 2, "build_index");
	assert_int_equal(r, x + 1);
	assert_int_equal(cost(m, r)->bytes, 2 * 4096);
	assert_int_equal(cost(m, r)->blocks, 2);
	r = find(m, 2, "load_config");
	assert_int_equal(cost(m, r)->bytes, 1024);
	assert_int_equal(cost(m, r)->blocks, 1);
	/* the kinds of the check at exit (phases.c: rows 14 and 15 definitely
	 * lost, the config still reachable from its global), one per K */
	{
		static const int64_t bytes[MT_LEAK_KINDS] = { 8192, 0, 0, 1024 };
		static const int64_t blocks[MT_LEAK_KINDS] = { 2, 0, 0, 1 };

		for (int k = 0; k < MT_LEAK_KINDS; k++) {
			app->leak_kind = k;
			assert_int_equal(refresh_closed(app), 0);
			assert_int_equal(app->total.bytes, bytes[k]);
			assert_int_equal(app->total.blocks, blocks[k]);
		}
		app->leak_kind = 0;
		assert_int_equal(refresh_closed(app), 0);
		open_row(m, 0, "malloc");
		x = open_row(m, 1, "xmalloc");
		r = find(m, 2, "build_index");
		assert_int_equal(cost(m, r)->bytes, 2 * 4096);
		assert_int_equal(cost(m, r)->blocks, 2);
		assert_false(mt_view_model_has_kinds(m));
		app->leak_kind = -1;
		assert_int_equal(refresh_closed(app), 0);
		assert_int_equal(app->total.bytes, fx->ex.leaked_bytes);
		/* every block: each row's bytes per kind, by the row's path */
		assert_true(mt_view_model_has_kinds(m));
		open_row(m, 0, "malloc");
		x = open_row(m, 1, "xmalloc");
		r = find(m, 2, "build_index");
		{
			struct mt_cost k[MT_LEAK_KINDS];

			assert_int_equal(mt_view_model_row_kinds(m, r, k), 0);
			assert_int_equal(k[MT_LEAK_DEFINITE].bytes, 2 * 4096);
			assert_int_equal(k[MT_LEAK_DEFINITE].blocks, 2);
			assert_int_equal(k[MT_LEAK_REACHABLE].bytes, 0);
			r = find(m, 2, "load_config");
			assert_int_equal(mt_view_model_row_kinds(m, r, k), 0);
			assert_int_equal(k[MT_LEAK_DEFINITE].bytes, 0);
			assert_int_equal(k[MT_LEAK_REACHABLE].bytes, 1024);
			assert_int_equal(k[MT_LEAK_REACHABLE].blocks, 1);
			assert_int_equal(mt_view_model_row_kinds(m, mt_view_model_nrows(m), k), -1);
		}
	}
	app->mode = MT_VIEW_LIVE;
	assert_int_equal(refresh_closed(app), 0);
	assert_false(mt_view_model_has_kinds(m));
}

/*
 * c: every call of the run (phases.c's totals: 35 allocations, 403,584 B),
 * wherever the cursor is. By calls: malloc's 5 + 17 + 1 + 4 = 27 calls
 * (2,048 + 65,664 + 262,144 + 8,192 = 338,048 B) before realloc's 8
 * (8 x 8,192 = 65,536 B); under xmalloc, build_index's 16 rows (65,536 B)
 * first, its table (1 call) apart.
 */
static void test_calls(void **state)
{
	struct mt_view_app *app = get(state);
	struct mt_view_model *m = app->model;
	size_t x, r;

	app->mode = MT_VIEW_CALLS;
	app->sort = MT_TREE_BY_ALLOCS;
	mt_view_timeline_home(app->tl);
	assert_int_equal(refresh_closed(app), 0);
	assert_int_equal(app->total.blocks, fx->ex.allocations);
	assert_int_equal(app->total.allocs, fx->ex.allocations);
	assert_int_equal(app->total.bytes, fx->ex.bytes_allocated);
	assert_int_equal(mt_view_model_nrows(m), 2);
	assert_true(is_fn(mt_view_model_row(m, 0), "malloc"));
	assert_int_equal(cost(m, 0)->blocks, 27);
	assert_int_equal(cost(m, 0)->bytes, 338048);
	assert_true(is_fn(mt_view_model_row(m, 1), "realloc"));
	assert_int_equal(cost(m, 1)->blocks, 8);
	assert_int_equal(cost(m, 1)->bytes, 65536);
	open_row(m, 0, "malloc");
	x = open_row(m, 1, "xmalloc");
	r = x + 1;
	assert_true(is_fn(mt_view_model_row(m, r), "build_index"));
	assert_int_equal(cost(m, r)->blocks, 16);
	assert_int_equal(cost(m, r)->bytes, 65536);
	/* the same tree at the end of the run */
	mt_view_timeline_end(app->tl);
	assert_false(mt_view_app_stale(app));
	app->mode = MT_VIEW_LIVE;
	app->sort = MT_TREE_BY_BYTES;
}

/* Moving the timeline cursor: snapshots, the peak, the end. */
static void test_timeline_points(void **state)
{
	struct mt_view_app *app = get(state);
	const struct mt_view_point *p;

	mt_view_timeline_home(app->tl);
	for (int i = 0; i < fx->ex.nsnaps; i++) {
		assert_int_equal(mt_view_timeline_snapshot(app->tl, 1), 1);
		p = mt_view_timeline_cursor(app->tl);
		assert_int_equal(p->kind, MT_VIEW_AT_SNAPSHOT);
		assert_int_equal(p->snapshot, (size_t)i);
		assert_int_equal(mt_view_app_refresh(app), 0);
		assert_int_equal(app->total.bytes, fx->ex.snap_bytes[i]);
		assert_int_equal(app->total.blocks, fx->ex.snap_blocks[i]);
	}
	assert_int_equal(mt_view_timeline_snapshot(app->tl, 1), 0);
	assert_int_equal(mt_view_timeline_snapshot(app->tl, -1), 1);
	assert_int_equal(mt_view_timeline_cursor(app->tl)->snapshot, 1);
	assert_int_equal(mt_view_timeline_end(app->tl), 1);
	assert_int_equal(mt_view_app_refresh(app), 0);
	assert_int_equal(app->total.bytes, fx->ex.leaked_bytes);
	assert_int_equal(mt_view_timeline_peak(app->tl), 1);
	assert_int_equal(mt_view_app_refresh(app), 0);
	assert_int_equal(app->total.bytes, fx->ex.peak_bytes);
	/* the peak's column is the graph's highest and is the cursor's */
	assert_int_equal(mt_view_timeline_cursor_col(app->tl), mt_view_timeline_peak_col(app->tl));
	assert_int_equal(mt_view_timeline_ymax(app->tl), fx->ex.peak_bytes);
	assert_int_equal(mt_view_timeline_col(app->tl, mt_view_timeline_peak_col(app->tl))->max_bytes,
			 fx->ex.peak_bytes);
	/* a plain column: the tree's total is the heap after that slice */
	mt_view_timeline_home(app->tl);
	assert_int_equal(mt_view_timeline_move(app->tl, -1), 0);
	assert_int_equal(mt_view_app_refresh(app), 0);
	assert_true(app->total.bytes >= 0);
	assert_true(app->total.bytes <= fx->ex.peak_bytes);
}

/* Reads the first figure after "diff" in report's text output, e.g. "+24,576B". */
static int report_diff_total(const char *log, int64_t *bytes)
{
	struct mt_report_opts o = { .show = MT_SHOW_DIFF, .threshold_pct = 1.0 };
	struct mt_session *r;
	char *text = NULL, *p;
	size_t len = 0;
	FILE *out;
	int rc;

	o.diff_a.kind = MT_AT_SNAPSHOT;
	o.diff_a.value = 0;
	o.diff_b.kind = MT_AT_SNAPSHOT;
	o.diff_b.value = 1;
	if (mt_session_open(log, NULL, &r, NULL) < 0)
		return -1;
	out = open_memstream(&text, &len);
	rc = out ? mt_report_write(r, &o, out) : MT_E_NOMEM;
	if (out)
		fclose(out);
	mt_session_free(r);
	if (rc < 0) {
		free(text);
		return rc;
	}
	/* the tree's header line: "...: +24,576B" */
	p = text ? strchr(text, ':') : NULL;
	rc = -1;
	if (p) {
		char digits[32];
		size_t k = 0;
		int neg = 0;

		for (p++; *p == ' '; p++)
			;
		if (*p == '+' || *p == '-')
			neg = *p++ == '-';
		for (; (*p >= '0' && *p <= '9') || *p == ','; p++)
			if (*p != ',' && k + 1 < sizeof(digits))
				digits[k++] = *p;
		digits[k] = '\0';
		if (k) {
			*bytes = strtoll(digits, NULL, 10) * (neg ? -1 : 1);
			rc = 0;
		}
	}
	free(text);
	return rc;
}

/*
 * d: mark snapshot 0, cursor on snapshot 1: the diff's total is the change
 * between the expect block's snapshots (92,288 - 67,712 = +24,576 B, blocks
 * unchanged), grown first, and the same as `report --diff 0 1`.
 */
static void test_diff(void **state)
{
	struct mt_view_app *app = get(state);
	struct mt_view_model *m = app->model;
	int64_t want = fx->ex.snap_bytes[1] - fx->ex.snap_bytes[0], rep = 0;
	int rc;

	mt_view_timeline_home(app->tl);
	assert_int_equal(mt_view_timeline_snapshot(app->tl, 1), 1);
	mt_view_timeline_set_mark(app->tl);
	assert_int_equal(mt_view_timeline_snapshot(app->tl, 1), 1);
	app->mode = MT_VIEW_DIFF;
	assert_int_equal(refresh_closed(app), 0);
	assert_int_equal(app->total.bytes, want);
	assert_int_equal(app->total.blocks, fx->ex.snap_blocks[1] - fx->ex.snap_blocks[0]);
	/* grown first: the top rows' bytes never increase going down */
	for (size_t i = 1; i < mt_view_model_nrows(m); i++)
		if (cost(m, i - 1)->bytes < 0)
			assert_true(cost(m, i)->bytes <= 0);
	/*
	 * rows 0..7 moved from malloc's 4,096 B blocks to realloc's 8,192 B
	 * ones: realloc +65,536 B in +8 blocks, first; malloc lost them
	 * (-32,768) and rows 8..11 shrank from 4,096 to 2,048 (-8,192)
	 */
	assert_true(is_fn(mt_view_model_row(m, 0), "realloc"));
	assert_int_equal(cost(m, 0)->bytes, 8 * 8192);
	assert_int_equal(cost(m, 0)->blocks, 8);
	assert_true(is_fn(mt_view_model_row(m, 1), "malloc"));
	assert_int_equal(cost(m, 1)->bytes, -8 * 4096 + 4 * (2048 - 4096));
	assert_int_equal(cost(m, 1)->blocks, -8);
	app->mode = MT_VIEW_LIVE;

	rc = report_diff_total(fx->log, &rep);
	if (rc == MT_E_ARG || rc == MT_E_NOTFOUND)
		skip();                /* report --diff not available in lib/ yet */
	assert_int_equal(rc, 0);
	assert_int_equal(rep, want);
}

/*
 * Column points are the columns' end states, or the latest indexed point
 * before one: each equals the profile that lib/agg computes on its own
 * replay for the same time, and, at an end state, the column's own end
 * figures in the graph.
 */
static void test_columns_indexed(void **state)
{
	struct mt_view_app *app = get(state);
	size_t n = mt_view_timeline_ncols(app->tl), at_end = 0;
	struct mt_replay *r;
	struct mt_agg *a;

	assert_int_equal(mt_replay_open(fx->log, &r, NULL), 0);
	a = mt_agg_new();
	assert_non_null(a);
	mt_view_timeline_home(app->tl);
	for (size_t c = 0; c < n; c += n / 7 + 1) {
		const struct mt_view_point *p;
		struct mt_profile *want;
		struct mt_cost w;

		const struct mt_series_col *col;

		mt_view_timeline_move(app->tl, (long)c - (long)mt_view_timeline_cursor_col(app->tl));
		p = mt_view_timeline_cursor(app->tl);
		assert_int_equal(p->kind, MT_VIEW_AT_COLUMN);
		assert_int_equal(p->at.kind, MT_AT_TIME);
		col = mt_view_timeline_col(app->tl, c);
		assert_int_equal(p->at.value, mt_session_indexed_time(mt_view_data_session(app->data),
								      col->end_ns - 1));
		assert_true(p->at.value <= col->end_ns - 1);
		assert_int_equal(mt_view_app_refresh(app), 0);
		if (p->at.value == col->end_ns - 1) {
			assert_int_equal(app->total.bytes, col->end_bytes);
			assert_int_equal(app->total.blocks, col->end_blocks);
			at_end++;
		}
		assert_int_equal(mt_agg_run(a, r, &p->at, 1, &want, NULL), 0);
		w = mt_profile_total(want);
		assert_int_equal(app->total.bytes, w.bytes);
		assert_int_equal(app->total.blocks, w.blocks);
		assert_int_equal(app->total.allocs, w.allocs);
		mt_profile_free(want);
	}
	/* this short run has a mark at most columns' ends */
	assert_true(at_end > 0);
	mt_agg_free(a);
	mt_replay_free(r);
}

/* d with the mark at the end and the cursor at the peak: peak - leaked. */
static void test_diff_end(void **state)
{
	struct mt_view_app *app = get(state);

	assert_int_equal(mt_view_timeline_end(app->tl), 1);
	mt_view_timeline_set_mark(app->tl);
	assert_int_equal(mt_view_timeline_peak(app->tl), 1);
	app->mode = MT_VIEW_DIFF;
	assert_int_equal(mt_view_app_refresh(app), 0);
	assert_int_equal(app->total.bytes, fx->ex.peak_bytes - fx->ex.leaked_bytes);
	assert_int_equal(app->total.blocks, fx->ex.peak_blocks - fx->ex.leaked_blocks);
	/* and the other way round */
	assert_int_equal(mt_view_timeline_end(app->tl), 1);
	assert_int_equal(mt_view_timeline_peak(app->tl), 1);
	mt_view_timeline_set_mark(app->tl);
	assert_int_equal(mt_view_timeline_end(app->tl), 1);
	assert_int_equal(mt_view_app_refresh(app), 0);
	assert_int_equal(app->total.bytes, fx->ex.leaked_bytes - fx->ex.peak_bytes);
	app->mode = MT_VIEW_LIVE;
}

/* Appends bytes [from, to) of img to the file at path. */
static void append(const char *path, const uint8_t *img, size_t from, size_t to)
{
	FILE *f = fopen(path, "ab");

	assert_non_null(f);
	assert_int_equal(fwrite(img + from, 1, to - from, f), to - from);
	fclose(f);
}

/*
 * A log followed while it is written, one chunk at a time (a log of its
 * own, made with tests/testlog.c: 1,000 B allocated in the first chunk,
 * 2,000 B in the second, the first block freed and END in the third): the
 * cursor opens on "now" and stays pinned there, its tree following the
 * run; moved into the past it keeps its point while the run grows; End
 * pins it again; END ends the following ("end", no longer "now").
 */
static void test_follow(void **state)
{
	struct mt_view_data *d;
	struct mt_view_app app;
	struct mt_view_point past;
	char path[160], what[64];
	const uint8_t *img;
	size_t len;
	uint64_t off;
	struct testlog *t = tl_new(7, "live", 5);
	uint64_t ips[1] = { 0x1234 };

	(void)state;
	tl_thread(t, 0, 70);
	tl_stack(t, 0, MT_FN_MALLOC, 1, ips);
	tl_alloc(t, 1000000, 0x10000, 1000, 0, 0);
	tl_flush(t);
	tl_alloc(t, 1000000, 0x20000, 2000, 0, 0);
	tl_flush(t);
	tl_free_block(t, 1000000, 0x10000, 0);
	tl_end(t, 1000, MT_END_EXIT, 0);
	img = tl_image(t, &len);
	assert_int_equal(tl_nchunks(t), 3);
	snprintf(path, sizeof(path), "%s/follow.data", fx->dir);
	tl_write_file(path, img, tl_chunk_offset(t, 1));

	assert_int_equal(mt_view_data_open(path, 1, NULL, &d, &off), 0);
	assert_int_equal(mt_view_app_init(&app, path, d, 30, 100), 0);
	assert_true(mt_view_data_following(d));
	assert_int_equal(mt_view_timeline_cursor(app.tl)->kind, MT_VIEW_AT_END);
	mt_view_timeline_describe(app.tl, mt_view_timeline_cursor(app.tl), what, sizeof(what));
	assert_string_equal(what, "now");
	assert_int_equal(mt_view_app_refresh(&app), 0);
	assert_int_equal(app.total.bytes, 1000);
	/* nothing new: nothing to redraw */
	assert_int_equal(mt_view_app_poll(&app), 0);

	/* the second chunk: now has 3,000 B */
	append(path, img, tl_chunk_offset(t, 1), tl_chunk_offset(t, 2));
	assert_int_equal(mt_view_app_poll(&app), MT_REDRAW);
	assert_true(mt_view_app_stale(&app));
	assert_int_equal(mt_view_app_refresh(&app), 0);
	assert_int_equal(app.total.bytes, 3000);
	assert_int_equal(mt_view_timeline_cursor(app.tl)->kind, MT_VIEW_AT_END);

	/* into the past: a quarter of the run back, between the allocations
	 * (at 1 and 2 ms) */
	assert_int_equal(mt_view_timeline_move(app.tl, -(long)mt_view_timeline_ncols(app.tl) / 4), 1);
	assert_int_equal(mt_view_timeline_cursor(app.tl)->kind, MT_VIEW_AT_COLUMN);
	past = *mt_view_timeline_cursor(app.tl);
	assert_int_equal(mt_view_app_refresh(&app), 0);
	assert_int_equal(app.total.bytes, 1000);

	/* the rest, END with it: the cursor in the past stays put */
	append(path, img, tl_chunk_offset(t, 2), len);
	assert_int_equal(mt_view_app_poll(&app), MT_REDRAW);
	assert_false(mt_view_data_following(d));
	assert_true(mt_view_data_end(d)->clean);
	assert_true(mt_view_point_same(mt_view_timeline_cursor(app.tl), &past));
	assert_false(mt_view_app_stale(&app));
	assert_int_equal(app.total.bytes, 1000);
	assert_int_equal(mt_view_data_stats(d)->peak_bytes, 3000);

	/* End: the end of the run, no longer "now" */
	assert_int_equal(mt_view_timeline_end(app.tl), 1);
	mt_view_timeline_describe(app.tl, mt_view_timeline_cursor(app.tl), what, sizeof(what));
	assert_string_equal(what, "end");
	assert_int_equal(mt_view_app_refresh(&app), 0);
	assert_int_equal(app.total.bytes, 2000);
	assert_int_equal(mt_view_app_poll(&app), 0);
	mt_view_app_fini(&app);
	tl_free(t);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_peak_top_rows, setup),
		cmocka_unit_test_setup(test_expand, setup),
		cmocka_unit_test_setup(test_collapse, setup),
		cmocka_unit_test_setup(test_expand_all, setup),
		cmocka_unit_test_setup(test_invert, setup),
		cmocka_unit_test_setup(test_sort, setup),
		cmocka_unit_test_setup(test_search, setup),
		cmocka_unit_test_setup(test_sites_first_screen, setup),
		cmocka_unit_test_setup(test_reopen, setup),
		cmocka_unit_test_setup(test_fold_search, setup),
		cmocka_unit_test_setup(test_flat, setup),
		cmocka_unit_test_setup(test_leaks, setup),
		cmocka_unit_test_setup(test_calls, setup),
		cmocka_unit_test_setup(test_timeline_points, setup),
		cmocka_unit_test_setup(test_diff, setup),
		cmocka_unit_test_setup(test_diff_end, setup),
		cmocka_unit_test_setup(test_columns_indexed, setup),
		cmocka_unit_test(test_follow),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
