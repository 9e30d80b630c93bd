/*
 * error.h - error codes of lib/. lib/ never prints and never exits: functions
 * return 0 (or a count) on success and a negative MT_E_* code on failure.
 */
#ifndef MT_ERROR_H
#define MT_ERROR_H

enum {
	MT_OK = 0,
	MT_E_NOMEM = -1,     /* out of memory */
	MT_E_IO = -2,        /* read/write failed (errno kept by the caller) */
	MT_E_MAGIC = -3,     /* not a memtrail log */
	MT_E_VERSION = -4,   /* unknown format version */
	MT_E_CORRUPT = -5,   /* malformed data */
	MT_E_TRUNCATED = -6, /* ended in the middle of the header */
	MT_E_ZSTD = -7,      /* zstd error */
	MT_E_RANGE = -8,     /* a size or count beyond the format's limits */
	MT_E_ARG = -9,       /* invalid argument */
	MT_E_NOTFOUND = -10, /* no such snapshot / point / item */
	MT_E_NOTREG = -11,   /* a log that is not a regular file (FIFO, device) */
	MT_E_GAP = -12,      /* a bounded log's next segment is gone (lib/ring.h) */
};

/* A static message for an MT_E_* code; never NULL. */
const char *mt_strerror(int err);

#endif
