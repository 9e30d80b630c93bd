/*
 * outpath.h - the log's path from the -o / MEMTRAIL_OUTPUT template: the
 * placeholders and the rule that makes it absolute. One definition for
 * `memtrail record` (viewer/cmd-record.c) and the recorder
 * (recorder/config.c), so that both give a template the same meaning:
 *   %p  the process id
 *   %e  the program's name: the last part of its argv[0]
 *   %t  the time, seconds since the Unix epoch
 *   %n  the smallest counter from 0 whose file does not exist yet
 *   %%  a percent sign; any other %X stays as written.
 * A relative result is made absolute against the working directory at the
 * time, so that a child that changes directory writes beside its parent.
 *
 * For: both sides; nothing here allocates, prints or uses stdio, so it runs
 * inside the recorded program. Not for: the checks on the file (opening it
 * is the caller's).
 */
#ifndef MT_OUTPATH_H
#define MT_OUTPATH_H

#include <stddef.h>
#include <stdint.h>

/*
 * Expands tmpl into out (outlen bytes) for process pid running the program
 * whose argv[0] is prog, at unix time t, with n for %n; *has_n is set when
 * tmpl uses %n. Returns 0, or -1 when the result does not fit.
 */
int mt_outpath_expand(const char *tmpl, const char *prog, long pid, int64_t t, long n,
		      char *out, size_t outlen, int *has_n);

/*
 * The output path: tmpl expanded with the first n whose file does not
 * exist (n = 0 when tmpl has no %n), then made absolute. Returns 0, or -1
 * when it does not fit or the working directory is unknown.
 */
int mt_outpath_resolve(const char *tmpl, const char *prog, long pid, int64_t t,
		       char *out, size_t outlen);

/* Makes path (len bytes of room) absolute against the working directory.
 * Returns 0, or -1 when it does not fit or getcwd fails. */
int mt_outpath_absolute(char *path, size_t len);

#endif
