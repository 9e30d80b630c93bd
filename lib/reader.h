/*
 * reader.h - the low layer of reading an event log: the header and the
 * decompressed chunks, one at a time (see format.h).
 *
 * The reader checks everything the container says (magics, version, sizes,
 * zstd frame size, content size and checksum) and hands out the records of
 * one chunk as a byte buffer; memory is bounded by one chunk. It does not
 * decode records: that is lib/replay.c, and tools use lib/replay.h, not
 * this.
 */
#ifndef MT_READER_H
#define MT_READER_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

struct mt_reader;

/* The raw header fields (format.h HEADER). cmdline is owned by the reader. */
struct mt_reader_header {
	unsigned version;
	unsigned pointer_size;
	unsigned flags;
	uint32_t pid;
	uint64_t start_realtime_ns;
	const uint8_t *cmdline;  /* L bytes: arguments each ended by a NUL */
	size_t cmdline_len;
};

/*
 * Opens path and checks its header. When there is no file path but the
 * segments of a bounded log of that name (lib/ring.h), opens them as one
 * log, from the oldest. Returns 0 and *out, or a negative MT_E_*:
 * MT_E_IO (errno set), MT_E_MAGIC, MT_E_VERSION, MT_E_RANGE (a size beyond
 * the format's limits), MT_E_CORRUPT, MT_E_TRUNCATED (file ends inside the
 * header), MT_E_NOMEM. *err_offset, if not NULL, gets the offset of the
 * problem on failure.
 */
int mt_reader_open(const char *path, struct mt_reader **out, uint64_t *err_offset);

/* The header read by mt_reader_open; owned by the reader. */
const struct mt_reader_header *mt_reader_header(const struct mt_reader *r);

/*
 * Reads the next chunk. Returns 1 with *data / *len set to its decompressed
 * records (valid until the next call) and *offset (if not NULL) to the file
 * offset of the chunk; 0 at a clean end of file; or a negative MT_E_*:
 * MT_E_TRUNCATED (a partial chunk at the end), MT_E_CORRUPT (bad chunk magic,
 * sizes that disagree), MT_E_RANGE (absurd sizes), MT_E_ZSTD (decompression
 * or checksum failure), MT_E_IO, MT_E_NOMEM. After an error, the same error
 * is returned again; mt_reader_error_offset() says where it is.
 */
int mt_reader_next(struct mt_reader *r, const uint8_t **data, size_t *len,
		   uint64_t *offset);

/* The file offset of the last error, or of the chunk being read. */
uint64_t mt_reader_error_offset(const struct mt_reader *r);

/* The offset just after the last chunk read successfully (or the header). */
uint64_t mt_reader_good_bytes(const struct mt_reader *r);

/* The size of the file in bytes (0 if it is not a regular file). */
uint64_t mt_reader_file_size(const struct mt_reader *r);

/*
 * The log's last chunk, without reading the others: reads the chunk
 * headers from the first chunk to the last (seeking over their data) and
 * decompresses only the last one. Returns 1 with *data / *len set to its
 * records (valid until the next mt_reader_next or mt_reader_last_chunk)
 * and *offset (if not NULL) to its file offset, when the file ends with a
 * complete chunk; 0 when it does not (cut short, a chunk that does not
 * check); or MT_E_IO / MT_E_NOMEM. Chunks before the last are not
 * decompressed, so their content is not checked. Rewinds the reader.
 */
int mt_reader_last_chunk(struct mt_reader *r, const uint8_t **data, size_t *len,
			 uint64_t *offset);

/*
 * For a log still being written: takes the file's size again and, when
 * reading had met the end of the file (mt_reader_next returned 0) or a
 * chunk cut short by it (MT_E_TRUNCATED: not written whole yet), goes back
 * to the offset after the last good chunk, so that the next
 * mt_reader_next reads what was appended (that chunk whole, or the same
 * error again while it is not). Other errors stay. Returns 1 when there
 * are bytes after the last good chunk to read, 0 when not, or MT_E_IO.
 */
int mt_reader_refresh(struct mt_reader *r);

/* Goes back to the first chunk (and takes the file's size again: a log
 * still being written grows). Returns 0 or a negative MT_E_*. */
int mt_reader_rewind(struct mt_reader *r);

/*
 * A bounded log (lib/ring.h): how many segments after the first reading
 * has gone on to since the last rewind (0 for a single file); a chunk
 * read after this number changed is its segment's first. And the number
 * of the segment open (its name's; 0 for a single file).
 */
unsigned mt_reader_segment(const struct mt_reader *r);
uint64_t mt_reader_ring_segment(const struct mt_reader *r);

/* Closes the file and frees the reader; NULL is a no-op. */
void mt_reader_free(struct mt_reader *r);

#endif
