/*
 * symbols.c - offline symbolization of recorded return addresses with
 * elfutils libdwfl/libdw.
 *
 * Each recorded module gets its own Dwfl session, opened the first time an
 * address inside it is resolved: the file at its recorded path is reported at
 * its recorded load bias, its build-id is checked against the recorded one,
 * and separate debug info is found by dwfl_standard_find_debuginfo (build-id
 * directory and .gnu_debuglink). One Dwfl per module keeps modules that were
 * unloaded and replaced at the same addresses apart.
 *
 * An address resolves to its chain of inlined scopes from the DWARF DIE tree
 * (dwarf_getscopes, then dwarf_getscopes_die for the concrete nesting): the
 * innermost function gets the line of the address, every caller the call site
 * (DW_AT_call_file/DW_AT_call_line) of the scope inlined into it. Without
 * DWARF the ELF symbol table names the function. Results are cached per
 * address; strings are interned in an arena, so equal names are equal
 * pointers and live as long as the symbolizer.
 *
 * Not here: reading the log (lib/replay.c), which frames a report shows and
 * how they are aggregated (lib/agg.c). Nothing here prints or exits.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "replay.h"
#include "symbols.h"

/* libstdc++'s demangler (abi::__cxa_demangle); the programs link -lstdc++. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define ARENA_BLOCK (64u << 10)
#define PATH_MAX_MSG 4400        /* a warning: MT_MAX_STRING path and text */
#define PATH_MAX_DEPTH 512       /* components of a normalized path (< 1024 bytes) */

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	char data[];
};

enum mod_state { MOD_UNOPENED, MOD_OPEN, MOD_FAILED };

struct sym_module {
	char *path;
	uint64_t base;
	uint8_t *build_id;
	size_t build_id_len;
	uint64_t lo, hi;          /* span of the recorded segments; 0,0 if none */
	enum mod_state state;
	Dwfl *dwfl;
	Dwfl_Module *mod;
};

/* One executable segment of a module, for address -> module lookup. */
struct seg {
	uint64_t start, end;      /* [start, end) */
	size_t mod;               /* index into modules */
};

struct cache_slot {
	uint64_t ip;
	struct mt_frame *frames;  /* NULL: empty slot */
	size_t n;
};

struct mt_symbols {
	struct sym_module *mods;
	size_t nmods, capmods;
	struct seg *segs;
	uint64_t *seg_maxend;     /* running maximum of end over sorted segs */
	size_t nsegs, capsegs;
	int segs_dirty;

	struct cache_slot *cache;
	size_t ncache, capcache;  /* capcache a power of two */

	const char **strs;        /* interned strings, open addressing */
	size_t nstrs, capstrs;

	char **warnings;
	size_t nwarn, capwarn;

	struct arena_block *arena;
	char *debuginfo_path;
	Dwfl_Callbacks callbacks;
};

/* ---- memory ------------------------------------------------------------ */

static void *arena_alloc(struct mt_symbols *s, size_t n)
{
	struct arena_block *b = s->arena;

	n = (n + 15) & ~(size_t)15;
	if (!b || b->size - b->used < n) {
		size_t size = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->size = size;
		b->used = 0;
		if (size == ARENA_BLOCK || !s->arena) {
			b->next = s->arena;
			s->arena = b;
		} else {
			/* a large one-off block: keep the current block current */
			b->next = s->arena->next;
			s->arena->next = b;
		}
	}
	b->used += n;
	return b->data + b->used - n;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, ncap * elem);
	if (!np)
		return MT_E_NOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint64_t hash_str(const char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (len--) {
		h ^= (unsigned char)*p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static int strs_rehash(struct mt_symbols *s)
{
	size_t ncap = s->capstrs ? s->capstrs * 2 : 1024, i;
	const char **n = calloc(ncap, sizeof(*n));

	if (!n)
		return MT_E_NOMEM;
	for (i = 0; i < s->capstrs; i++) {
		const char *str = s->strs[i];
		size_t j;

		if (!str)
			continue;
		j = hash_str(str, strlen(str)) & (ncap - 1);
		while (n[j])
			j = (j + 1) & (ncap - 1);
		n[j] = str;
	}
	free(s->strs);
	s->strs = n;
	s->capstrs = ncap;
	return 0;
}

/* The interned copy of p[0..len); NULL when out of memory. */
static const char *intern_n(struct mt_symbols *s, const char *p, size_t len)
{
	size_t j;
	char *copy;

	if ((s->nstrs + 1) * 2 > s->capstrs && strs_rehash(s) < 0)
		return NULL;
	j = hash_str(p, len) & (s->capstrs - 1);
	while (s->strs[j]) {
		if (strncmp(s->strs[j], p, len) == 0 && s->strs[j][len] == '\0')
			return s->strs[j];
		j = (j + 1) & (s->capstrs - 1);
	}
	copy = arena_alloc(s, len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, p, len);
	copy[len] = '\0';
	s->strs[j] = copy;
	s->nstrs++;
	return copy;
}

static const char *intern(struct mt_symbols *s, const char *p)
{
	return intern_n(s, p, strlen(p));
}

static int add_warning(struct mt_symbols *s, const char *msg)
{
	char *copy;

	if (grow((void **)&s->warnings, &s->capwarn, s->nwarn + 1,
		 sizeof(*s->warnings)) < 0)
		return MT_E_NOMEM;
	copy = strdup(msg);
	if (!copy)
		return MT_E_NOMEM;
	s->warnings[s->nwarn++] = copy;
	return 0;
}

/* ---- lifecycle ------------------------------------------------------------ */

/*
 * A new, empty symbolizer. The debug-info search path starts as
 * $MEMTRAIL_DEBUGINFO_PATH when set, else libdw's default.
 */
struct mt_symbols *mt_symbols_new(void)
{
	struct mt_symbols *s = calloc(1, sizeof(*s));
	const char *env = getenv("MEMTRAIL_DEBUGINFO_PATH");

	if (!s)
		return NULL;
	if (env && *env && mt_symbols_set_debuginfo_path(s, env) < 0) {
		free(s);
		return NULL;
	}
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	s->callbacks.section_address = dwfl_offline_section_address;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	return s;
}

/*
 * Sets the directories searched for separate debug info, in libdw's syntax
 * (see symbols.h). Applies to modules opened from now on.
 */
int mt_symbols_set_debuginfo_path(struct mt_symbols *s, const char *path)
{
	char *copy = NULL;

	if (!s)
		return MT_E_ARG;
	if (path && !(copy = strdup(path)))
		return MT_E_NOMEM;
	free(s->debuginfo_path);
	s->debuginfo_path = copy;
	return 0;
}

/* Frees the symbolizer; NULL is a no-op. */
void mt_symbols_free(struct mt_symbols *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nmods; i++) {
		if (s->mods[i].dwfl)
			dwfl_end(s->mods[i].dwfl);
		free(s->mods[i].path);
		free(s->mods[i].build_id);
	}
	free(s->mods);
	free(s->segs);
	free(s->seg_maxend);
	free(s->cache);
	free(s->strs);
	for (i = 0; i < s->nwarn; i++)
		free(s->warnings[i]);
	free(s->warnings);
	while (s->arena) {
		struct arena_block *b = s->arena;

		s->arena = b->next;
		free(b);
	}
	free(s->debuginfo_path);
	free(s);
}

/* ---- modules -------------------------------------------------------------- */

/*
 * Adds a module of the log; its file is opened lazily. Later modules win
 * where address ranges overlap (a library unloaded and another loaded in its
 * place). Returns 0 or a negative MT_E_*.
 */
int mt_symbols_add_module(struct mt_symbols *s, const struct mt_module *m)
{
	struct sym_module *sm;
	size_t i;

	if (!s || !m)
		return MT_E_ARG;
	if (grow((void **)&s->mods, &s->capmods, s->nmods + 1, sizeof(*s->mods)) < 0 ||
	    grow((void **)&s->segs, &s->capsegs, s->nsegs + m->nseg, sizeof(*s->segs)) < 0)
		return MT_E_NOMEM;
	sm = &s->mods[s->nmods];
	memset(sm, 0, sizeof(*sm));
	sm->path = strdup(m->path ? m->path : "");
	if (!sm->path)
		return MT_E_NOMEM;
	if (m->build_id_len) {
		sm->build_id = malloc(m->build_id_len);
		if (!sm->build_id) {
			free(sm->path);
			return MT_E_NOMEM;
		}
		memcpy(sm->build_id, m->build_id, m->build_id_len);
		sm->build_id_len = m->build_id_len;
	}
	sm->base = m->base;
	/*
	 * The main program under an unknown name and pseudo-files like
	 * [vdso] have no file to read: they fall back quietly.
	 */
	if (sm->path[0] == '\0' || sm->path[0] == '[')
		sm->state = MOD_FAILED;
	for (i = 0; i < m->nseg; i++) {
		const struct mt_segment *g = &m->segs[i];

		if (!g->size)
			continue;
		s->segs[s->nsegs].start = g->start;
		s->segs[s->nsegs].end = g->start + g->size;
		s->segs[s->nsegs].mod = s->nmods;
		s->nsegs++;
		if (!sm->hi || g->start < sm->lo)
			sm->lo = g->start;
		if (g->start + g->size > sm->hi)
			sm->hi = g->start + g->size;
	}
	s->nmods++;
	s->segs_dirty = 1;
	return 0;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->mod < y->mod ? -1 : x->mod > y->mod;
}

static int segs_sort(struct mt_symbols *s)
{
	uint64_t *me;
	size_t i;

	qsort(s->segs, s->nsegs, sizeof(*s->segs), seg_cmp);
	me = realloc(s->seg_maxend, (s->nsegs ? s->nsegs : 1) * sizeof(*me));
	if (!me)
		return MT_E_NOMEM;
	s->seg_maxend = me;
	for (i = 0; i < s->nsegs; i++)
		me[i] = i && me[i - 1] > s->segs[i].end ? me[i - 1] : s->segs[i].end;
	s->segs_dirty = 0;
	return 0;
}

static int open_module(struct mt_symbols *s, struct sym_module *sm);

/*
 * The index of the module holding ip, or -1. Recorded segments decide; a
 * module recorded without segments is tried afterwards by the span of its
 * ELF file (which means opening it).
 */
static long find_module(struct mt_symbols *s, uint64_t ip)
{
	size_t lo = 0, hi = s->nsegs, i;
	long best = -1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->segs[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* segs[0..lo) start at or below ip; walk back while one may cover it */
	for (i = lo; i-- > 0 && s->seg_maxend[i] > ip;)
		if (s->segs[i].end > ip && (long)s->segs[i].mod > best)
			best = (long)s->segs[i].mod;
	if (best >= 0)
		return best;
	for (i = s->nmods; i-- > 0;) {
		struct sym_module *sm = &s->mods[i];
		Dwarf_Addr start, end;

		if (sm->hi || sm->state == MOD_FAILED)
			continue;
		if (sm->state == MOD_UNOPENED && open_module(s, sm) < 0)
			return -2;
		if (sm->state != MOD_OPEN)
			continue;
		dwfl_module_info(sm->mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
		if (ip >= start && ip < end)
			return (long)i;
	}
	return -1;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int module_failed(struct mt_symbols *s, struct sym_module *sm,
			 const char *why)
{
	char msg[PATH_MAX_MSG];

	snprintf(msg, sizeof(msg), "%s: %s; its frames are shown as %s+0xOFF",
		 sm->path, why, base_name(sm->path));
	sm->state = MOD_FAILED;
	if (sm->dwfl)
		dwfl_end(sm->dwfl);
	sm->dwfl = NULL;
	sm->mod = NULL;
	return add_warning(s, msg);
}

/*
 * Opens sm's file at its recorded bias and checks its build-id. Failure to
 * open or a different build-id marks the module failed (with one warning);
 * only running out of memory is an error.
 */
static int open_module(struct mt_symbols *s, struct sym_module *sm)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	char why[256];
	int n;

	sm->dwfl = dwfl_begin(&s->callbacks);
	if (!sm->dwfl)
		return module_failed(s, sm, "cannot be read (libdw session failed)");
	dwfl_report_begin(sm->dwfl);
	/* add_p_vaddr: the recorded base is the load bias (dlpi_addr) */
	sm->mod = dwfl_report_elf(sm->dwfl, base_name(sm->path), sm->path, -1,
				  sm->base, true);
	dwfl_report_end(sm->dwfl, NULL, NULL);
	if (!sm->mod) {
		snprintf(why, sizeof(why), "cannot be read (%s)", dwfl_errmsg(-1));
		return module_failed(s, sm, why);
	}
	if (sm->build_id_len) {
		n = dwfl_module_build_id(sm->mod, &bits, &vaddr);
		if (n != (int)sm->build_id_len || memcmp(bits, sm->build_id, (size_t)n))
			return module_failed(s, sm, "build-id differs from the recording");
	}
	sm->state = MOD_OPEN;
	return 0;
}

/* ---- names and paths ---------------------------------------------------- */

/* The interned demangled form of an ELF/linkage name. */
static const char *demangled(struct mt_symbols *s, const char *name)
{
	const char *r;
	char *d;
	int status = -1;

	if (name[0] != '_' || name[1] != 'Z')
		return intern(s, name);
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (!d || status != 0) {
		free(d);
		return intern(s, name);
	}
	r = intern(s, d);
	free(d);
	return r;
}

/* The name of a subprogram or inlined-subroutine DIE, or NULL. */
static const char *die_name(struct mt_symbols *s, Dwarf_Die *die, int *nomem)
{
	Dwarf_Attribute attr;
	const char *name;
	const char *r;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name,
							     &attr));
	if (name) {
		r = demangled(s, name);
	} else {
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
		if (!name)
			return NULL;
		r = intern(s, name);
	}
	if (!r)
		*nomem = 1;
	return r;
}

/*
 * Lexically normalizes path into out (size >= strlen(path) + 1): drops "."
 * and empty components and resolves ".." against a preceding component.
 */
static void normalize(const char *path, char *out)
{
	size_t starts[PATH_MAX_DEPTH];
	size_t depth = 0, len = 0, lead = 0;
	const char *p = path;

	if (*p == '/') {
		out[len++] = '/';
		lead = 1;
	}
	while (*p) {
		const char *q;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		q = strchr(p, '/');
		n = q ? (size_t)(q - p) : strlen(p);
		if (n == 1 && p[0] == '.') {
			/* skip */
		} else if (n == 2 && p[0] == '.' && p[1] == '.' && depth > 0) {
			len = starts[--depth];
		} else if (n == 2 && p[0] == '.' && p[1] == '.' && lead) {
			/* "/.." is "/" */
		} else {
			if (len > lead)
				out[len++] = '/';
			/* ".." that cannot be resolved stays and is never popped */
			if (!(n == 2 && p[0] == '.' && p[1] == '.') && depth < PATH_MAX_DEPTH)
				starts[depth++] = len > lead ? len - 1 : len;
			memcpy(out + len, p, n);
			len += n;
		}
		p += n;
	}
	if (len == 0)
		out[len++] = '.';
	out[len] = '\0';
}

/*
 * The interned form of a DWARF file name for reports: normalized, and made
 * relative to the compilation directory when it lies under it.
 */
static const char *report_path(struct mt_symbols *s, const char *file,
			       const char *comp_dir)
{
	char fbuf[1024], cbuf[1024];
	size_t clen;

	if (strlen(file) >= sizeof(fbuf))
		return intern(s, file);
	normalize(file, fbuf);
	if (comp_dir && strlen(comp_dir) < sizeof(cbuf)) {
		normalize(comp_dir, cbuf);
		clen = strlen(cbuf);
		if (strcmp(cbuf, ".") && strncmp(fbuf, cbuf, clen) == 0 &&
		    fbuf[clen] == '/' && fbuf[clen + 1])
			return intern(s, fbuf + clen + 1);
	}
	return intern(s, fbuf);
}

/* ---- resolution ------------------------------------------------------------ */

static int is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

#define MAX_INLINE 64

/*
 * Fills out[] with the frames of pc (ip - 1) in module sm; returns the count
 * (>= 1), or MT_E_NOMEM.
 */
static int resolve_in_module(struct mt_symbols *s, struct sym_module *sm,
			     uint64_t ip, struct mt_frame *out)
{
	const uint64_t pc = ip - 1;
	const char *modpath = intern(s, sm->path);
	Dwarf_Die *cudie, *scopes = NULL, *chain = NULL;
	Dwarf_Addr bias = 0;
	Dwarf_Files *files = NULL;
	const char *comp_dir = NULL;
	Dwfl_Line *line;
	Dwarf_Attribute attr;
	int nscopes, nchain = 0, n = 0, i, nomem = 0;

	if (!modpath)
		return MT_E_NOMEM;
	for (i = 0; i < MAX_INLINE; i++) {
		out[i].function = NULL;
		out[i].file = NULL;
		out[i].line = 0;
		out[i].module = modpath;
		out[i].offset = ip - sm->base;
		out[i].inlined = 0;
	}
	if (dwfl_addrmodule(sm->dwfl, pc) != sm->mod)
		return 1;

	cudie = dwfl_module_addrdie(sm->mod, pc, &bias);
	if (cudie) {
		comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
		nscopes = dwarf_getscopes(cudie, pc - bias, &scopes);
		if (nscopes > 0) {
			/*
			 * dwarf_getscopes continues past an inlined scope with
			 * its abstract origin's parents; the concrete nesting
			 * (who it was inlined into) comes from the DIE tree.
			 */
			nchain = dwarf_getscopes_die(&scopes[0], &chain);
			if (nchain < 0)
				nchain = 0;
		}
		free(scopes);
	}
	for (i = 0; i < nchain && n < MAX_INLINE; i++) {
		Dwarf_Die *die = &chain[i];

		if (!is_function(die))
			continue;
		out[n].function = die_name(s, die, &nomem);
		if (n > 0)
			out[n - 1].inlined = 1;
		n++;
		if (dwarf_tag(die) == DW_TAG_subprogram)
			break;
		/* an inlined scope: its call site is the caller's position */
		if (n < MAX_INLINE) {
			Dwarf_Word fidx = 0, cline = 0;
			const char *cfile = NULL;

			if (!files && dwarf_getsrcfiles(cudie, &files, NULL) != 0)
				files = NULL;
			if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &fidx) == 0 &&
			    files)
				cfile = dwarf_filesrc(files, fidx, NULL, NULL);
			dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &cline);
			if (cfile) {
				out[n].file = report_path(s, cfile, comp_dir);
				if (!out[n].file)
					nomem = 1;
			}
			out[n].line = (unsigned)cline;
		}
	}
	free(chain);

	if (n == 0 || !out[0].function) {
		/* no DWARF function: the ELF symbol table names it */
		GElf_Sym sym;
		GElf_Off off;
		const char *name = dwfl_module_addrinfo(sm->mod, pc, &off, &sym,
							NULL, NULL, NULL);

		if (name && *name) {
			out[0].function = demangled(s, name);
			if (!out[0].function)
				nomem = 1;
		}
		if (n == 0)
			n = 1;
	}
	line = dwfl_module_getsrc(sm->mod, pc);
	if (line) {
		int lineno = 0;
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

		if (file && out[0].function) {
			const char *cd = dwfl_line_comp_dir(line);

			out[0].file = report_path(s, file, cd ? cd : comp_dir);
			if (!out[0].file)
				nomem = 1;
			out[0].line = lineno > 0 ? (unsigned)lineno : 0;
		}
	}
	return nomem ? MT_E_NOMEM : n;
}

static int cache_grow(struct mt_symbols *s)
{
	size_t ncap = s->capcache ? s->capcache * 2 : 4096, i;
	struct cache_slot *n = calloc(ncap, sizeof(*n));

	if (!n)
		return MT_E_NOMEM;
	for (i = 0; i < s->capcache; i++) {
		size_t j;

		if (!s->cache[i].frames)
			continue;
		j = hash64(s->cache[i].ip) & (ncap - 1);
		while (n[j].frames)
			j = (j + 1) & (ncap - 1);
		n[j] = s->cache[i];
	}
	free(s->cache);
	s->cache = n;
	s->capcache = ncap;
	return 0;
}

/*
 * Resolves a recorded return address to its frames, innermost first; cached,
 * so the same ip always yields the same pointer. Returns 0 or MT_E_NOMEM.
 */
int mt_symbols_resolve(struct mt_symbols *s, uint64_t ip,
		       const struct mt_frame **frames, size_t *nframes)
{
	struct mt_frame tmp[MAX_INLINE];
	struct cache_slot *slot;
	struct mt_frame *fr;
	size_t j;
	long mi;
	int n, err;

	if (!s || !frames || !nframes)
		return MT_E_ARG;
	if ((s->ncache + 1) * 4 > s->capcache * 3 && (err = cache_grow(s)) < 0)
		return err;
	j = hash64(ip) & (s->capcache - 1);
	while (s->cache[j].frames) {
		if (s->cache[j].ip == ip) {
			*frames = s->cache[j].frames;
			*nframes = s->cache[j].n;
			return 0;
		}
		j = (j + 1) & (s->capcache - 1);
	}
	slot = &s->cache[j];

	if (s->segs_dirty && (err = segs_sort(s)) < 0)
		return err;
	mi = find_module(s, ip);
	if (mi == -2)
		return MT_E_NOMEM;
	memset(tmp, 0, sizeof(tmp));
	if (mi < 0) {
		tmp[0].offset = ip;
		n = 1;
	} else {
		struct sym_module *sm = &s->mods[mi];

		if (sm->state == MOD_UNOPENED && open_module(s, sm) < 0)
			return MT_E_NOMEM;
		if (sm->state == MOD_OPEN) {
			n = resolve_in_module(s, sm, ip, tmp);
			if (n < 0)
				return n;
		} else if (sm->path[0] == '\0') {
			/* no name to show: the absolute address */
			tmp[0].offset = ip;
			n = 1;
		} else {
			tmp[0].module = intern(s, sm->path);
			if (!tmp[0].module)
				return MT_E_NOMEM;
			tmp[0].offset = ip - sm->base;
			n = 1;
		}
	}
	fr = arena_alloc(s, (size_t)n * sizeof(*fr));
	if (!fr)
		return MT_E_NOMEM;
	memcpy(fr, tmp, (size_t)n * sizeof(*fr));
	/* the slot is unchanged: open_module never touches the cache */
	slot->ip = ip;
	slot->frames = fr;
	slot->n = (size_t)n;
	s->ncache++;
	*frames = fr;
	*nframes = (size_t)n;
	return 0;
}

/*
 * Formats a frame as "function [file:line]", "function", "module+0xOFF"
 * (basename of the module) or "0xADDR". Returns the length it needed.
 */
size_t mt_frame_format(const struct mt_frame *f, char *buf, size_t size)
{
	int n;

	if (f->function && f->file && f->line)
		n = snprintf(buf, size, "%s [%s:%u]", f->function, f->file, f->line);
	else if (f->function)
		n = snprintf(buf, size, "%s", f->function);
	else if (f->module)
		n = snprintf(buf, size, "%s+0x%llx", base_name(f->module),
			     (unsigned long long)f->offset);
	else
		n = snprintf(buf, size, "0x%llx", (unsigned long long)f->offset);
	return n < 0 ? 0 : (size_t)n;
}

/* The warnings collected so far; owned by s. */
size_t mt_symbols_warnings(const struct mt_symbols *s, const char *const **lines)
{
	if (lines)
		*lines = (const char *const *)s->warnings;
	return s->nwarn;
}
