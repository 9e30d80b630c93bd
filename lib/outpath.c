/*
 * outpath.c - the log's path from its template (see outpath.h). No
 * allocation, no stdio: the recorder calls it inside the program.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outpath.h"

/* Appends n bytes of s at *pos; sets *over when they do not fit. */
static void put(char *out, size_t outlen, size_t *pos, const char *s, size_t n, int *over)
{
	if (*over || *pos + n >= outlen) {
		*over = 1;
		return;
	}
	memcpy(out + *pos, s, n);
	*pos += n;
	out[*pos] = '\0';
}

static void put_num(char *out, size_t outlen, size_t *pos, int64_t v, int *over)
{
	char tmp[24];
	size_t k = sizeof(tmp);
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	do {
		tmp[--k] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[--k] = '-';
	put(out, outlen, pos, tmp + k, sizeof(tmp) - k, over);
}

int mt_outpath_expand(const char *tmpl, const char *prog, long pid, int64_t t, long n,
		      char *out, size_t outlen, int *has_n)
{
	const char *base = prog ? strrchr(prog, '/') : NULL;
	size_t pos = 0;
	int over = outlen == 0;

	base = base ? base + 1 : prog ? prog : "";
	if (outlen)
		out[0] = '\0';
	for (const char *p = tmpl; *p && !over; p++) {
		if (*p != '%' || !p[1]) {
			put(out, outlen, &pos, p, 1, &over);
			continue;
		}
		switch (*++p) {
		case 'p': put_num(out, outlen, &pos, pid, &over); break;
		case 't': put_num(out, outlen, &pos, t, &over); break;
		case 'n':
			*has_n = 1;
			put_num(out, outlen, &pos, n, &over);
			break;
		case 'e': put(out, outlen, &pos, base, strlen(base), &over); break;
		case '%': put(out, outlen, &pos, "%", 1, &over); break;
		default: put(out, outlen, &pos, p - 1, 2, &over); break;
		}
	}
	return over ? -1 : 0;
}

int mt_outpath_absolute(char *path, size_t len)
{
	char cwd[4096];
	size_t c, p = strlen(path);

	if (path[0] == '/')
		return 0;
	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	c = strlen(cwd);
	if (c + 1 + p + 1 > len)
		return -1;
	memmove(path + c + 1, path, p + 1);
	memcpy(path, cwd, c);
	path[c] = '/';
	return 0;
}

int mt_outpath_resolve(const char *tmpl, const char *prog, long pid, int64_t t,
		       char *out, size_t outlen)
{
	struct stat st;

	for (long n = 0; n < 1000000; n++) {
		int has_n = 0;

		if (mt_outpath_expand(tmpl, prog, pid, t, n, out, outlen, &has_n) < 0)
			return -1;
		if (!has_n || (lstat(out, &st) < 0 && errno == ENOENT))
			return mt_outpath_absolute(out, outlen);
	}
	return -1;
}
