/*
 * segments.c - the files of a bounded log (MEMTRAIL_MAX_SIZE): the ring of
 * segments FILE.seg1, FILE.seg2, ... (lib/ring.h names them), of which the
 * recorder keeps the newest within the size asked for.
 *
 * For: clearing what an earlier run left under the name, opening the next
 * segment, deleting the oldest. No heap, no stdio: open, unlink and
 * getdents64 only (a forked child or an exit path may call it). Not for:
 * what goes in a segment, or when one begins (core.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recorder.h"
#include "ring.h"

/* A getdents64 entry, as the kernel writes it. */
struct seg_dirent64 {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* Deletes FILE and every segment of FILE: an earlier run's, which a
 * reader would otherwise take for this one's. */
static void clear_stale(const char *path)
{
	char dir[4096], buf[4096];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dl = slash ? (size_t)(slash - path) : 0;
	int fd;

	(void)unlink(path);
	if (dl >= sizeof(dir))
		return;
	if (slash) {
		memcpy(dir, path, dl ? dl : 1);
		dir[dl ? dl : 1] = '\0';
	} else {
		dir[0] = '.';
		dir[1] = '\0';
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));

		if (n <= 0)
			break;
		for (long off = 0; off < n;) {
			struct seg_dirent64 *d = (struct seg_dirent64 *)(void *)(buf + off);

			off += d->reclen;
			if (mt_ring_number(base, d->name))
				(void)unlinkat(fd, d->name, 0);
		}
	}
	close(fd);
}

int mt_segs_start(struct mt_segs *g, const char *path, uint64_t max)
{
	size_t len = strlen(path);
	int saved = errno;

	memset(g, 0, sizeof(*g));
	/* room for the longest number after FILE.seg */
	if (len + strlen(MT_RING_SUFFIX) + 21 > sizeof(g->base))
		return -1;
	memcpy(g->base, path, len + 1);
	g->max = max;
	g->target = max / MT_SEGS_PER_MAX;
	clear_stale(path);
	errno = saved;
	return 0;
}

int mt_segs_open_next(struct mt_segs *g)
{
	char name[sizeof(g->cur)];
	int fd;

	if (mt_ring_name(g->base, g->last + 1, name, sizeof(name)) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	memcpy(g->cur, name, sizeof(name));
	g->last++;
	if (!g->first)
		g->first = g->last;
	g->size[g->last % MT_SEGS_KEEP] = 0;
	return fd;
}

void mt_segs_trim(struct mt_segs *g, uint64_t cur_size)
{
	char name[sizeof(g->cur)];
	uint64_t total = 0;
	int saved = errno;

	g->size[g->last % MT_SEGS_KEEP] = cur_size;
	for (uint64_t n = g->first; n && n <= g->last; n++)
		total += g->size[n % MT_SEGS_KEEP];
	while (g->first < g->last &&
	       (total > g->max || g->last - g->first + 1 > MT_SEGS_KEEP)) {
		total -= g->size[g->first % MT_SEGS_KEEP];
		if (mt_ring_name(g->base, g->first, name, sizeof(name)) == 0)
			(void)unlink(name);
		g->first++;
	}
	errno = saved;
}
