/*
 * symbols.h - offline symbolization of recorded addresses with elfutils libdw.
 *
 * Built from the module map of a log (MODULE records): each module is opened
 * from its recorded path at its recorded load bias; separate debug info is
 * found by build-id (/usr/lib/debug/.build-id/..) and .gnu_debuglink. One
 * address resolves to one or more frames: the inlined functions at that
 * address, innermost first, then the function they were inlined into. C++
 * names are demangled. Every distinct address is resolved once and cached.
 *
 * Not here: which frames to show (filters), tree building (lib/agg.h).
 */
#ifndef MT_SYMBOLS_H
#define MT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct mt_symbols;
struct mt_module;

/* One frame of a resolved address. Strings live as long as the mt_symbols. */
struct mt_frame {
	const char *function;  /* demangled name; NULL when unknown */
	const char *file;      /* source file (as in DWARF, may be relative); NULL when unknown */
	unsigned line;         /* 0 when unknown */
	const char *module;    /* module path; NULL when no module contains the address */
	uint64_t offset;       /* ip - module load bias (for module+0xOFF);
				  the ip itself when module is NULL */
	int inlined;           /* 1 if this frame was inlined into the next one */
};

/* A new, empty symbolizer. Returns NULL when out of memory. */
struct mt_symbols *mt_symbols_new(void);

/*
 * Sets where separate debug info is searched, in libdw's debuginfo_path
 * syntax (libdwfl.h, dwfl_standard_find_debuginfo): colon-separated
 * directories; an absolute DIR is searched by build-id as
 * DIR/.build-id/xx/yyyy.debug and by .gnu_debuglink as DIR/<module dir>/;
 * an empty element means the module's own directory, a relative one a
 * subdirectory of it. NULL restores libdw's default ":.debug:/usr/lib/debug".
 * mt_symbols_new() starts from the environment variable
 * MEMTRAIL_DEBUGINFO_PATH when it is set. Applies to modules first opened
 * after the call. Returns 0 or a negative MT_E_*.
 */
int mt_symbols_set_debuginfo_path(struct mt_symbols *s, const char *path);

/*
 * Adds a module of the log. Opening its file is deferred until an address
 * inside it is first resolved. Returns 0 or a negative MT_E_*.
 */
int mt_symbols_add_module(struct mt_symbols *s, const struct mt_module *m);

/*
 * Resolves a return address (the ip as recorded: the function looks up
 * ip - 1) to *nframes >= 1 frames, innermost first; *frames stays valid as
 * long as s. A module that cannot be read, or whose build-id differs from
 * the recorded one, yields one frame with function NULL (shown as
 * module+0xOFF). Returns 0, or a negative MT_E_* (out of memory).
 */
int mt_symbols_resolve(struct mt_symbols *s, uint64_t ip,
		       const struct mt_frame **frames, size_t *nframes);

/*
 * Formats a frame the way reports show it: "function [file:line]",
 * "function", or "module+0xOFF" (basename of the module), or "0xADDR".
 * Writes at most size bytes including the NUL; returns the length it needed.
 */
size_t mt_frame_format(const struct mt_frame *f, char *buf, size_t size);

/*
 * Warnings collected so far (one line each, no prefix), e.g. a module whose
 * build-id on disk differs from the recorded one, or that cannot be opened;
 * each module is warned about once. With DEBUGINFOD_URLS set, also one line
 * per module with a build-id whose debug info was not found locally: the
 * file debuginfod gave (in libdebuginfod's cache), or why none came. Returns the count; *lines owned by s.
 */
size_t mt_symbols_warnings(const struct mt_symbols *s, const char *const **lines);

/*
 * Starts opening, on a thread of the symbolizer's own, the modules holding
 * the n addresses (files, build-ids, debug info: most of symbolization's
 * cost), so that a caller can do other work meanwhile. Every other call on
 * s waits until that is done. Returns 0 (also when no thread could start:
 * resolving then opens the modules itself) or a negative MT_E_*.
 */
int mt_symbols_prefetch(struct mt_symbols *s, const uint64_t *ips, size_t n);

/* Frees the symbolizer; NULL is a no-op. */
void mt_symbols_free(struct mt_symbols *s);

#endif
