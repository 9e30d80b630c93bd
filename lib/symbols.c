/*
 * symbols.c - offline symbolization of recorded return addresses with
 * elfutils libdwfl/libdw.
 *
 * Each recorded module gets its own Dwfl session, opened the first time an
 * address inside it is resolved: the file at its recorded path is reported at
 * its recorded load bias, its build-id is checked against the recorded one,
 * and separate debug info is found by dwfl_standard_find_debuginfo (build-id
 * directory and .gnu_debuglink, then, when DEBUGINFOD_URLS is set, the
 * debuginfod servers through libdebuginfod, which keeps what it fetches in
 * its own cache); a debug file with compressed sections is read from its
 * uncompressed copy in lib/debugcache.h's cache. Which modules got their
 * debug info from debuginfod, and why one could not, is said once per
 * module among the warnings. One Dwfl per module keeps modules that were
 * unloaded and replaced at the same addresses apart.
 *
 * An address resolves to its chain of inlined functions from the DWARF DIE
 * tree, read once per compilation unit into a sorted range index (see "per-CU
 * function index" below): the innermost function gets the line of the
 * address (line table), every caller the call site (DW_AT_call_file and
 * DW_AT_call_line) of the function inlined into it. Names are the demangled
 * DW_AT_linkage_name, else DW_AT_name; without DWARF the ELF symbol table
 * names the function. Results are cached per address; strings are interned
 * in an arena, so equal names are equal pointers and live as long as the
 * symbolizer.
 *
 * Not here: reading the log (lib/replay.c), which frames a report shows and
 * how they are aggregated (lib/agg.c). Nothing here prints or exits.
 */
#include <dlfcn.h>
#include <dwarf.h>
#include <errno.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debugcache.h"
#include "error.h"
#include "fmt.h"
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

/*
 * A module's Dwfl userdata, for the debug-info callback: the symbolizer and
 * the module's index (not a pointer: s->mods moves as modules are added).
 */
struct mod_ref {
	struct mt_symbols *s;
	size_t i;
};

struct sym_module {
	char *path;
	uint64_t base;
	uint8_t *build_id;
	size_t build_id_len;
	uint64_t lo, hi;          /* span of the recorded segments; 0,0 if none */
	enum mod_state state;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct cu_slot *cus;      /* CU DIE offset -> index, open addressing */
	size_t ncus, capcus;
	struct elf_sym *syms;     /* the ELF symbol table by address (symtab_lookup) */
	size_t nsyms;
	int syms_built;
	struct mod_ref *ref;      /* the Dwfl module's userdata */
	int debuginfod_said;      /* its debuginfod line is among the warnings */
	int debuginfo_errno;      /* the separate debug info search failed with
				     this errno (or -1 for 0); 0: not failed */
};

/* A symbol of a module's ELF symbol table, for lookups by address. */
struct elf_sym {
	uint64_t addr, size;      /* address as the module is loaded */
	const char *name;         /* owned by the module's Dwfl */
	uint32_t order;           /* its index in the table (ties keep the first) */
	uint8_t bind;             /* STB_* */
};

struct cu_index;

struct cu_slot {
	uint64_t off;
	struct cu_index *ci;      /* NULL: empty slot */
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
	char *debug_cache;        /* mt_debugcache's directory; NULL: none */
	Dwfl_Callbacks callbacks;

	/* mt_symbols_prefetch: modules being opened on a thread of ours */
	pthread_t warm;
	int warming;
	size_t *warm_mods, nwarm;
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

static void cu_index_free(struct cu_index *ci);

/* ---- debuginfod ------------------------------------------------------------ */

/*
 * libdebuginfod's cache directory, as it chooses it: $DEBUGINFOD_CACHE_PATH,
 * else ~/.debuginfod_client_cache if it exists, else
 * $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client.
 */
static void debuginfod_cache(char *buf, size_t size)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH"), *home = getenv("HOME");
	const char *xdg = getenv("XDG_CACHE_HOME");
	struct stat st;

	if (env && *env) {
		snprintf(buf, size, "%s", env);
		return;
	}
	snprintf(buf, size, "%s/.debuginfod_client_cache", home ? home : "");
	if (home && stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
		return;
	if (xdg && *xdg)
		snprintf(buf, size, "%s/debuginfod_client", xdg);
	else
		snprintf(buf, size, "%s/.cache/debuginfod_client", home ? home : "");
}

/*
 * Once per module with a build-id, when DEBUGINFOD_URLS is set: a warning
 * line saying which debug file debuginfod gave (fd, from libdwfl's lookup,
 * is a file of its cache), or, when the lookup found nothing, why: the
 * servers do not have it (libdebuginfod caches that answer as an empty
 * file), libdebuginfod is not loaded (libdwfl loads it for its first
 * lookup, when installed), or no server answered in time. Found locally:
 * nothing to say.
 */
static void debuginfod_say(struct mt_symbols *s, struct sym_module *sm, Dwfl_Module *mod,
			   int fd)
{
	const char *urls = getenv("DEBUGINFOD_URLS"), *tmo = getenv("DEBUGINFOD_TIMEOUT");
	char cache[PATH_MAX], real[PATH_MAX], got[PATH_MAX + 160], hex[2 * 64 + 1];
	char link[64], msg[PATH_MAX_MSG];
	const unsigned char *bits;
	GElf_Addr vaddr;
	struct stat st;
	ssize_t len;
	void *lib;
	int n;

	if (sm->debuginfod_said || !urls || !*urls)
		return;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n <= 0 || n > 64)
		return;           /* debuginfod knows files by build-id only */
	sm->debuginfod_said = 1;
	mt_fmt_hex(hex, sizeof(hex), bits, (size_t)n);
	debuginfod_cache(cache, sizeof(cache));
	if (fd >= 0) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, got, sizeof(got) - 1);
		if (len <= 0 || !realpath(cache, real))
			return;
		got[len] = 0;
		n = (int)strlen(real);
		if (strncmp(got, real, (size_t)n) || got[n] != '/')
			return;
		snprintf(msg, sizeof(msg), "%s: debug info from debuginfod (%s): %s", sm->path,
			 urls, got);
	} else {
		snprintf(got, sizeof(got), "%s/%s/debuginfo", cache, hex);
		lib = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD);
		if (lib)
			dlclose(lib);
		if (stat(got, &st) == 0 && st.st_size == 0)
			snprintf(msg, sizeof(msg), "%s: no debug info for build-id %s on the "
				 "debuginfod servers (%s)", sm->path, hex, urls);
		else if (!lib)
			snprintf(msg, sizeof(msg), "%s: no debug info: DEBUGINFOD_URLS is set but "
				 "libdebuginfod.so.1 (elfutils) is not loaded (not installed?)",
				 sm->path);
		else
			snprintf(msg, sizeof(msg), "%s: no debug info from debuginfod (%s): no "
				 "server could be reached or answered within DEBUGINFOD_TIMEOUT "
				 "(%s s)", sm->path, urls, tmo && *tmo ? tmo : "90");
	}
	(void)add_warning(s, msg);   /* out of memory: the line is lost, not the report */
}

/*
 * Whether the search for debuglink_file is for the module's own debug
 * file (its .gnu_debuglink, or none), not for a dwz file (named by
 * .gnu_debugaltlink, looked for with the same callback).
 */
static int main_file_link(Dwfl_Module *mod, const char *debuglink_file)
{
	Dwarf_Addr bias;
	GElf_Word crc;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	const char *link;

	if (!elf)
		return 0;
	link = dwelf_elf_gnu_debuglink(elf, &crc);
	return link == debuglink_file || (link && debuglink_file && !strcmp(link, debuglink_file));
}

/*
 * The uncompressed copy (lib/debugcache.h) of the debug file libdwfl's
 * search would find first, by the module's build-id under the absolute
 * directories of the debug-info path (as libdwfl's build-id lookup walks
 * them); -1 when there is none to use: no cache, no such file, or one
 * without compressed sections or with another build-id, which libdwfl's
 * own search then finds and judges as before.
 *
 * Why here and not on the descriptor that search returns: when a module
 * has a build-id, libdwfl opens the debug file it finds to check it and
 * keeps that Elf handle for the module, whatever descriptor the callback
 * returns; a file it did not open (this one) it opens from the descriptor.
 * Only the module's own debug file comes here: a dwz file (named by
 * .gnu_debugaltlink, looked for with the same callback) is left to
 * libdwfl, as is debug info fetched from debuginfod. *name gets the
 * original file's name, as libdwfl's lookup would set it, so that a dwz
 * file is looked for next to it.
 *
 * What it costs and saves, `memtrail report` (median of 5, CPU) of a log
 * of python3 -c 'import json', whose only debug files are libc6-dbg's for
 * libc and ld.so (4.2 + 0.6 MB, 10.4 + 1.1 MB uncompressed): 59 ms
 * without the cache, of which ~40 ms inflating; 89 ms for the first
 * report, which inflates once and writes the copies (on the prefetch
 * thread, alongside the pass over the log); 17 ms for every later one.
 * A log of gcc's cc1: 73, 95 and 35 ms.
 */
static int cached_debuginfo(struct mt_symbols *s, struct sym_module *sm, Dwfl_Module *mod,
			    const char *debuglink_file, char **name)
{
	const char *paths = s->debuginfo_path ? s->debuginfo_path : ":.debug:/usr/lib/debug";
	char hex[2 * 64 + 1], path[PATH_MAX], *real;
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n, fd = -1, cfd;

	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (!s->debug_cache || n <= 0 || n > 64 || !main_file_link(mod, debuglink_file))
		return -1;
	mt_fmt_hex(hex, sizeof(hex), bits, (size_t)n);
	while (fd < 0 && *paths) {
		size_t len = strcspn(paths, ":");
		const char *dir = paths;
		size_t dlen = len;

		paths += len + (paths[len] == ':');
		if (dlen && (*dir == '+' || *dir == '-')) {
			dir++;
			dlen--;
		}
		if (!dlen || *dir != '/' ||
		    snprintf(path, sizeof(path), "%.*s/.build-id/%.2s/%s.debug", (int)dlen, dir,
			     hex, hex + 2) >= (int)sizeof(path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return -1;
	cfd = mt_debugcache_swap(s->debug_cache, fd, bits, (size_t)n);
	if (cfd == fd) {
		close(fd);
		return -1;
	}
	/* found here, not by debuginfod: nothing to say of this module */
	sm->debuginfod_said = 1;
	real = realpath(path, NULL);
	free(*name);
	*name = real ? real : strdup(path);
	return cfd;
}

/* Whether path exists, the path being dir/sub/file without the parts that
 * are NULL; a path too long to build counts as existing (the search then
 * runs as usual). */
static int candidate(const char *dir, const char *sub, const char *file)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s%s%s%s%s", dir ? dir : "", dir ? "/" : "",
			 sub ? sub : "", sub ? "/" : "", file);

	return n < 0 || n >= (int)sizeof(path) || access(path, F_OK) == 0;
}

/* Some file of file_name's debuglink search (below) exists. */
static int link_candidate(const char *paths, const char *file_name, const char *link)
{
	const char *base = strrchr(file_name, '/'), *sub;
	char dirname[PATH_MAX], name[PATH_MAX], elem[PATH_MAX];
	int found = 0, dlen;

	base = base ? base + 1 : file_name;
	dlen = (int)(base - file_name) - 1;
	if (dlen >= (int)sizeof(dirname) ||
	    snprintf(name, sizeof(name), "%s%s", link ? link : base, link ? "" : ".debug") >=
		    (int)sizeof(name))
		return 1;
	if (dlen >= 0)
		snprintf(dirname, sizeof(dirname), "%.*s", dlen, file_name);
	while (!found && *paths) {
		size_t len = strcspn(paths, ":");

		if (len >= sizeof(elem))
			return 1;
		snprintf(elem, sizeof(elem), "%.*s", (int)len, paths);
		paths += len + (paths[len] == ':');
		const char *e = elem + (*elem == '+' || *elem == '-');

		if (!*e) {
			found = candidate(dlen >= 0 ? dirname : NULL, NULL, name);
		} else if (*e != '/') {
			found = candidate(dlen >= 0 ? dirname : NULL, e, name) ||
				(!link && candidate(dlen >= 0 ? dirname : NULL, e, base));
		} else if (dlen >= 0 && dirname[0] == '/') {
			/* every tail of the main file's directory, then none */
			for (sub = dirname; !found; ) {
				sub = strchr(sub, '/');
				sub = sub ? sub + 1 : NULL;
				if (sub && !*sub)
					break;
				found = candidate(e, sub, name) || (!link && candidate(e, sub, base));
				if (!sub)
					break;
			}
		}
	}
	return found;
}

/*
 * Whether libdwfl's search for the module's own debug file can find
 * anything without debuginfod: some file it would open exists. Without
 * DEBUGINFOD_URLS libdebuginfod finds nothing (it does not even read its
 * cache), yet libdwfl 0.188 loads it, with libcurl and GnuTLS, for every
 * search that finds nothing locally: 10-15 ms of CPU in nearly every
 * report, as some module always lacks debug info. The files are those of
 * elfutils' find-debuginfo.c: under each absolute directory of the path,
 * .build-id/xx/rest.debug; then the debuglink name (else the file's name
 * with .debug, or the name itself) in the file's directory for an empty
 * element, under the directory plus a relative element, and under an
 * absolute element plus each tail of the file's directory; for the file
 * and its real path. An existing file makes the search run as usual.
 */
static int local_candidate(struct mt_symbols *s, Dwfl_Module *mod, const char *file_name,
			   const char *link)
{
	const char *paths = s->debuginfo_path ? s->debuginfo_path : ":.debug:/usr/lib/debug";
	const unsigned char *bits;
	char hex[2 * 64 + 1], *real;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr), found = 0;

	if (n > 64)
		return 1;
	if (n > 0)
		mt_fmt_hex(hex, sizeof(hex), bits, (size_t)n);
	for (const char *p = paths; n > 0 && !found && *p; ) {
		size_t len = strcspn(p, ":");
		char dir[PATH_MAX], file[2 * 64 + 16];
		const char *d = p;

		p += len + (p[len] == ':');
		if (len && (*d == '+' || *d == '-')) {
			d++;
			len--;
		}
		if (!len || *d != '/')
			continue;
		if (len >= sizeof(dir))
			return 1;
		snprintf(dir, sizeof(dir), "%.*s", (int)len, d);
		snprintf(file, sizeof(file), "%.2s/%s.debug", hex, hex + 2);
		found = candidate(dir, ".build-id", file);
	}
	if (found || !file_name)
		return found;
	if (link_candidate(paths, file_name, link))
		return 1;
	real = realpath(file_name, NULL);
	found = real && strcmp(real, file_name) && link_candidate(paths, real, link);
	free(real);
	return found;
}

/*
 * The uncompressed copy of the module's debug file (above), else
 * libdwfl's own search (which asks debuginfod last, unless DEBUGINFOD_URLS
 * is unset or empty and no file it would try exists); then the line above.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct mod_ref *ref = *userdata;
	struct sym_module *sm = ref ? &ref->s->mods[ref->i] : NULL;
	const char *urls;
	int fd;

	/* libdwfl searches again for the symbol table once the search for
	 * DWARF failed: the answer is the same, without waiting for the
	 * debuginfod servers a second time */
	if (sm && sm->debuginfo_errno) {
		errno = sm->debuginfo_errno > 0 ? sm->debuginfo_errno : 0;
		return -1;
	}
	if (sm && (fd = cached_debuginfo(ref->s, sm, mod, debuglink_file,
					 debuginfo_file_name)) >= 0)
		return fd;
	urls = getenv("DEBUGINFOD_URLS");
	if (sm && (!urls || !*urls) && main_file_link(mod, debuglink_file) &&
	    !local_candidate(ref->s, mod, file_name, debuglink_file)) {
		errno = 0;
		fd = -1;
	} else {
		fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						  debuglink_file, debuglink_crc,
						  debuginfo_file_name);
	}
	if (sm) {
		if (fd < 0)
			sm->debuginfo_errno = errno ? errno : -1;
		debuginfod_say(ref->s, sm, mod, fd);
	}
	return fd;
}

/* ---- opening modules ahead ---------------------------------------------- */

/*
 * Opening a module's debug info is most of symbolization's cost (libdw
 * inflates compressed DWARF sections whole: 75-90 % of it on the bench's
 * gcc and stl reports), and it does not depend on which addresses are
 * resolved. mt_symbols_prefetch lets a thread do it for the modules a
 * caller names while the caller does other work (the session's pass over
 * the log). Nothing else touches the symbolizer meanwhile: every other
 * function waits for that thread first (settle), so no state is shared
 * while it runs and no lock is needed; separate modules have separate
 * Dwfl sessions.
 */
static int open_module(struct mt_symbols *s, struct sym_module *sm);
static void symtab_build(struct sym_module *sm);

static void *warm_main(void *arg)
{
	struct mt_symbols *s = arg;

	for (size_t k = 0; k < s->nwarm; k++) {
		struct sym_module *sm = &s->mods[s->warm_mods[k]];
		Dwarf_Addr bias;

		if (sm->state == MOD_UNOPENED && open_module(s, sm) < 0) {
			/* out of memory: left for the caller's own attempt */
			if (sm->dwfl)
				dwfl_end(sm->dwfl);
			sm->dwfl = NULL;
			sm->mod = NULL;
			continue;
		}
		if (sm->state != MOD_OPEN)
			continue;
		/* without DWARF the ELF symbol table names every function */
		if (!dwfl_module_getdwarf(sm->mod, &bias) && !sm->syms_built)
			symtab_build(sm);
	}
	return NULL;
}

static void settle(const struct mt_symbols *cs)
{
	struct mt_symbols *s = (struct mt_symbols *)cs;

	if (!s || !s->warming)
		return;
	pthread_join(s->warm, NULL);
	s->warming = 0;
	free(s->warm_mods);
	s->warm_mods = NULL;
	s->nwarm = 0;
}

/* ---- lifecycle ------------------------------------------------------------ */

/*
 * A new, empty symbolizer. The debug-info search path starts as
 * $MEMTRAIL_DEBUGINFO_PATH when set, else libdw's default; the cache of
 * uncompressed debug files is where mt_debugcache_dir says.
 */
struct mt_symbols *mt_symbols_new(void)
{
	struct mt_symbols *s = calloc(1, sizeof(*s));
	const char *env = getenv("MEMTRAIL_DEBUGINFO_PATH");
	char dir[PATH_MAX];

	if (!s)
		return NULL;
	if (env && *env && mt_symbols_set_debuginfo_path(s, env) < 0) {
		free(s);
		return NULL;
	}
	/* out of memory here: no cache, the same report */
	if (mt_debugcache_dir(dir, sizeof(dir)) == 0)
		s->debug_cache = strdup(dir);
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = find_debuginfo;
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
	settle(s);
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
	settle(s);
	for (i = 0; i < s->nmods; i++) {
		size_t j;

		for (j = 0; j < s->mods[i].capcus; j++)
			cu_index_free(s->mods[i].cus[j].ci);
		free(s->mods[i].cus);
		free(s->mods[i].syms);
		if (s->mods[i].dwfl)
			dwfl_end(s->mods[i].dwfl);
		free(s->mods[i].path);
		free(s->mods[i].build_id);
		free(s->mods[i].ref);
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
	free(s->debug_cache);
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
	settle(s);
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

	if (s->nsegs > 1)
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

/* The last module whose recorded segments hold ip, or -1. */
static long find_recorded(const struct mt_symbols *s, uint64_t ip)
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
	return best;
}

/*
 * The index of the module holding ip, or -1. Recorded segments decide; a
 * module recorded without segments is tried afterwards by the span of its
 * ELF file (which means opening it).
 */
static long find_module(struct mt_symbols *s, uint64_t ip)
{
	long best = find_recorded(s, ip);
	size_t i;

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
	void **ud;
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
	if (!sm->ref && !(sm->ref = malloc(sizeof(*sm->ref))))
		return MT_E_NOMEM;
	sm->ref->s = s;
	sm->ref->i = (size_t)(sm - s->mods);
	dwfl_module_info(sm->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = sm->ref;
	if (sm->build_id_len) {
		n = dwfl_module_build_id(sm->mod, &bits, &vaddr);
		if (n != (int)sm->build_id_len || memcmp(bits, sm->build_id, (size_t)n))
			return module_failed(s, sm, "build-id differs from the recording");
	}
	sm->state = MOD_OPEN;
	return 0;
}

/* ---- names and paths ---------------------------------------------------- */

/*
 * Where the name starts in a demangled function: template functions carry
 * their return type ("void std::vector<int>::_M_realloc_insert<...>(...)"),
 * which reports do not show. The return type ends at the last space outside
 * <>, (), {} and [] before the parameter list; an operator's name ends the
 * scan, as its punctuation is not nesting.
 */
static size_t name_start(const char *d)
{
	size_t i, start = 0;
	int depth = 0;

	for (i = 0; d[i]; i++) {
		char c = d[i];

		if (depth == 0 && strncmp(d + i, "operator", 8) == 0 &&
		    (i == 0 || d[i - 1] == ':' || d[i - 1] == ' '))
			break;
		if (c == '(' && depth == 0)
			break;
		if (c == '<' || c == '(' || c == '{' || c == '[')
			depth++;
		else if ((c == '>' || c == ')' || c == '}' || c == ']') && depth > 0)
			depth--;
		else if (c == ' ' && depth == 0)
			start = i + 1;
	}
	return start;
}

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
	r = intern(s, d + name_start(d));
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
 * The interned form of a DWARF file name for reports: joined to the
 * compilation directory when relative, normalized, and made relative to the
 * compilation directory when it lies under it. With a relative comp_dir
 * (Debian's "./csu") "./csu/../sysdeps/nptl/x.h" becomes "sysdeps/nptl/x.h".
 */
static const char *report_path(struct mt_symbols *s, const char *file,
			       const char *comp_dir)
{
	char fbuf[1024], cbuf[1024], joined[1024];
	size_t clen;

	/* a relative name is relative to the compilation directory */
	if (file[0] != '/' && comp_dir && *comp_dir &&
	    (size_t)snprintf(joined, sizeof(joined), "%s/%s", comp_dir, file) < sizeof(joined))
		file = joined;
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

/*
 * ---- per-CU function index ----
 * Walking a CU's DIE tree for every address (dwarf_getscopes) costs tens
 * of microseconds in a big CU. Instead, the first address in a CU indexes
 * it once: every subprogram and inlined subroutine with code, its enclosing
 * function, and a flat sorted list of disjoint address ranges each mapped to
 * the innermost function covering it. An address is then a binary search
 * plus a walk up the parents; names and call sites are read on first use.
 */
struct fn_node {
	Dwarf_Die die;
	int32_t parent;           /* enclosing function node, or -1 */
	uint8_t is_inline;        /* DW_TAG_inlined_subroutine */
	uint8_t done;             /* name and call site read */
	const char *name;
	const char *call_file;
	unsigned call_line;
};

struct fn_range {
	uint64_t lo, hi;          /* DWARF addresses, [lo, hi) */
	int32_t node;
	uint32_t depth;
};

struct cu_index {
	Dwarf_Die cu;
	Dwarf_Addr bias;          /* module address - DWARF address */
	int cplusplus;            /* a C++ compilation unit */
	const char *comp_dir;     /* as in DWARF, or NULL */
	Dwarf_Files *files;       /* read on first call site */
	int files_tried;
	struct fn_node *nodes;
	size_t nnodes, capnodes;
	struct fn_range *ranges;  /* flat, disjoint, sorted */
	size_t nranges;
};

/* Scratch while indexing one CU. */
struct cu_build {
	struct cu_index *ci;
	struct fn_range *iv;      /* the raw, nested ranges */
	size_t niv, capiv;
	int nomem;
};

static int is_cplusplus(Dwarf_Die *cu)
{
	switch (dwarf_srclang(cu)) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
		return 1;
	}
	return 0;
}

static void cu_index_free(struct cu_index *ci)
{
	if (!ci)
		return;
	free(ci->nodes);
	free(ci->ranges);
	free(ci);
}

/* Can this DIE (transitively) hold code-bearing function DIEs? */
static int may_hold_functions(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		return 1;
	}
	return 0;
}

static void index_children(struct cu_build *b, Dwarf_Die *parent,
			   int32_t parent_node, uint32_t depth)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		int32_t node = parent_node;

		if (!may_hold_functions(tag))
			continue;
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			struct cu_index *ci = b->ci;
			size_t first = b->niv;

			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				if (grow((void **)&b->iv, &b->capiv, b->niv + 1,
					 sizeof(*b->iv)) < 0) {
					b->nomem = 1;
					return;
				}
				b->iv[b->niv].lo = lo;
				b->iv[b->niv].hi = hi;
				b->iv[b->niv].node = (int32_t)ci->nnodes;
				b->iv[b->niv].depth = depth + 1;
				b->niv++;
			}
			/* declarations and abstract instances have no code */
			if (b->niv > first) {
				struct fn_node *fn;

				if (grow((void **)&ci->nodes, &ci->capnodes, ci->nnodes + 1,
					 sizeof(*ci->nodes)) < 0) {
					b->nomem = 1;
					return;
				}
				fn = &ci->nodes[ci->nnodes];
				memset(fn, 0, sizeof(*fn));
				fn->die = child;
				fn->parent = parent_node;
				fn->is_inline = tag == DW_TAG_inlined_subroutine;
				node = (int32_t)ci->nnodes++;
			}
		}
		index_children(b, &child, node, depth + 1);
		if (b->nomem)
			return;
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int range_cmp(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->hi > y->hi ? -1 : x->hi < y->hi;
}

static int emit_range(struct cu_index *ci, size_t *cap, uint64_t lo,
		      uint64_t hi, int32_t node)
{
	if (lo >= hi)
		return 0;
	if (ci->nranges && ci->ranges[ci->nranges - 1].node == node &&
	    ci->ranges[ci->nranges - 1].hi == lo) {
		ci->ranges[ci->nranges - 1].hi = hi;
		return 0;
	}
	if (grow((void **)&ci->ranges, cap, ci->nranges + 1, sizeof(*ci->ranges)) < 0)
		return MT_E_NOMEM;
	ci->ranges[ci->nranges].lo = lo;
	ci->ranges[ci->nranges].hi = hi;
	ci->ranges[ci->nranges].node = node;
	ci->nranges++;
	return 0;
}

/*
 * Flattens the nested ranges (sorted outer first) into disjoint ones owned
 * by the innermost function: a sweep with a stack of open ranges.
 */
static int flatten(struct cu_build *b)
{
	struct cu_index *ci = b->ci;
	struct fn_range *st = NULL;
	size_t nst = 0, capst = 0, cap = 0, i;
	uint64_t cur = 0;
	int err = 0;

	if (b->niv > 1)
		qsort(b->iv, b->niv, sizeof(*b->iv), range_cmp);
	for (i = 0; i <= b->niv && !err; i++) {
		uint64_t at = i < b->niv ? b->iv[i].lo : UINT64_MAX;

		while (nst && st[nst - 1].hi <= at && !err) {
			if (cur < st[nst - 1].hi)
				err = emit_range(ci, &cap, cur, st[nst - 1].hi, st[nst - 1].node);
			if (cur < st[nst - 1].hi)
				cur = st[nst - 1].hi;
			nst--;
		}
		if (i == b->niv || err)
			break;
		if (nst && cur < at)
			err = emit_range(ci, &cap, cur, at, st[nst - 1].node);
		if (cur < at)
			cur = at;
		if (!err && grow((void **)&st, &capst, nst + 1, sizeof(*st)) < 0)
			err = MT_E_NOMEM;
		if (!err)
			st[nst++] = b->iv[i];
	}
	free(st);
	return err;
}

/* The index of the CU cudie of module sm, built on first use; NULL if OOM. */
static struct cu_index *cu_index_get(struct sym_module *sm, Dwarf_Die *cudie)
{
	uint64_t key = dwarf_dieoffset(cudie);
	struct cu_build b;
	struct cu_index *ci;
	Dwarf_Attribute attr;
	size_t j;

	if ((sm->ncus + 1) * 2 > sm->capcus) {
		size_t ncap = sm->capcus ? sm->capcus * 2 : 64, i;
		struct cu_slot *n = calloc(ncap, sizeof(*n));

		if (!n)
			return NULL;
		for (i = 0; i < sm->capcus; i++) {
			if (!sm->cus[i].ci)
				continue;
			j = hash64(sm->cus[i].off) & (ncap - 1);
			while (n[j].ci)
				j = (j + 1) & (ncap - 1);
			n[j] = sm->cus[i];
		}
		free(sm->cus);
		sm->cus = n;
		sm->capcus = ncap;
	}
	j = hash64(key) & (sm->capcus - 1);
	while (sm->cus[j].ci) {
		if (sm->cus[j].off == key)
			return sm->cus[j].ci;
		j = (j + 1) & (sm->capcus - 1);
	}

	ci = calloc(1, sizeof(*ci));
	if (!ci)
		return NULL;
	ci->cu = *cudie;
	ci->cplusplus = is_cplusplus(cudie);
	ci->comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	memset(&b, 0, sizeof(b));
	b.ci = ci;
	index_children(&b, &ci->cu, -1, 0);
	if (b.nomem || flatten(&b) < 0) {
		free(b.iv);
		cu_index_free(ci);
		return NULL;
	}
	free(b.iv);
	sm->cus[j].off = key;
	sm->cus[j].ci = ci;
	sm->ncus++;
	return ci;
}

/* The innermost function node covering DWARF address a, or -1. */
static int32_t cu_index_find(const struct cu_index *ci, uint64_t a)
{
	size_t lo = 0, hi = ci->nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ci->ranges[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || a >= ci->ranges[lo - 1].hi)
		return -1;
	return ci->ranges[lo - 1].node;
}

/* Reads a node's name and, for an inlined one, its call site. */
/*
 * GCC gives C++ functions with internal linkage (static, anonymous
 * namespace) no DW_AT_linkage_name; the ELF symbol at their entry still has
 * the mangled name, which shows the parameters ("grow_vector()") like every
 * other C++ frame. NULL when there is none.
 */
static const char *symtab_lookup(struct sym_module *sm, uint64_t pc, uint64_t *off);

static const char *cxx_symbol_name(struct mt_symbols *s, struct sym_module *sm,
				   Dwarf_Addr bias, Dwarf_Die *die, int *nomem)
{
	Dwarf_Attribute attr;
	Dwarf_Addr entry;
	uint64_t off;
	const char *name, *r;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_entrypc(die, &entry) != 0)
		return NULL;
	name = symtab_lookup(sm, entry + bias, &off);
	if (!name || off != 0 || name[0] != '_' || name[1] != 'Z')
		return NULL;
	r = demangled(s, name);
	if (!r)
		*nomem = 1;
	return r;
}

static int node_details(struct mt_symbols *s, struct sym_module *sm,
			struct cu_index *ci, struct fn_node *fn)
{
	Dwarf_Attribute attr;
	Dwarf_Word fidx = 0, cline = 0;
	const char *cfile = NULL;
	int nomem = 0;

	if (fn->done)
		return 0;
	if (!fn->is_inline && ci->cplusplus)
		fn->name = cxx_symbol_name(s, sm, ci->bias, &fn->die, &nomem);
	if (!fn->name && !nomem)
		fn->name = die_name(s, &fn->die, &nomem);
	if (fn->is_inline) {
		if (!ci->files_tried) {
			ci->files_tried = 1;
			if (dwarf_getsrcfiles(&ci->cu, &ci->files, NULL) != 0)
				ci->files = NULL;
		}
		if (ci->files &&
		    dwarf_formudata(dwarf_attr(&fn->die, DW_AT_call_file, &attr), &fidx) == 0)
			cfile = dwarf_filesrc(ci->files, fidx, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(&fn->die, DW_AT_call_line, &attr), &cline) == 0)
			fn->call_line = (unsigned)cline;
		if (cfile && !(fn->call_file = report_path(s, cfile, ci->comp_dir)))
			nomem = 1;
	}
	if (nomem)
		return MT_E_NOMEM;
	fn->done = 1;
	return 0;
}

/* ---- the ELF symbol table by address ---------------------------------------- */

/*
 * libdwfl's dwfl_module_addrinfo walks the whole symbol table for every
 * address (cc1's 70,000 symbols, once per distinct frame: 60% of a report
 * of a program without debug info). This sorts the table once per module
 * and answers with a binary search, with libdwfl's choice of symbol: among
 * the sized symbols that contain the address the closest one (highest
 * start), between equal starts the better binding (global, then weak,
 * then local), then the first in the table; with none, the closest
 * sizeless symbol below it, if no sized symbol lies between.
 */
static int sym_cmp(const void *pa, const void *pb)
{
	const struct elf_sym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static int bind_rank(uint8_t bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

/*
 * Sorts syms by address, ties in table order (sym_cmp's order): the
 * symbols come in table order, and an LSD radix sort is stable, so one by
 * address alone is that order. Hand-written because qsort's was most of
 * opening a module without DWARF: 28 M instructions for cc1's 29,000
 * symbols (a call per comparison), against 1 M here, passing only over the
 * address bytes that differ. 0, or MT_E_NOMEM (syms unchanged).
 */
static int syms_sort(struct elf_sym *syms, size_t n)
{
	struct elf_sym *tmp = malloc(n * sizeof(*tmp)), *src = syms, *dst = tmp, *t;
	uint64_t differ = 0;

	if (!tmp)
		return MT_E_NOMEM;
	for (size_t i = 1; i < n; i++)
		differ |= syms[i].addr ^ syms[0].addr;
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t at[256] = { 0 }, sum = 0;

		if (!((differ >> shift) & 0xff))
			continue;
		for (size_t i = 0; i < n; i++)
			at[(src[i].addr >> shift) & 0xff]++;
		for (size_t b = 0; b < 256; b++) {
			size_t c = at[b];

			at[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[at[(src[i].addr >> shift) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != syms)
		memcpy(syms, src, n * sizeof(*syms));
	free(tmp);
	return 0;
}

static void symtab_build(struct sym_module *sm)
{
	int n = dwfl_module_getsymtab(sm->mod);
	size_t k = 0;

	sm->syms_built = 1;
	if (n <= 0 || !(sm->syms = calloc((size_t)n, sizeof(*sm->syms))))
		return;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(sm->mod, i, &sym, &addr, &shndx,
							   NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !*name || shndx == SHN_UNDEF || shndx == SHN_ABS || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		sm->syms[k].addr = addr;
		sm->syms[k].size = sym.st_size;
		sm->syms[k].name = name;
		sm->syms[k].order = (uint32_t)i;
		sm->syms[k].bind = (uint8_t)GELF_ST_BIND(sym.st_info);
		k++;
	}
	sm->nsyms = k;
	if (k > 1 && syms_sort(sm->syms, k) < 0)
		qsort(sm->syms, k, sizeof(*sm->syms), sym_cmp);
}

/* The name of the symbol for pc and pc's offset in it, or NULL. */
static const char *symtab_lookup(struct sym_module *sm, uint64_t pc, uint64_t *off)
{
	const struct elf_sym *best = NULL, *sizeless = NULL;
	size_t lo = 0, hi;

	if (!sm->syms_built)
		symtab_build(sm);
	hi = sm->nsyms;
	while (lo < hi) {          /* the first symbol above pc */
		size_t mid = lo + (hi - lo) / 2;

		if (sm->syms[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Downwards: the first containing sized symbol is the closest; equal
	 * starts sort by table order, so keep the better binding, else the
	 * first. */
	for (size_t i = lo; i-- > 0;) {
		const struct elf_sym *e = &sm->syms[i];

		if (best && e->addr != best->addr)
			break;
		if (e->size && pc - e->addr < e->size) {
			/* downwards, so the later in the table is met first:
			 * an equal binding replaces it */
			if (!best || bind_rank(e->bind) <= bind_rank(best->bind))
				best = e;
		} else if (!best && !e->size && !sizeless) {
			sizeless = e;
		} else if (!best && e->size && !sizeless) {
			/* a sized symbol below that does not reach pc */
			if (lo - i > 64)
				break;
		}
		if (!best && lo - i > 64)
			break;
	}
	if (!best)
		best = sizeless;
	if (!best)
		return NULL;
	*off = pc - best->addr;
	return best->name;
}

/* ---- resolution ------------------------------------------------------------ */

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
	struct cu_index *ci = NULL;
	Dwarf_Die *cudie;
	Dwarf_Addr bias = 0;
	Dwfl_Line *line;
	int32_t node = -1;
	int n = 0, i, nomem = 0;

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
		ci = cu_index_get(sm, cudie);
		if (!ci)
			return MT_E_NOMEM;
		ci->bias = bias;
		node = cu_index_find(ci, pc - bias);
	}
	/*
	 * Innermost first: each inlined function's call site is where its
	 * caller (the enclosing function node) stands.
	 */
	while (node >= 0 && n < MAX_INLINE) {
		struct fn_node *fn = &ci->nodes[node];

		if (node_details(s, sm, ci, fn) < 0)
			return MT_E_NOMEM;
		out[n].function = fn->name;
		if (n > 0)
			out[n - 1].inlined = 1;
		n++;
		if (!fn->is_inline || fn->parent < 0 || n == MAX_INLINE)
			break;
		out[n].file = fn->call_file;
		out[n].line = fn->call_line;
		node = fn->parent;
	}

	if (n == 0 || !out[0].function) {
		/* no DWARF function: the ELF symbol table names it */
		uint64_t off;
		const char *name = symtab_lookup(sm, pc, &off);

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

			out[0].file = report_path(s, file, cd ? cd : ci ? ci->comp_dir : NULL);
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
	settle(s);
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
	settle(s);
	if (lines)
		*lines = (const char *const *)s->warnings;
	return s->nwarn;
}

/*
 * Starts opening, on a thread of its own, the modules holding the n
 * addresses (their files, build-ids, debug info and, without DWARF, symbol
 * tables), so that resolving them later finds that done. Every other call
 * on s waits for it. Modules without recorded segments are left to
 * resolving (finding them means opening them). Returns 0 (also when no
 * thread could be started: resolving then opens them itself) or MT_E_NOMEM.
 */
int mt_symbols_prefetch(struct mt_symbols *s, const uint64_t *ips, size_t n)
{
	unsigned char *seen;
	int err;

	if (!s)
		return MT_E_ARG;
	settle(s);
	if (!s->nmods)
		return 0;
	if (s->segs_dirty && (err = segs_sort(s)) < 0)
		return err;
	seen = calloc(s->nmods, 1);
	s->warm_mods = malloc(s->nmods * sizeof(*s->warm_mods));
	if (!seen || !s->warm_mods) {
		free(seen);
		free(s->warm_mods);
		s->warm_mods = NULL;
		return MT_E_NOMEM;
	}
	s->nwarm = 0;
	for (size_t i = 0; i < n; i++) {
		/* the recorded segments only: nothing is opened here */
		long mi = find_recorded(s, ips[i]);

		if (mi < 0 || seen[mi] || s->mods[mi].state != MOD_UNOPENED)
			continue;
		seen[mi] = 1;
		s->warm_mods[s->nwarm++] = (size_t)mi;
	}
	free(seen);
	if (s->nwarm && pthread_create(&s->warm, NULL, warm_main, s) == 0) {
		s->warming = 1;
		return 0;
	}
	free(s->warm_mods);
	s->warm_mods = NULL;
	s->nwarm = 0;
	return 0;
}
