/*
 * export.c - call trees as text, collapsed stacks, gprof2dot JSON,
 * massif.out and SVG flame graphs (see export.h). Formatting only: which
 * tree and which point belong to lib/report.c.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "export.h"
#include "fmt.h"
#include "summary.h"
#include "symbols.h"
#include "tree.h"

/* A growable line prefix ("  | |   "). */
struct prefix {
	char *s;
	size_t len, cap;
};

static int prefix_push(struct prefix *p, const char *two)
{
	if (p->len + 3 > p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 128;
		char *s = realloc(p->s, cap);

		if (!s)
			return MT_E_NOMEM;
		p->s = s;
		p->cap = cap;
	}
	memcpy(p->s + p->len, two, 2);
	p->len += 2;
	p->s[p->len] = 0;
	return 0;
}

/* ---- text ---------------------------------------------------------------- */

struct text {
	const struct mt_text_opts *o;
	FILE *out;
	struct prefix pre;
	double total;             /* the scale of percentages */
};

static int64_t key_of(const struct text *x, const struct mt_tree_node *n)
{
	const struct mt_cost *c = mt_tree_node_cost(n);

	return x->o->by_blocks ? c->blocks : c->bytes;
}

static int significant(const struct text *x, int64_t key)
{
	double k = key < 0 ? -(double)key : (double)key;

	return x->total <= 0 || k * 100.0 >= x->o->threshold_pct * x->total;
}

static void print_figures(const struct text *x, int64_t key, int64_t bytes, int64_t blocks)
{
	char b1[32], b2[32], b3[32];
	double pct = x->total > 0 ? 100.0 * (double)key / x->total : 0.0;
	int sign = x->o->signed_figures;

	fprintf(x->out, sign ? "%+.2f%% (%sB, %sx" : "%.2f%% (%sB, %sx", pct,
		mt_fmt_signed(b1, sizeof(b1), bytes, sign),
		mt_fmt_signed(b2, sizeof(b2), blocks, sign));
	if (x->o->averages && blocks > 0 && bytes >= 0)
		fprintf(x->out, ", avg %sB",
			mt_fmt_count(b3, sizeof(b3), (uint64_t)((bytes + blocks / 2) / blocks)));
	fputc(')', x->out);
}

/* Writes a threshold like 1 -> "1", 0.5 -> "0.5", 2.25 -> "2.25". */
static void print_threshold(FILE *out, double t)
{
	char buf[32];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "%.2f", t);

	while (n > 1 && buf[n - 1] == '0')
		buf[--n] = 0;
	if (n > 1 && buf[n - 1] == '.')
		buf[--n] = 0;
	fputs(buf, out);
}

/* Prints n's children; returns the number of lines written (or < 0). */
static long print_kids(struct text *x, const struct mt_tree_node *n, int top_level)
{
	size_t nk = mt_tree_node_nchildren(n), nshown = 0, nfold = 0, line = 0;
	int64_t fold_bytes = 0, fold_blocks = 0, fold_key = 0;
	size_t plen = x->pre.len;
	long lines = 0;
	char *shown;

	if (!nk)
		return 0;
	shown = calloc(nk, 1);
	if (!shown)
		return MT_E_NOMEM;
	for (size_t i = 0; i < nk; i++) {
		const struct mt_tree_node *k = mt_tree_node_child(n, i);

		if (top_level && x->o->top) {
			/* --top N: the N largest entries, nothing folded */
			if (nshown < x->o->top) {
				shown[i] = 1;
				nshown++;
			}
		} else if (significant(x, key_of(x, k))) {
			shown[i] = 1;
			nshown++;
		} else {
			nfold++;
			fold_key += key_of(x, k);
			fold_bytes += mt_tree_node_cost(k)->bytes;
			fold_blocks += mt_tree_node_cost(k)->blocks;
		}
	}
	for (size_t i = 0; i < nk; i++) {
		const struct mt_tree_node *k = mt_tree_node_child(n, i);
		int last;
		long sub;

		if (!shown[i])
			continue;
		last = ++line == nshown + (nfold > 0);
		fprintf(x->out, "%s-> ", x->pre.s);
		print_figures(x, key_of(x, k), mt_tree_node_cost(k)->bytes,
			      mt_tree_node_cost(k)->blocks);
		fprintf(x->out, ": %s\n", mt_tree_node_label(k));
		lines++;
		if (prefix_push(&x->pre, last ? "  " : "| ") < 0) {
			free(shown);
			return MT_E_NOMEM;
		}
		sub = print_kids(x, k, 0);
		if (sub < 0) {
			free(shown);
			return sub;
		}
		if (!last && sub > 0) {
			fprintf(x->out, "%s\n", x->pre.s);
			lines++;
		}
		lines += sub;
		x->pre.len = plen;
		x->pre.s[plen] = 0;
	}
	if (nfold) {
		fprintf(x->out, "%s-> ", x->pre.s);
		print_figures(x, fold_key, fold_bytes, fold_blocks);
		fprintf(x->out, " in %zu place%s, all below the ", nfold, nfold == 1 ? "" : "s");
		print_threshold(x->out, x->o->threshold_pct);
		fputs("% threshold\n", x->out);
		lines++;
	}
	free(shown);
	return lines;
}

int mt_export_text(const struct mt_tree *t, const struct mt_text_opts *o, FILE *out)
{
	struct text x = { o, out, { NULL, 0, 0 }, 0 };
	const struct mt_tree_node *root = mt_tree_root(t);
	struct mt_cost gross = mt_tree_gross(t);
	long rc;

	if (o->signed_figures)
		x.total = (double)(o->by_blocks ? gross.blocks : gross.bytes);
	else
		x.total = (double)key_of(&x, root);
	if (prefix_push(&x.pre, "  ") < 0)
		return MT_E_NOMEM;
	rc = print_kids(&x, root, 1);
	free(x.pre.s);
	if (rc < 0)
		return (int)rc;
	return ferror(out) ? MT_E_IO : 0;
}

/* ---- collapsed ----------------------------------------------------------- */

static void put_sanitized(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' || *s == '\n' ? '_' : *s, out);
}

/* The figure an export writes of node n. */
static int64_t figure(const struct mt_tree_node *n, enum mt_export_figure fig)
{
	const struct mt_cost *c = mt_tree_node_cost(n);

	return fig == MT_EXPORT_CALLS ? c->blocks : c->bytes;
}

/* n's figure minus its children's: what n costs by itself. */
static int64_t own_figure(const struct mt_tree_node *n, enum mt_export_figure fig)
{
	size_t nk = mt_tree_node_nchildren(n);
	int64_t own = figure(n, fig);

	for (size_t i = 0; i < nk; i++)
		own -= figure(mt_tree_node_child(n, i), fig);
	return own;
}

static void collapsed_node(const struct mt_tree_node *n, const struct mt_tree_node **path,
			   unsigned depth, enum mt_export_figure fig, FILE *out)
{
	size_t nk = mt_tree_node_nchildren(n);
	int64_t own = own_figure(n, fig);

	path[depth] = n;
	if (own && depth > 0) {
		for (unsigned d = 1; d <= depth; d++) {
			if (d > 1)
				fputc(';', out);
			put_sanitized(out, mt_tree_node_label(path[d]));
		}
		fprintf(out, " %" PRId64 "\n", own);
	}
	for (size_t i = 0; i < nk; i++)
		collapsed_node(mt_tree_node_child(n, i), path, depth + 1, fig, out);
}

/* The depth of the deepest node below n. */
static unsigned max_depth(const struct mt_tree_node *n)
{
	unsigned d = mt_tree_node_depth(n), m = d;
	size_t nk = mt_tree_node_nchildren(n);

	for (size_t i = 0; i < nk; i++) {
		unsigned k = max_depth(mt_tree_node_child(n, i));

		if (k > m)
			m = k;
	}
	return m;
}

int mt_export_collapsed(const struct mt_tree *inverted, enum mt_export_figure fig, FILE *out)
{
	const struct mt_tree_node *root = mt_tree_root(inverted);
	const struct mt_tree_node **path = calloc(max_depth(root) + 1, sizeof(*path));

	if (!path)
		return MT_E_NOMEM;
	collapsed_node(root, path, 0, fig, out);
	free(path);
	return ferror(out) ? MT_E_IO : 0;
}

/* ---- gprof2dot JSON ------------------------------------------------------ */

/* Labels are interned per tree: one function per distinct label pointer. */
struct fnmap {
	const char **keys;
	size_t *idx;
	size_t cap, n;
	const struct mt_tree_node **first;  /* the first node with each function */
};

static uint64_t ptr_hash(const void *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 29);
}

static int fnmap_put(struct fnmap *m, const struct mt_tree_node *n, size_t *out)
{
	const char *key = mt_tree_node_label(n);
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		struct fnmap nm = { NULL, NULL, m->cap ? 2 * m->cap : 256, 0, m->first };

		nm.keys = calloc(nm.cap, sizeof(*nm.keys));
		nm.idx = calloc(nm.cap, sizeof(*nm.idx));
		if (!nm.keys || !nm.idx) {
			free(nm.keys);
			free(nm.idx);
			return MT_E_NOMEM;
		}
		for (i = 0; i < m->cap; i++) {
			size_t j;

			if (!m->keys[i])
				continue;
			for (j = ptr_hash(m->keys[i]) & (nm.cap - 1); nm.keys[j]; j = (j + 1) & (nm.cap - 1))
				;
			nm.keys[j] = m->keys[i];
			nm.idx[j] = m->idx[i];
		}
		/* m keeps its old tables (freed by its owner) if this fails */
		nm.first = realloc(m->first, nm.cap * sizeof(*nm.first));
		if (!nm.first) {
			free(nm.keys);
			free(nm.idx);
			return MT_E_NOMEM;
		}
		nm.n = m->n;
		free(m->keys);
		free(m->idx);
		*m = nm;
	}
	for (i = ptr_hash(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			*out = m->idx[i];
			return 0;
		}
	}
	m->keys[i] = key;
	m->idx[i] = m->n;
	m->first[m->n] = n;
	*out = m->n++;
	return 0;
}

struct json {
	FILE *out;
	enum mt_export_figure fig;
	struct fnmap fns;
	size_t *chain;            /* function indices from the root's child down */
	int nevents;
};

static int json_events(struct json *j, const struct mt_tree_node *n, unsigned depth)
{
	size_t nk = mt_tree_node_nchildren(n);
	int64_t own = own_figure(n, j->fig);
	int rc;

	if (depth > 0) {
		rc = fnmap_put(&j->fns, n, &j->chain[depth - 1]);
		if (rc < 0)
			return rc;
	}
	if (own && depth > 0) {
		fprintf(j->out, "%s\n    {\"callchain\": [", j->nevents++ ? "," : "");
		for (unsigned d = 0; d < depth; d++)
			fprintf(j->out, "%s%zu", d ? ", " : "", j->chain[d]);
		fprintf(j->out, "], \"cost\": [%" PRId64 "]}", own);
	}
	for (size_t i = 0; i < nk; i++) {
		rc = json_events(j, mt_tree_node_child(n, i), depth + 1);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int mt_export_json(const struct mt_tree *callee, enum mt_export_figure fig, FILE *out)
{
	struct json j;
	const struct mt_tree_node *root = mt_tree_root(callee);
	int rc;

	memset(&j, 0, sizeof(j));
	j.out = out;
	j.fig = fig;
	j.chain = calloc(max_depth(root) + 1, sizeof(*j.chain));
	if (!j.chain)
		return MT_E_NOMEM;
	fprintf(out, "{\n  \"version\": 0,\n"
		"  \"costs\": [{\"description\": \"%s\", \"unit\": \"%s\"}],\n"
		"  \"events\": [",
		fig == MT_EXPORT_CALLS ? "Allocation calls" : "Memory",
		fig == MT_EXPORT_CALLS ? "calls" : "bytes");
	rc = json_events(&j, root, 0);
	if (rc == 0) {
		fputs("\n  ],\n  \"functions\": [", out);
		for (size_t i = 0; i < j.fns.n; i++) {
			const struct mt_frame *f = mt_tree_node_frame(j.fns.first[i]);

			fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
			mt_json_string(out, mt_tree_node_label(j.fns.first[i]));
			if (f && f->module) {
				fputs(", \"module\": ", out);
				mt_json_string(out, f->module);
			}
			fputc('}', out);
		}
		fputs("\n  ]\n}\n", out);
	}
	free(j.chain);
	free(j.fns.keys);
	free(j.fns.idx);
	free(j.fns.first);
	if (rc < 0)
		return rc;
	return ferror(out) ? MT_E_IO : 0;
}

/* ---- massif -------------------------------------------------------------- */

static void massif_label(FILE *out, const struct mt_tree_node *n)
{
	const struct mt_frame *f = mt_tree_node_frame(n);

	if (!f) {
		fprintf(out, "0x0: %s", mt_tree_node_label(n));
		return;
	}
	fprintf(out, "0x%" PRIX64 ": ", f->offset);
	if (f->function && f->file && f->line)
		fprintf(out, "%s (%s:%u)", f->function, f->file, f->line);
	else
		fputs(mt_tree_node_label(n), out);
}

static void massif_node(const struct mt_tree_node *n, unsigned depth, double thr,
			double total, FILE *out)
{
	size_t nk = mt_tree_node_nchildren(n), nsig = 0, nfold = 0;
	int64_t fold = 0;

	for (size_t i = 0; i < nk; i++) {
		double b = (double)mt_tree_node_cost(mt_tree_node_child(n, i))->bytes;

		if (total <= 0 || b * 100.0 >= thr * total)
			nsig++;
		else {
			nfold++;
			fold += mt_tree_node_cost(mt_tree_node_child(n, i))->bytes;
		}
	}
	fprintf(out, "%*sn%zu: %" PRId64 " ", (int)depth, "", nsig + (nfold > 0),
		mt_tree_node_cost(n)->bytes);
	if (depth == 0)
		fputs("(heap allocation functions) malloc/new/new[], --alloc-fns, etc.", out);
	else
		massif_label(out, n);
	fputc('\n', out);
	for (size_t i = 0; i < nk; i++) {
		const struct mt_tree_node *k = mt_tree_node_child(n, i);
		double b = (double)mt_tree_node_cost(k)->bytes;

		if (total <= 0 || b * 100.0 >= thr * total)
			massif_node(k, depth + 1, thr, total, out);
	}
	if (nfold)
		fprintf(out, "%*sn0: %" PRId64 " in %zu place%s, %sbelow massif's threshold (%.2f%%)\n",
			(int)depth + 1, "", fold, nfold, nfold == 1 ? "" : "s",
			nfold == 1 ? "" : "all ", thr);
}

void mt_export_massif_header(const char *cmd, FILE *out)
{
	fputs("desc: memtrail report --format massif\ncmd: ", out);
	for (const char *c = cmd ? cmd : ""; *c; c++)
		fputc(*c == '\n' ? ' ' : *c, out);
	fputs("\ntime_unit: ms\n", out);
}

void mt_export_massif_snap(size_t i, const struct mt_massif_snap *s, double threshold_pct,
			   FILE *out)
{
	fprintf(out, "#-----------\nsnapshot=%zu\n#-----------\n", i);
	/* ms with up to 6 decimals: short runs keep their shape */
	fprintf(out, "time=%" PRIu64, s->time_ns / 1000000);
	if (s->time_ns % 1000000) {
		char frac[8];
		int k = snprintf(frac, sizeof(frac), "%06u", (unsigned)(s->time_ns % 1000000));

		while (k > 0 && frac[k - 1] == '0')
			frac[--k] = 0;
		fprintf(out, ".%s", frac);
	}
	fprintf(out, "\nmem_heap_B=%" PRIu64 "\n"
		"mem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=%s\n",
		s->heap_bytes,
		s->peak ? "peak" : s->tree ? "detailed" : "empty");
	if (s->tree)
		massif_node(mt_tree_root(s->tree), 0, threshold_pct,
			    (double)s->heap_bytes, out);
}

int mt_export_massif(const char *cmd, const struct mt_massif_snap *snaps, size_t n,
		     double threshold_pct, FILE *out)
{
	mt_export_massif_header(cmd, out);
	for (size_t i = 0; i < n; i++)
		mt_export_massif_snap(i, &snaps[i], threshold_pct, out);
	return ferror(out) ? MT_E_IO : 0;
}

/* ---- SVG flame graph ----------------------------------------------------- */

#define SVG_WIDTH    1200   /* px: the frames' full width plus two margins */
#define SVG_PAD      10     /* px left and right of the frames */
#define SVG_TOP      54     /* px above the frames: title, buttons */
#define SVG_BOTTOM   28     /* px below them: the details line */
#define SVG_ROW      16     /* px per level */
#define SVG_TITLE_CH 120    /* characters of the title that fit in the frames'
			       width (16 px monospace: 9.6 px a character) */

/* One frame: its node, where it sits (figure units) and its parent. */
struct svg_frame {
	const struct mt_tree_node *n;
	int64_t x, w;
	size_t parent;         /* index; the root's is itself */
	unsigned depth;
};

struct svg {
	struct svg_frame *f;
	size_t n, cap;
	enum mt_export_figure fig;
};

static int64_t svg_value(const struct svg *g, const struct mt_tree_node *n)
{
	const struct mt_cost *c = mt_tree_node_cost(n);

	return g->fig == MT_EXPORT_CALLS ? c->blocks : c->bytes;
}

/*
 * Appends n and its subtree in preorder; returns n's width: the larger of
 * its |figure| and its children's widths (they differ only in a diff, where
 * growth and shrinkage below a node cancel out in its net figure).
 */
static int64_t svg_collect(struct svg *g, const struct mt_tree_node *n, size_t parent,
			   unsigned depth, int *rc)
{
	size_t me = g->n, nk = mt_tree_node_nchildren(n);
	int64_t v = svg_value(g, n), kids = 0;

	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 256;
		struct svg_frame *f = realloc(g->f, cap * sizeof(*f));

		if (!f) {
			*rc = MT_E_NOMEM;
			return 0;
		}
		g->f = f;
		g->cap = cap;
	}
	g->f[me].n = n;
	g->f[me].parent = parent == SIZE_MAX ? me : parent;
	g->f[me].depth = depth;
	g->n++;
	for (size_t i = 0; i < nk && *rc == 0; i++)
		kids += svg_collect(g, mt_tree_node_child(n, i), me, depth + 1, rc);
	if (v < 0)
		v = -v;
	g->f[me].w = kids > v ? kids : v;
	return g->f[me].w;
}

/*
 * Writes the first size bytes of s (up to its end) as XML character data;
 * bytes that are not UTF-8 become '?'.
 */
static void svg_textn(FILE *out, const char *s, size_t size)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t left = size; left && *p; left = size - (size_t)((const char *)p - s)) {
		unsigned len = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3 :
			(*p & 0xF8) == 0xF0 ? 4 : 0;
		unsigned i;

		for (i = 1; i < len && i < left && (p[i] & 0xC0) == 0x80; i++)
			;
		if (!len || i < len || (len == 1 && *p < 0x20)) {
			fputc('?', out);
			p++;
			continue;
		}
		switch (*p) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fwrite(p, 1, len, out);
		}
		p += len;
	}
}

static void svg_text(FILE *out, const char *s)
{
	svg_textn(out, s, SIZE_MAX);
}

/* A frame's colour: by figure in a diff, else a warm shade from its label. */
static void svg_colour(char *buf, size_t size, const struct svg *g, int diff, size_t i)
{
	const char *label = mt_tree_node_label(g->f[i].n);
	int64_t v = svg_value(g, g->f[i].n);
	uint32_t h = 2166136261u;

	if (diff) {
		/* the deeper the colour, the larger the net change of the frame's width */
		double r = g->f[i].w ? (double)(v < 0 ? -v : v) / (double)g->f[i].w : 0.0;
		int k = (int)(200 - 140 * r);

		if (v > 0)
			snprintf(buf, size, "rgb(240,%d,%d)", k, k);
		else if (v < 0)
			snprintf(buf, size, "rgb(%d,%d,240)", k, k);
		else
			snprintf(buf, size, "rgb(210,210,210)");
		return;
	}
	for (const char *c = label; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	snprintf(buf, size, "rgb(%u,%u,%u)", 205 + h % 50, 70 + (h >> 8) % 140, (h >> 16) % 55);
}

/* The script: no external file, no network; reads #s=RE&z=N from the URL. */
static const char svg_script[] =
"var root=document.documentElement,W=+root.getAttribute('width'),PAD=10,FW=W-2*PAD,CW=7;\n"
"var frames=[].slice.call(document.querySelectorAll('g.f'));\n"
"var det=document.getElementById('details'),mat=document.getElementById('matched');\n"
"var all=frames[0],total=+all.getAttribute('data-w')||1,zoomed=null,re=null;\n"
"function num(g,a){return +g.getAttribute(a);}\n"
"frames.forEach(function(g){var t=g.querySelector('text');g.lbl=t.textContent;\n"
"  g.fill=g.querySelector('rect').getAttribute('fill');\n"
"  g.onclick=function(){zoom(g);};\n"
"  g.onmouseover=function(){det.textContent=g.querySelector('title').textContent;};\n"
"  g.onmouseout=function(){det.textContent=' ';};});\n"
"function fit(g){var w=+g.querySelector('rect').getAttribute('width'),n=Math.floor((w-6)/CW),\n"
"  t=g.querySelector('text');t.textContent=n<3?'':g.lbl.length<=n?g.lbl:g.lbl.slice(0,n-2)+'..';}\n"
"function place(g,x,w){var r=g.querySelector('rect');r.setAttribute('x',x.toFixed(2));\n"
"  r.setAttribute('width',w.toFixed(2));g.querySelector('text').setAttribute('x',(x+3).toFixed(2));\n"
"  g.style.display='';fit(g);}\n"
"function zoom(z){var x0=num(z,'data-x'),w0=num(z,'data-w'),d0=num(z,'data-d');\n"
"  if(z===all||w0<=0){unzoom();return;}\n"
"  zoomed=z;root.setAttribute('data-zoom',z.id);\n"
"  frames.forEach(function(g){var x=num(g,'data-x'),w=num(g,'data-w'),d=num(g,'data-d');\n"
"    if(d<d0&&x<=x0&&x+w>=x0+w0){place(g,PAD,FW);g.setAttribute('opacity','0.6');}\n"
"    else if(d>=d0&&x>=x0&&x+w<=x0+w0&&w>0){place(g,PAD+(x-x0)/w0*FW,w/w0*FW);g.removeAttribute('opacity');}\n"
"    else g.style.display='none';});}\n"
"function unzoom(){zoomed=null;root.removeAttribute('data-zoom');\n"
"  frames.forEach(function(g){g.removeAttribute('opacity');\n"
"    place(g,PAD+num(g,'data-x')/total*FW,num(g,'data-w')/total*FW);});}\n"
"function search(s){var hits=[],sum=0,end=-1;re=null;\n"
"  if(s){try{re=new RegExp(s);}catch(e){re=null;}}\n"
"  frames.forEach(function(g){var r=g.querySelector('rect'),m=re&&g!==all&&re.test(g.lbl);\n"
"    r.setAttribute('fill',m?'rgb(230,0,230)':g.fill);\n"
"    if(m){g.setAttribute('data-match','1');hits.push(g);}else g.removeAttribute('data-match');});\n"
"  /* nested matches count once: merge the matched spans */\n"
"  hits.sort(function(a,b){return num(a,'data-x')-num(b,'data-x');});\n"
"  hits.forEach(function(g){var x=num(g,'data-x'),e=x+num(g,'data-w');\n"
"    if(x>=end){sum+=e-x;end=e;}else if(e>end){sum+=e-end;end=e;}});\n"
"  if(re){root.setAttribute('data-matched',String(sum));\n"
"    mat.textContent='Matched: '+(total>0?(100*sum/total).toFixed(2):'0.00')+'%';}\n"
"  else{root.removeAttribute('data-matched');mat.textContent=' ';}}\n"
"function ask(){var s=prompt('Search (regular expression)',re?re.source:'');\n"
"  if(s!==null)search(s);}\n"
"document.getElementById('search').onclick=ask;\n"
"document.getElementById('reset').onclick=function(){unzoom();search('');};\n"
"document.addEventListener('keydown',function(e){\n"
"  if(e.key==='/'||(e.ctrlKey&&e.key==='f')){e.preventDefault();ask();}\n"
"  else if(e.key==='Escape'){unzoom();search('');}});\n"
"frames.forEach(fit);\n"
"(function(){var h=location.hash.replace(/^#/,'').split('&');\n"
"  h.forEach(function(kv){var i=kv.indexOf('='),k=kv.slice(0,i),v=decodeURIComponent(kv.slice(i+1));\n"
"    if(k==='s')search(v);\n"
"    else if(k==='z'){var g=document.getElementById('f'+v);if(g)zoom(g);}});})();\n";

/*
 * The title as the text of its element: a long one (a command line) cut to
 * what fits the width, "..", and the whole of it as a tooltip after the
 * text, so that it is neither drawn past both edges nor lost.
 */
static void svg_title(FILE *out, const char *title)
{
	size_t n = 0, cut = 0;

	for (const unsigned char *p = (const unsigned char *)title; *p; p++)
		if ((*p & 0xC0) != 0x80 && ++n == SVG_TITLE_CH - 1)
			cut = (size_t)((const char *)p - title);
	if (n <= SVG_TITLE_CH) {
		svg_text(out, title);
		return;
	}
	svg_textn(out, title, cut);
	fputs("..<title>", out);
	svg_text(out, title);
	fputs("</title>", out);
}

static void svg_header(const struct mt_svg_opts *o, unsigned rows, FILE *out)
{
	unsigned h = SVG_TOP + rows * SVG_ROW + SVG_BOTTOM;

	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text{font-family:monospace;font-size:12px;fill:#000}"
		"g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:0.5}"
		"#search,#reset{cursor:pointer}</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"20\" text-anchor=\"middle\" "
		"style=\"font-size:16px\">",
		SVG_WIDTH, h, SVG_WIDTH, h, SVG_WIDTH / 2);
	svg_title(out, o->title ? o->title : "");
	fprintf(out, "</text>\n"
		"<text id=\"reset\" x=\"%d\" y=\"42\">Reset zoom</text>\n"
		"<text id=\"search\" x=\"%d\" y=\"42\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		SVG_PAD, SVG_WIDTH - SVG_PAD, SVG_WIDTH - SVG_PAD, h - 10, SVG_PAD, h - 10);
}

int mt_export_svg(const struct mt_tree *t, const struct mt_svg_opts *o, FILE *out)
{
	struct svg g = { NULL, 0, 0, o->fig };
	const double fw = SVG_WIDTH - 2 * SVG_PAD;
	int64_t *next = NULL;      /* per frame: where its next child starts */
	unsigned char *shown = NULL;
	unsigned rows = 1;
	double total;
	int rc = 0;

	svg_collect(&g, mt_tree_root(t), SIZE_MAX, 0, &rc);
	if (rc < 0)
		goto out;
	next = calloc(g.n, sizeof(*next));
	shown = calloc(g.n, 1);
	if (!next || !shown) {
		rc = MT_E_NOMEM;
		goto out;
	}
	total = (double)g.f[0].w;
	/* preorder: a parent is placed before its children */
	for (size_t i = 0; i < g.n; i++) {
		size_t p = g.f[i].parent;

		g.f[i].x = i ? next[p] : 0;
		next[p] = i ? next[p] + g.f[i].w : 0;
		next[i] = g.f[i].x;
		/* nothing, or a tenth of a pixel at most, and the children, which
		 * are narrower */
		shown[i] = !i || (shown[p] && g.f[i].w > 0 && (double)g.f[i].w * fw * 10.0 >= total);
		if (shown[i] && g.f[i].depth + 1 > rows)
			rows = g.f[i].depth + 1;
	}
	svg_header(o, rows, out);
	fputs("<g id=\"frames\">\n", out);
	for (size_t i = 0; i < g.n; i++) {
		const struct svg_frame *f = &g.f[i];
		const char *label = i ? mt_tree_node_label(f->n) : "all";
		unsigned level = o->icicle ? f->depth : rows - 1 - f->depth;
		double x = SVG_PAD + (total > 0 ? (double)f->x / total * fw : 0.0);
		double w = total > 0 ? (double)f->w / total * fw : (i ? 0.0 : fw);
		int64_t v = svg_value(&g, f->n);
		char colour[32], num[32];

		if (!shown[i])
			continue;
		svg_colour(colour, sizeof(colour), &g, o->diff, i);
		fprintf(out, "<g class=\"f\" id=\"f%zu\" data-d=\"%u\" data-x=\"%" PRId64
			"\" data-w=\"%" PRId64 "\" data-v=\"%" PRId64 "\"><title>",
			i, f->depth, f->x, f->w, v);
		svg_text(out, label);
		fprintf(out, " (%s%s, %.2f%%)</title>",
			mt_fmt_signed(num, sizeof(num), v, o->diff),
			o->fig == MT_EXPORT_CALLS ? " calls" : " B",
			total > 0 ? 100.0 * (double)v / total : 0.0);
		fprintf(out, "<rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
			"rx=\"2\"/><text x=\"%.2f\" y=\"%u\">", x, SVG_TOP + level * SVG_ROW, w,
			SVG_ROW - 1, colour, x + 3, SVG_TOP + level * SVG_ROW + 11);
		svg_text(out, label);
		fputs("</text></g>\n", out);
	}
	fprintf(out, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
		svg_script);
	rc = ferror(out) ? MT_E_IO : 0;
out:
	free(g.f);
	free(next);
	free(shown);
	return rc;
}

/* ---- a flat list of functions ---------------------------------------------- */

static int64_t cost_key(const struct mt_cost *c, enum mt_tree_key key)
{
	return key == MT_TREE_BY_BLOCKS ? c->blocks : key == MT_TREE_BY_ALLOCS ? c->allocs :
	       c->bytes;
}

static void fns_pct(char *buf, size_t size, int64_t v, int64_t whole, int plus)
{
	if (!whole)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, plus ? "%+.2f%%" : "%.2f%%", 100.0 * (double)v / (double)whole);
}

int mt_export_fns_text(struct mt_tree_fn *fns, size_t n, unsigned top, enum mt_tree_key key,
		       const struct mt_cost *whole, int signed_figures, FILE *out)
{
	size_t rows = top && top < n ? top : n;
	int64_t w = cost_key(whole, key);

	for (int by_total = 0; by_total < 2; by_total++) {
		mt_tree_fns_sort(fns, n, by_total, key);
		fprintf(out, "  by %s:\n", by_total ? "total" : "self");
		fprintf(out, "  %12s %8s %8s %8s  %12s %8s %8s %8s  %s\n", "self B", "%", "blocks",
			"calls", "total B", "%", "blocks", "calls", "function");
		for (size_t i = 0, shown = 0; i < n && shown < rows; i++) {
			const struct mt_cost *c[2] = { &fns[i].self, &fns[i].total };
			char b[2][32], p[2][16], k[2][32], a[2][32];

			/* a function with none of this cost is not on this list */
			if (!cost_key(c[by_total], key))
				continue;
			shown++;
			for (int j = 0; j < 2; j++) {
				mt_fmt_signed(b[j], sizeof(b[j]), c[j]->bytes, signed_figures);
				fns_pct(p[j], sizeof(p[j]), cost_key(c[j], key), w, signed_figures);
				mt_fmt_signed(k[j], sizeof(k[j]), c[j]->blocks, signed_figures);
				mt_fmt_signed(a[j], sizeof(a[j]), c[j]->allocs, 0);
			}
			fprintf(out, "  %12s %8s %8s %8s  %12s %8s %8s %8s  %s\n", b[0], p[0], k[0],
				a[0], b[1], p[1], k[1], a[1], fns[i].name);
		}
	}
	return ferror(out) ? MT_E_IO : 0;
}

static void json_cost(FILE *out, const char *name, const struct mt_cost *c)
{
	fprintf(out, "\"%s\": {\"bytes\": %" PRId64 ", \"blocks\": %" PRId64
		", \"calls\": %" PRId64 "}", name, c->bytes, c->blocks, c->allocs);
}

int mt_export_fns_json(struct mt_tree_fn *fns, size_t n, unsigned top, enum mt_tree_key key,
		       const struct mt_cost *total, FILE *out)
{
	size_t rows = top && top < n ? top : n;

	fprintf(out, "{\"top_sites\": {\"bytes\": %" PRId64 ", \"blocks\": %" PRId64
		", \"calls\": %" PRId64, total->bytes, total->blocks, total->allocs);
	for (int by_total = 0; by_total < 2; by_total++) {
		size_t shown = 0;

		mt_tree_fns_sort(fns, n, by_total, key);
		fprintf(out, ",\n  \"%s\": [", by_total ? "by_total" : "by_self");
		for (size_t i = 0; i < n && shown < rows; i++) {
			if (!cost_key(by_total ? &fns[i].total : &fns[i].self, key))
				continue;
			fputs(shown++ ? ",\n    {\"function\": " : "\n    {\"function\": ", out);
			mt_json_string(out, fns[i].name);
			fputs(", ", out);
			json_cost(out, "self", &fns[i].self);
			fputs(", ", out);
			json_cost(out, "total", &fns[i].total);
			fputc('}', out);
		}
		fputs(shown ? "\n  ]" : "]", out);
	}
	fputs("}}\n", out);
	return ferror(out) ? MT_E_IO : 0;
}
