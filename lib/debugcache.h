/*
 * debugcache.h - a cache of uncompressed copies of separate debug files,
 * by build-id, so that symbolization stops inflating the same DWARF on
 * every report.
 *
 * Distributions ship debug files (Debian's libc6-dbg, *-dbgsym packages)
 * with compressed .debug_* sections (SHF_COMPRESSED, or the older .zdebug_*
 * ones), and libdw inflates every one of them whole each time it opens the
 * file. The cache keeps, per build-id, a copy of such a file with every
 * section stored uncompressed, which libdw reads through mmap at no cost.
 * Like perf's ~/.debug and debuginfod's client cache, it lives in the
 * user's cache directory:
 *   $MEMTRAIL_DEBUG_CACHE   when set ("" or "off": no cache)
 *   $XDG_CACHE_HOME/memtrail/debug
 *   $HOME/.cache/memtrail/debug
 *
 * A copy is checked against the original's build-id and section table,
 * not its contents: the directory is trusted as the user's own (made 0700).
 * A report killed while writing one leaves its temporary file
 * (<build-id>.debug.XXXXXX) behind.
 *
 * For: lib/symbols.c's debug-info callback, which hands over each debug
 * file libdwfl found. Not for: finding debug files (libdwfl's search and
 * debuginfod do that), files whose sections are not compressed (read as
 * they are), or evicting old copies (the directory can be removed at any
 * time). Nothing here prints; every failure falls back to the file given.
 */
#ifndef MT_DEBUGCACHE_H
#define MT_DEBUGCACHE_H

#include <stddef.h>

/* Copies larger than this (uncompressed sections, in bytes) are not made. */
#define MT_DEBUGCACHE_MAX_BYTES ((size_t)1 << 30)

/*
 * The cache directory chosen by the environment (see above) into buf
 * (size bytes). Returns 0, or -1 when there is none: turned off, no usable
 * XDG_CACHE_HOME or HOME, or a path that does not fit.
 */
int mt_debugcache_dir(char *buf, size_t size);

/*
 * fd is an open debug file, expected to have the build-id build_id
 * (build_id_len bytes). When it has and it has compressed sections,
 * returns a descriptor of its uncompressed copy in dir: the one there when
 * it is valid (an ELF file with the same build-id and the same sections,
 * none compressed), else one written now (to a temporary file renamed into
 * place, so that a concurrent reader never sees half a file; a corrupt or
 * foreign copy is replaced), and closes fd. Otherwise, or on any failure
 * (dir unwritable, disk full, a copy past MT_DEBUGCACHE_MAX_BYTES, a file
 * libelf cannot decompress), returns fd itself. dir NULL: fd. Safe on any
 * thread, for distinct files.
 */
int mt_debugcache_swap(const char *dir, int fd, const void *build_id, size_t build_id_len);

#endif
