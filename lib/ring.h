/*
 * ring.h - the files of a bounded log (memtrail record --max-size): a ring
 * of segments FILE.seg1, FILE.seg2, ... of which the recorder keeps the
 * newest (format.h BASE), and that readers open as one log under the name
 * FILE.
 *
 * For: naming the segments and finding them on disk, the one place both
 * sides agree on it (the recorder names and deletes them, lib/reader.c
 * finds them). Not for: their content (lib/writer.c, lib/reader.c), when
 * to start or drop one (recorder/core.c).
 */
#ifndef MT_RING_H
#define MT_RING_H

#include <stddef.h>
#include <stdint.h>

/* The smallest size of a bounded log: a few segments of some chunks each. */
#define MT_RING_MIN_SIZE (1u << 20)

/* What follows FILE in a segment's name, before its number (1, 2, ...). */
#define MT_RING_SUFFIX ".seg"

/*
 * Segment n of the log path into buf ("path.seg<n>"). Returns 0, or -1
 * when it does not fit in size bytes. Allocates nothing (the recorder's
 * hot side may call it).
 */
int mt_ring_name(const char *path, uint64_t n, char *buf, size_t size);

/*
 * The segment number that the directory entry name has in the ring of the
 * log whose file name (without directory) is base: n for "base.seg<n>"
 * (n >= 1, decimal, no leading zero), 0 for any other name. Allocates
 * nothing.
 */
uint64_t mt_ring_number(const char *base, const char *name);

/*
 * The segments of the log path on disk, by increasing number: *out (the
 * caller frees it) holds *n of them, none when path has no segments (then
 * *out is NULL). Returns 0, or MT_E_IO (the directory cannot be read,
 * errno set) or MT_E_NOMEM.
 */
int mt_ring_list(const char *path, uint64_t **out, size_t *n);

#endif
