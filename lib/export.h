/*
 * export.h - writes call trees (lib/tree.h) in the report's formats: the
 * original memtrail text layout, flamegraph.pl collapsed stacks, gprof2dot
 * JSON, massif.out and a self-contained interactive SVG flame graph. Pure formatting: no replay, no symbols, no choice of
 * which tree to write (lib/report.c decides).
 */
#ifndef MT_EXPORT_H
#define MT_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "tree.h"

struct mt_tree;

/* How mt_export_text prints a tree. */
struct mt_text_opts {
	double threshold_pct;   /* siblings below this share of the total fold into one line */
	unsigned top;           /* top-level entries printed (the largest, whatever
				   the threshold; the others are left out); 0 = all */
	int signed_figures;     /* a diff: "+1,200B", "-3x", "+12.50%"; percentages of
				   the gross change (mt_tree_gross) */
	int by_blocks;          /* percentages and threshold on blocks instead of bytes
				   (temporary allocations, calls: blocks = their number) */
	int averages;           /* ", avg 24B" after the count: bytes / blocks, rounded
				   to the nearest byte (calls) */
};

/*
 * Writes the tree's lines under a header line already written by the caller:
 *   "  -> 45.71% (4,096B, 2x): label" (with averages, "(4,096B, 2x, avg
 * 2,048B)") with "| " continuation bars, a bar-only
 * line after a sibling's subtree when more siblings follow, and siblings
 * below the threshold folded into
 *   "  -> P% (BYTES, Nx) in K places, all below the T% threshold".
 * The tree's children must be sorted (mt_tree_sort). Returns 0 or MT_E_IO.
 */
int mt_export_text(const struct mt_tree *t, const struct mt_text_opts *o, FILE *out);

/* The figure of each node that the collapsed and JSON exports write. */
enum mt_export_figure {
	MT_EXPORT_BYTES = 0,    /* bytes: gprof2dot's "Memory", in "bytes" */
	MT_EXPORT_CALLS,        /* blocks of a calls profile (lib/sizes.h):
				   "Allocation calls", in "calls" */
};

/*
 * Collapsed stacks of an inverted tree (built with inverted = 1): one line
 * "outer;...;inner;entry N" per node whose own figure fig (its cost minus
 * its children's) is not zero, so the lines sum to the tree's total. ';'
 * and newlines inside labels become '_'. Returns 0 or MT_E_IO.
 */
int mt_export_collapsed(const struct mt_tree *inverted, enum mt_export_figure fig, FILE *out);

/*
 * gprof2dot JSON of a callee-first tree: {"version":0,"costs":[{"description":
 * "Memory","unit":"bytes"}],"functions":[{"name":..,"module":..}],"events":
 * [{"callchain":[innermost first],"cost":[bytes]}]}, one event per node with
 * own figure fig, one function per distinct label (with MT_EXPORT_CALLS the
 * cost is {"description":"Allocation calls","unit":"calls"}). Returns 0 or
 * MT_E_IO.
 */
int mt_export_json(const struct mt_tree *callee, enum mt_export_figure fig, FILE *out);

/* One snapshot of a massif.out file. */
struct mt_massif_snap {
	uint64_t time_ns;
	uint64_t heap_bytes;
	const struct mt_tree *tree;  /* built with skip_entry = 1; NULL: heap_tree=empty */
	int peak;                    /* heap_tree=peak (exactly one snapshot) */
};

/*
 * A massif.out file: "desc:" (one line), "cmd:", "time_unit: ms", then the
 * snapshots (times in ms, with up to 6 decimals: ns resolution, in the
 * order given: sorted by the caller), each
 * detailed one with its tree in massif's "nK: BYTES 0xADDR: function
 * (file:line)" layout, one space of indentation per level, children by
 * bytes, those below threshold_pct folded as massif does. Returns 0 or
 * MT_E_IO.
 */
int mt_export_massif(const char *cmd, const struct mt_massif_snap *snaps, size_t n,
		     double threshold_pct, FILE *out);
/* The same, a piece at a time, so that only one tree need exist at once:
 * the header, then snapshot i (0, 1, 2...) of the file; check ferror(out). */
void mt_export_massif_header(const char *cmd, FILE *out);
void mt_export_massif_snap(size_t i, const struct mt_massif_snap *s, double threshold_pct,
			   FILE *out);

/* How mt_export_svg draws a tree. */
struct mt_svg_opts {
	const char *title;          /* the heading (what the tree is), cut short to
				       the width with the whole as its tooltip;
				       NULL: none */
	enum mt_export_figure fig;  /* the figure frames are as wide as */
	int diff;                   /* costs may be negative: growth red, shrinkage blue */
	int icicle;                 /* root at the top; 0: at the bottom (flame graph) */
};

/*
 * An SVG flame graph of a caller-first tree (built with inverted = 1): one
 * frame per node, the root ("all") at the bottom (at the top with icicle),
 * each frame as wide as its figure (a diff: the larger of its |net| and its
 * children's widths, so children always fit under their parent), frames
 * narrower than a tenth of a pixel left out with their children. Each frame
 * is a <g class="f" id="fN" data-d="DEPTH" data-x="OFFSET" data-w="WIDTH"
 * data-v="FIGURE"> (offset and width in figure units) holding a <title>,
 * a <rect> and a <text>. An inline script (no external file) fits labels
 * to frames, zooms on a click, searches by regex (the Search button, '/',
 * or "#s=RE" in the URL; "#z=N" zooms on frame N) and prints what matched:
 * "Matched: P%" in #matched, the figure in the root's data-matched.
 * Returns 0 or MT_E_IO / MT_E_NOMEM.
 */
int mt_export_svg(const struct mt_tree *caller_first, const struct mt_svg_opts *o, FILE *out);

/*
 * A flat list of functions (mt_tree_fns) as text: the first top of them
 * (0: all) by self cost, then by total cost, each sorted on key and
 * without the functions whose figure for key is 0 there, one line
 * per function "SELF % BLOCKS CALLS TOTAL % BLOCKS CALLS NAME" under a
 * heading line; percentages are of whole's figure for key (the tree's
 * gross cost), signed with signed_figures (a diff). fns is re-sorted.
 * Returns 0 or MT_E_IO.
 */
int mt_export_fns_text(struct mt_tree_fn *fns, size_t n, unsigned top, enum mt_tree_key key,
		       const struct mt_cost *whole, int signed_figures, FILE *out);

/*
 * The same as JSON: {"top_sites": {"bytes": B, "blocks": K, "calls": C,
 * "by_self": [{"function": NAME, "self": {"bytes", "blocks", "calls"},
 * "total": {...}}...], "by_total": [...]}} with the tree's total cost
 * total. Returns 0 or MT_E_IO.
 */
int mt_export_fns_json(struct mt_tree_fn *fns, size_t n, unsigned top, enum mt_tree_key key,
		       const struct mt_cost *total, FILE *out);

#endif
