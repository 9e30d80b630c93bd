/*
 * test_export.c - unit tests of lib/export.c on a synthetic tree that has
 * the shape and figures of the original memtrail README's example report:
 * the text layout is checked against that published output, byte for byte;
 * the other formats against sums and orders derived from the same five
 * stacks by hand. Not here: choosing trees and points (e2e report_*.sh),
 * the SVG's script in a browser (e2e report_svg.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agg.h"
#include "error.h"
#include "export.h"
#include "format.h"
#include "replay.h"
#include "symbols.h"
#include "tree.h"

#define MOD "/tmp/sample"
static const struct mt_frame frames[] = {
	/* 0 */ { "test_calloc()", "sample.cpp", 82, MOD, 0x1082, 0 },
	/* 1 */ { "main", "sample.cpp", 242, MOD, 0x1242, 0 },
	/* 2 */ { "__libc_start_call_main", "sysdeps/nptl/libc_start_call_main.h", 58, "/lib/libc.so.6", 0x58, 0 },
	/* 3 */ { "call_init", "csu/libc-start.c", 128, "/lib/libc.so.6", 0x128, 0 },
	/* 4 */ { "_start", NULL, 0, MOD, 0x1000, 0 },
	/* 5 */ { "test_malloc()", "sample.cpp", 57, MOD, 0x1057, 0 },
	/* 6 */ { "main", "sample.cpp", 241, MOD, 0x1241, 0 },
	/* 7 */ { "test_realloc()", "sample.cpp", 103, MOD, 0x1103, 0 },
	/* 8 */ { "main", "sample.cpp", 243, MOD, 0x1243, 0 },
	/* 9 */ { "TestGlobal::TestGlobal()", "sample.cpp", 212, MOD, 0x1212, 0 },
	/* 10 */ { "__static_initialization_and_destruction_0(int, int)", "sample.cpp", 225, MOD, 0x1225, 0 },
	/* 11 */ { "_GLOBAL__sub_I_leaked", "sample.cpp", 252, MOD, 0x1252, 0 },
	/* 12 */ { "call_init", "csu/libc-start.c", 144, "/lib/libc.so.6", 0x144, 0 },
	/* 13 */ { "test_realloc()", "sample.cpp", 106, MOD, 0x1106, 0 },
};

/* The ip of frame i is i + 1 (0 is never a return address). */
static const uint64_t s0[] = { 1, 2, 3, 4, 5 };
static const uint64_t s1[] = { 6, 7, 3, 4, 5 };
static const uint64_t s2[] = { 8, 9, 3, 4, 5 };
static const uint64_t s3[] = { 10, 11, 12, 13, 5 };
static const uint64_t s4[] = { 14, 9, 3, 4, 5 };
static const struct mt_stack stacks[] = {
	{ 0, MT_FN_CALLOC, 5, s0, 0 },
	{ 1, MT_FN_MALLOC, 5, s1, 0 },
	{ 2, MT_FN_MALLOC, 5, s2, 0 },
	{ 3, MT_FN_MALLOC, 5, s3, 0 },
	{ 4, MT_FN_REALLOC, 5, s4, 0 },
};
static const struct mt_cost costs[] = {
	{ 4096, 2, 2 }, { 1024, 1, 1 }, { 1024, 1, 1 }, { 768, 2, 2 }, { 2048, 1, 1 },
};

static const struct mt_stack *fake_stack(void *ctx, uint32_t id)
{
	(void)ctx;
	return id < 5 ? &stacks[id] : NULL;
}

static int fake_resolve(void *ctx, uint64_t ip, const struct mt_frame **f, size_t *n)
{
	(void)ctx;
	if (ip < 1 || ip > sizeof(frames) / sizeof(frames[0]))
		return MT_E_ARG;
	*f = &frames[ip - 1];
	*n = 1;
	return 0;
}

static const struct mt_tree_source src = { fake_stack, fake_resolve, NULL, NULL };

/* The README's report, after its "maximum: 8,960B" header line. */
static const char readme[] =
"  -> 45.71% (4,096B, 2x): calloc\n"
"  | -> 45.71% (4,096B, 2x): test_calloc() [sample.cpp:82]\n"
"  |   -> 45.71% (4,096B, 2x): main [sample.cpp:242]\n"
"  |     -> 45.71% (4,096B, 2x): __libc_start_call_main [sysdeps/nptl/libc_start_call_main.h:58]\n"
"  |       -> 45.71% (4,096B, 2x): call_init [csu/libc-start.c:128]\n"
"  |         -> 45.71% (4,096B, 2x): _start\n"
"  | \n"
"  -> 31.43% (2,816B, 4x): malloc\n"
"  | -> 11.43% (1,024B, 1x): test_malloc() [sample.cpp:57]\n"
"  | | -> 11.43% (1,024B, 1x): main [sample.cpp:241]\n"
"  | |   -> 11.43% (1,024B, 1x): __libc_start_call_main [sysdeps/nptl/libc_start_call_main.h:58]\n"
"  | |     -> 11.43% (1,024B, 1x): call_init [csu/libc-start.c:128]\n"
"  | |       -> 11.43% (1,024B, 1x): _start\n"
"  | | \n"
"  | -> 11.43% (1,024B, 1x): test_realloc() [sample.cpp:103]\n"
"  | | -> 11.43% (1,024B, 1x): main [sample.cpp:243]\n"
"  | |   -> 11.43% (1,024B, 1x): __libc_start_call_main [sysdeps/nptl/libc_start_call_main.h:58]\n"
"  | |     -> 11.43% (1,024B, 1x): call_init [csu/libc-start.c:128]\n"
"  | |       -> 11.43% (1,024B, 1x): _start\n"
"  | | \n"
"  | -> 8.57% (768B, 2x): TestGlobal::TestGlobal() [sample.cpp:212]\n"
"  |   -> 8.57% (768B, 2x): __static_initialization_and_destruction_0(int, int) [sample.cpp:225]\n"
"  |     -> 8.57% (768B, 2x): _GLOBAL__sub_I_leaked [sample.cpp:252]\n"
"  |       -> 8.57% (768B, 2x): call_init [csu/libc-start.c:144]\n"
"  |         -> 8.57% (768B, 2x): _start\n"
"  | \n"
"  -> 22.86% (2,048B, 1x): realloc\n"
"    -> 22.86% (2,048B, 1x): test_realloc() [sample.cpp:106]\n"
"      -> 22.86% (2,048B, 1x): main [sample.cpp:243]\n"
"        -> 22.86% (2,048B, 1x): __libc_start_call_main [sysdeps/nptl/libc_start_call_main.h:58]\n"
"          -> 22.86% (2,048B, 1x): call_init [csu/libc-start.c:128]\n"
"            -> 22.86% (2,048B, 1x): _start\n";

struct fixture {
	struct mt_profile *p;
	struct mt_tree *t;
	char *buf;
	size_t len;
	FILE *out;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->p = mt_profile_new();
	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(mt_profile_add(f->p, i, &costs[i]), 0);
	f->out = open_memstream(&f->buf, &f->len);
	assert_non_null(f->out);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	fclose(f->out);
	free(f->buf);
	mt_tree_free(f->t);
	mt_profile_free(f->p);
	free(f);
	return 0;
}

static const char *output(struct fixture *f)
{
	fflush(f->out);
	return f->buf;
}

/* Empties the output. */
static void reset_output(struct fixture *f)
{
	fclose(f->out);
	free(f->buf);
	f->buf = NULL;
	f->out = open_memstream(&f->buf, &f->len);
	assert_non_null(f->out);
}

#define assert_starts(s, lit) assert_memory_equal(s, lit, sizeof(lit) - 1)

static void build(struct fixture *f, int inverted, int skip_entry)
{
	struct mt_tree_opts o = { 0 };

	o.inverted = inverted;
	o.skip_entry = skip_entry;
	assert_int_equal(mt_tree_build(f->p, &src, &o, &f->t), 0);
}

static void test_text_readme(void **state)
{
	struct fixture *f = *state;
	struct mt_text_opts o = { 1.0, 0, 0, 0, 0 };

	build(f, 0, 0);
	assert_int_equal(mt_tree_node_cost(mt_tree_root(f->t))->bytes, 8960);
	assert_int_equal(mt_export_text(f->t, &o, f->out), 0);
	assert_string_equal(output(f), readme);
}

/* 768 / 8,960 = 8.57% < 10%: TestGlobal folds under malloc. */
static void test_text_threshold_top(void **state)
{
	struct fixture *f = *state;
	struct mt_text_opts o = { 10.0, 0, 0, 0, 0 };
	const char *s, *want =
	"  | -> 8.57% (768B, 2x) in 1 place, all below the 10% threshold\n"
	"  | \n"
	"  -> 22.86% (2,048B, 1x): realloc\n";

	build(f, 0, 0);
	assert_int_equal(mt_export_text(f->t, &o, f->out), 0);
	s = output(f);
	assert_non_null(strstr(s, want));
	assert_null(strstr(s, "TestGlobal"));
	/* 2.5% threshold: nothing folds, output as at 1% */
	reset_output(f);
	o.threshold_pct = 2.5;
	o.top = 2;
	assert_int_equal(mt_export_text(f->t, &o, f->out), 0);
	s = output(f);
	/* --top 2: calloc and malloc only; the second is then the last */
	assert_null(strstr(s, "realloc\n"));
	assert_non_null(strstr(s, "  -> 31.43% (2,816B, 4x): malloc\n"
				  "    -> 11.43% (1,024B, 1x): test_malloc() [sample.cpp:57]\n"));
	assert_null(strstr(s, "threshold"));
}

/* A diff: calloc -4,096B (2 blocks freed), realloc +2,048B: gross 6,144. */
static void test_text_signed(void **state)
{
	struct fixture *f = *state;
	struct mt_profile *d = mt_profile_new();
	const struct mt_cost c0 = { -4096, -2, 0 }, c4 = { 2048, 1, 1 };
	struct mt_text_opts o = { 1.0, 0, 1, 0, 0 };
	const char *s;

	assert_int_equal(mt_profile_add(d, 0, &c0), 0);
	assert_int_equal(mt_profile_add(d, 4, &c4), 0);
	assert_int_equal(mt_tree_build(d, &src, NULL, &f->t), 0);
	assert_int_equal(mt_export_text(f->t, &o, f->out), 0);
	s = output(f);
	assert_starts(s, "  -> +33.33% (+2,048B, +1x): realloc\n");
	assert_non_null(strstr(s, "\n  | \n  -> -66.67% (-4,096B, -2x): calloc\n"
				  "    -> -66.67% (-4,096B, -2x): test_calloc() [sample.cpp:82]\n"));
	mt_profile_free(d);
}

/*
 * Averages (calls): 2 calls of 5 B in all average 2.5 B, shown 3 (to the
 * nearest byte, halves up); 3 calls of 7 B, 2.33 B, shown 2. Percentages
 * and order on the calls (blocks): 3 of 5 = 60%, 2 of 5 = 40%.
 */
static void test_text_averages(void **state)
{
	struct fixture *f = *state;
	struct mt_profile *p = mt_profile_new();
	const struct mt_cost c0 = { 5, 2, 2 }, c4 = { 7, 3, 3 };
	struct mt_text_opts o = { 1.0, 0, 0, 1, 1 };

	assert_int_equal(mt_profile_add(p, 0, &c0), 0);
	assert_int_equal(mt_profile_add(p, 4, &c4), 0);
	assert_int_equal(mt_tree_build(p, &src, NULL, &f->t), 0);
	mt_tree_sort(f->t, MT_TREE_BY_BLOCKS);
	assert_int_equal(mt_export_text(f->t, &o, f->out), 0);
	assert_starts(output(f), "  -> 60.00% (7B, 3x, avg 2B): realloc\n");
	assert_non_null(strstr(output(f), "  -> 40.00% (5B, 2x, avg 3B): calloc\n"));
	mt_profile_free(p);
}

static void test_collapsed(void **state)
{
	struct fixture *f = *state;
	const char *s;
	char *copy, *line, *save;
	int64_t sum = 0;
	int lines = 0;

	build(f, 1, 0);
	assert_int_equal(mt_export_collapsed(f->t, MT_EXPORT_BYTES, f->out), 0);
	s = output(f);
	assert_non_null(strstr(s, "_start;call_init [csu/libc-start.c:128];"
		"__libc_start_call_main [sysdeps/nptl/libc_start_call_main.h:58];"
		"main [sample.cpp:242];test_calloc() [sample.cpp:82];calloc 4096\n"));
	assert_non_null(strstr(s, "_start;call_init [csu/libc-start.c:144];"
		"_GLOBAL__sub_I_leaked [sample.cpp:252];"
		"__static_initialization_and_destruction_0(int, int) [sample.cpp:225];"
		"TestGlobal::TestGlobal() [sample.cpp:212];malloc 768\n"));
	copy = strdup(s);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		sum += strtoll(strrchr(line, ' ') + 1, NULL, 10);
		lines++;
	}
	free(copy);
	assert_int_equal(lines, 5);
	assert_int_equal(sum, 8960);
	/* the same lines with blocks (calls) instead of bytes */
	reset_output(f);
	assert_int_equal(mt_export_collapsed(f->t, MT_EXPORT_CALLS, f->out), 0);
	assert_non_null(strstr(output(f), ";test_calloc() [sample.cpp:82];calloc 2\n"));
}

static void test_json(void **state)
{
	struct fixture *f = *state;
	const char *s;

	build(f, 0, 0);
	assert_int_equal(mt_export_json(f->t, MT_EXPORT_BYTES, f->out), 0);
	s = output(f);
	assert_starts(s, "{\n  \"version\": 0,\n  \"costs\": [{\"description\": \"Memory\", \"unit\": \"bytes\"}],");
	/* functions numbered in walk order: calloc, test_calloc, main:242, ... */
	assert_non_null(strstr(s, "{\"callchain\": [0, 1, 2, 3, 4, 5], \"cost\": [4096]}"));
	assert_non_null(strstr(s, "{\"name\": \"calloc\"},"));
	assert_non_null(strstr(s, "{\"name\": \"test_calloc() [sample.cpp:82]\", \"module\": \"/tmp/sample\"}"));
	/* _start is one function, reached by all five stacks */
	assert_non_null(strstr(s, "{\"name\": \"_start\", \"module\": \"/tmp/sample\"}"));
	assert_null(strstr(strstr(s, "{\"name\": \"_start\"") + 1, "{\"name\": \"_start\""));
}

static void test_massif(void **state)
{
	struct fixture *f = *state;
	struct mt_massif_snap sn[2] = { { 0, 0, NULL, 0 }, { 5400100, 8960, NULL, 1 } };
	const char *want =
	"desc: memtrail report --format massif\n"
	"cmd: ./sample a b\n"
	"time_unit: ms\n"
	"#-----------\nsnapshot=0\n#-----------\n"
	"time=0\nmem_heap_B=0\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=empty\n"
	"#-----------\nsnapshot=1\n#-----------\n"
	"time=5.4001\nmem_heap_B=8960\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=peak\n"
	"n5: 8960 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n"
	" n1: 4096 0x1082: test_calloc() (sample.cpp:82)\n"
	"  n1: 4096 0x1242: main (sample.cpp:242)\n"
	"   n1: 4096 0x58: __libc_start_call_main (sysdeps/nptl/libc_start_call_main.h:58)\n"
	"    n1: 4096 0x128: call_init (csu/libc-start.c:128)\n"
	"     n0: 4096 0x1000: _start\n"
	" n1: 2048 0x1106: test_realloc() (sample.cpp:106)\n"
	"  n1: 2048 0x1243: main (sample.cpp:243)\n"
	"   n1: 2048 0x58: __libc_start_call_main (sysdeps/nptl/libc_start_call_main.h:58)\n"
	"    n1: 2048 0x128: call_init (csu/libc-start.c:128)\n"
	"     n0: 2048 0x1000: _start\n"
	" n1: 1024 0x1057: test_malloc() (sample.cpp:57)\n"
	"  n1: 1024 0x1241: main (sample.cpp:241)\n"
	"   n1: 1024 0x58: __libc_start_call_main (sysdeps/nptl/libc_start_call_main.h:58)\n"
	"    n1: 1024 0x128: call_init (csu/libc-start.c:128)\n"
	"     n0: 1024 0x1000: _start\n"
	" n1: 1024 0x1103: test_realloc() (sample.cpp:103)\n"
	"  n1: 1024 0x1243: main (sample.cpp:243)\n"
	"   n1: 1024 0x58: __libc_start_call_main (sysdeps/nptl/libc_start_call_main.h:58)\n"
	"    n1: 1024 0x128: call_init (csu/libc-start.c:128)\n"
	"     n0: 1024 0x1000: _start\n"
	" n0: 768 in 1 place, below massif's threshold (10.00%)\n";

	build(f, 0, 1);
	sn[1].tree = f->t;
	assert_int_equal(mt_export_massif("./sample a b", sn, 2, 10.0, f->out), 0);
	assert_string_equal(output(f), want);
}

/* The frame element of the SVG s whose title starts with label, or fails. */
static const char *svg_frame(const char *s, const char *label)
{
	char key[256];
	const char *t;

	snprintf(key, sizeof(key), "<title>%s (", label);
	t = strstr(s, key);
	assert_non_null(t);
	while (t > s && strncmp(t, "<g class=\"f\"", 13))
		t--;
	return t;
}

#define assert_frame_has(s, label, attrs) \
	assert_non_null(strstr(svg_frame(s, label), attrs))

static void test_svg(void **state)
{
	struct fixture *f = *state;
	struct mt_svg_opts o = { "memtrail: a <test> & more", MT_EXPORT_BYTES, 0, 0 };
	const char *s;

	build(f, 1, 0);
	assert_int_equal(mt_export_svg(f->t, &o, f->out), 0);
	s = output(f);
	assert_starts(s, "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg ");
	assert_non_null(strstr(s, ">memtrail: a &lt;test&gt; &amp; more</text>"));
	/* 8,960 B over 1,180 px; frames in preorder, the largest child first */
	assert_frame_has(s, "all", "id=\"f0\" data-d=\"0\" data-x=\"0\" data-w=\"8960\"");
	assert_frame_has(s, "all", "<rect x=\"10.00\" y=\"150\" width=\"1180.00\"");
	/* call_init :128 holds 4,096 + 1,024 + 1,024 + 2,048 = 8,192 B: 1,078.86 px */
	assert_frame_has(s, "call_init [csu/libc-start.c:128]",
			 "data-d=\"2\" data-x=\"0\" data-w=\"8192\" data-v=\"8192\"");
	assert_frame_has(s, "call_init [csu/libc-start.c:128]", "width=\"1078.86\"");
	/* call_init :144, 768 B from x = 8,192 B: 10 + 1,078.86 px, 101.14 px wide */
	assert_frame_has(s, "call_init [csu/libc-start.c:144]",
			 "data-x=\"8192\" data-w=\"768\"");
	assert_frame_has(s, "call_init [csu/libc-start.c:144]",
			 "<rect x=\"1088.86\" y=\"118\" width=\"101.14\"");
	/* 7 rows of 16 px from y = 54: the root (0), _start (1) ... the entry
	 * point (6); a flame graph: the root at the bottom, the deepest on top */
	assert_frame_has(s, "calloc", "data-d=\"6\" data-x=\"0\" data-w=\"4096\"");
	assert_frame_has(s, "calloc", "y=\"54\"");
	assert_frame_has(s, "calloc", "(4,096 B, 45.71%)");
	/* self-contained: the script inline, nothing fetched */
	assert_non_null(strstr(s, "<script type=\"text/ecmascript\"><![CDATA["));
	assert_null(strstr(s, "href"));
	assert_null(strstr(s, "src="));

	/* icicle: the root on top */
	reset_output(f);
	o.icicle = 1;
	assert_int_equal(mt_export_svg(f->t, &o, f->out), 0);
	assert_frame_has(output(f), "all", "y=\"54\"");
	assert_frame_has(output(f), "calloc", "y=\"150\"");

	/* a title longer than the 120 characters of the width: its first 118
	 * ("memtrail: " and 108 'é', two bytes each), "..", then the whole in
	 * a tooltip */
	{
		char title[512], head[512], want[1200];
		size_t n = (size_t)snprintf(title, sizeof(title), "memtrail: ");

		for (int i = 0; i < 150; i++)
			n += (size_t)snprintf(title + n, sizeof(title) - n, "\xc3\xa9");
		memcpy(head, title, 10 + 2 * 108);
		head[10 + 2 * 108] = 0;
		snprintf(want, sizeof(want), ">%s..<title>%s</title></text>", head, title);
		reset_output(f);
		o.title = title;
		assert_int_equal(mt_export_svg(f->t, &o, f->out), 0);
		assert_non_null(strstr(output(f), want));
		/* 120 characters are not cut */
		title[10 + 2 * 110] = 0;
		snprintf(want, sizeof(want), ">%s</text>", title);
		reset_output(f);
		assert_int_equal(mt_export_svg(f->t, &o, f->out), 0);
		assert_non_null(strstr(output(f), want));
	}
}

static void test_svg_diff(void **state)
{
	struct fixture *f = *state;
	struct mt_svg_opts o = { NULL, MT_EXPORT_BYTES, 1, 0 };
	const struct mt_cost grew = { 4096, 2, 2 }, shrank = { -1024, -1, -1 },
		same = { 1024, 1, 1 };
	struct mt_profile *d = mt_profile_new();
	const char *s;

	assert_non_null(d);
	assert_int_equal(mt_profile_add(d, 0, &grew), 0);
	assert_int_equal(mt_profile_add(d, 1, &shrank), 0);
	assert_int_equal(mt_profile_add(d, 2, &same), 0);
	mt_profile_free(f->p);
	f->p = d;
	build(f, 1, 0);
	assert_int_equal(mt_export_svg(f->t, &o, f->out), 0);
	s = output(f);
	/* net +4,096 B; wide as what changed beneath: 4,096 + 1,024 + 1,024 */
	assert_frame_has(s, "all", "data-w=\"6144\" data-v=\"4096\"");
	assert_frame_has(s, "main [sample.cpp:242]", "data-w=\"4096\" data-v=\"4096\"");
	assert_frame_has(s, "main [sample.cpp:242]", "fill=\"rgb(240,60,60)\"");
	assert_frame_has(s, "main [sample.cpp:241]", "data-w=\"1024\" data-v=\"-1024\"");
	assert_frame_has(s, "main [sample.cpp:241]", "fill=\"rgb(60,60,240)\"");
	assert_frame_has(s, "main [sample.cpp:241]", "(-1,024 B, -16.67%)");
	/* growth and shrinkage side by side under their common caller */
	assert_frame_has(s, "__libc_start_call_main [sysdeps/nptl/libc_start_call_main.h:58]",
			 "data-w=\"6144\" data-v=\"4096\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_text_readme, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_threshold_top, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_signed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_averages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collapsed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_massif, setup, teardown),
		cmocka_unit_test_setup_teardown(test_svg, setup, teardown),
		cmocka_unit_test_setup_teardown(test_svg_diff, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
