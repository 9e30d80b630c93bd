/*
 * ring.c - naming and finding the segments of a bounded log (ring.h).
 *
 * Not for: reading or writing them. mt_ring_name and mt_ring_number use
 * no heap (the recorder links them); mt_ring_list is for readers only.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ring.h"

int mt_ring_name(const char *path, uint64_t n, char *buf, size_t size)
{
	char num[24];
	size_t len = strlen(path), sl = strlen(MT_RING_SUFFIX), k = sizeof(num);

	do {
		num[--k] = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	if (len + sl + (sizeof(num) - k) + 1 > size)
		return -1;
	memcpy(buf, path, len);
	memcpy(buf + len, MT_RING_SUFFIX, sl);
	memcpy(buf + len + sl, num + k, sizeof(num) - k);
	buf[len + sl + sizeof(num) - k] = '\0';
	return 0;
}

uint64_t mt_ring_number(const char *base, const char *name)
{
	size_t bl = strlen(base), sl = strlen(MT_RING_SUFFIX);
	uint64_t n = 0;
	const char *p;

	if (strncmp(name, base, bl) || strncmp(name + bl, MT_RING_SUFFIX, sl))
		return 0;
	p = name + bl + sl;
	if (*p < '1' || *p > '9')
		return 0;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || n > (UINT64_MAX - 9) / 10)
			return 0;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	return n;
}

static int by_number(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int mt_ring_list(const char *path, uint64_t **out, size_t *n)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *dir;
	DIR *d;
	struct dirent *e;
	uint64_t *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!*base)
		return 0;
	if (slash) {
		dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
		if (!dir)
			return MT_E_NOMEM;
	} else {
		dir = strdup(".");
		if (!dir)
			return MT_E_NOMEM;
	}
	d = opendir(dir);
	free(dir);
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : MT_E_IO;
	while ((e = readdir(d))) {
		uint64_t num = mt_ring_number(base, e->d_name);

		if (!num)
			continue;
		if (cnt == cap) {
			cap = cap ? 2 * cap : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = MT_E_NOMEM;
				break;
			}
			v = nv;
		}
		v[cnt++] = num;
	}
	closedir(d);
	if (err) {
		free(v);
		return err;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), by_number);
	*out = v;
	*n = cnt;
	return 0;
}
