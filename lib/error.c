/*
 * error.c - messages for the MT_E_* codes.
 */
#include "error.h"

const char *mt_strerror(int err)
{
	switch (err) {
	case MT_OK:          return "success";
	case MT_E_NOMEM:     return "out of memory";
	case MT_E_IO:        return "input/output error";
	case MT_E_MAGIC:     return "not a memtrail log (bad magic)";
	case MT_E_VERSION:   return "unsupported log format version";
	case MT_E_CORRUPT:   return "corrupt log data";
	case MT_E_TRUNCATED: return "log ends inside its header";
	case MT_E_ZSTD:      return "zstd decompression failed";
	case MT_E_RANGE:     return "size or count out of range";
	case MT_E_ARG:       return "invalid argument";
	case MT_E_NOTFOUND:  return "not found";
	case MT_E_NOTREG:    return "not a regular file";
	case MT_E_GAP:       return "a segment of the bounded log is missing";
	}
	return "unknown error";
}
