/*
 * debugcache.c - uncompressed copies of compressed debug files, by
 * build-id (see debugcache.h), made with libelf: every section copied in
 * order, the compressed ones inflated (elf_compress / elf_compress_gnu),
 * the layout left to libelf.
 *
 * What it costs and saves: see lib/symbols.c, cached_debuginfo.
 *
 * Not for: choosing or finding debug files, reading DWARF. Nothing here
 * prints; every failure leaves the caller with the file it had.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debugcache.h"
#include "fmt.h"

#define BUILD_ID_MAX 64

int mt_debugcache_dir(char *buf, size_t size)
{
	const char *env = getenv("MEMTRAIL_DEBUG_CACHE");
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (env) {
		if (!*env || strcmp(env, "off") == 0)
			return -1;
		n = snprintf(buf, size, "%s", env);
	} else if (xdg && xdg[0] == '/') {
		/* the XDG base directory spec: a relative one is ignored */
		n = snprintf(buf, size, "%s/memtrail/debug", xdg);
	} else if (home && home[0] == '/') {
		n = snprintf(buf, size, "%s/.cache/memtrail/debug", home);
	} else {
		return -1;
	}
	return n > 0 && (size_t)n < size ? 0 : -1;
}

/* One section of the original file, as the copy must have it. */
struct sect {
	const char *name;         /* the original's (owned by its Elf) */
	GElf_Word name_off;       /* its offset in .shstrtab */
	GElf_Word type;
	uint64_t size;            /* uncompressed */
	int compressed;           /* SHF_COMPRESSED */
	int gnu;                  /* .zdebug_*: GNU-compressed, .debug_* in the copy */
};

/* The debug file handed in. */
struct orig {
	Elf *elf;
	size_t shnum, shstrndx;
	struct sect *sects;       /* [shnum]; [0] unused */
	size_t ncompressed;
	unsigned char id[BUILD_ID_MAX];
	size_t idlen;
};

/*
 * Reads o->elf's section table and build-id. Returns 0, or -1 for a file
 * not to cache: no build-id, too many sections for a plain e_shstrndx, a
 * .zdebug_* section libdw could not read either, or too large a copy.
 */
static int scan(struct orig *o, int fd)
{
	uint64_t total = 0;
	const void *id;
	ssize_t idlen;

	if (!o->elf || elf_kind(o->elf) != ELF_K_ELF ||
	    elf_getshdrnum(o->elf, &o->shnum) < 0 || o->shnum < 2 ||
	    o->shnum >= SHN_LORESERVE || elf_getshdrstrndx(o->elf, &o->shstrndx) < 0)
		return -1;
	idlen = dwelf_elf_gnu_build_id(o->elf, &id);
	if (idlen <= 0 || idlen > BUILD_ID_MAX)
		return -1;
	memcpy(o->id, id, (size_t)idlen);
	o->idlen = (size_t)idlen;
	o->sects = calloc(o->shnum, sizeof(*o->sects));
	if (!o->sects)
		return -1;
	for (size_t i = 1; i < o->shnum; i++) {
		struct sect *t = &o->sects[i];
		Elf_Scn *scn = elf_getscn(o->elf, i);
		GElf_Shdr sh;
		GElf_Chdr ch;

		if (!scn || !gelf_getshdr(scn, &sh) ||
		    !(t->name = elf_strptr(o->elf, o->shstrndx, sh.sh_name)))
			return -1;
		t->name_off = sh.sh_name;
		t->type = sh.sh_type;
		t->size = sh.sh_size;
		if (sh.sh_type == SHT_NOBITS)
			continue;
		if (sh.sh_flags & SHF_COMPRESSED) {
			if (!gelf_getchdr(scn, &ch))
				return -1;
			t->compressed = 1;
			t->size = ch.ch_size;
		} else if (strncmp(t->name, ".zdebug", 7) == 0) {
			unsigned char h[12];

			/* "ZLIB" and the size, 64-bit big-endian */
			if (pread(fd, h, sizeof(h), (off_t)sh.sh_offset) != (ssize_t)sizeof(h) ||
			    memcmp(h, "ZLIB", 4) != 0)
				return -1;
			t->gnu = 1;
			t->size = 0;
			for (int k = 4; k < 12; k++)
				t->size = t->size << 8 | h[k];
		}
		o->ncompressed += t->compressed || t->gnu;
		if (t->size > MT_DEBUGCACHE_MAX_BYTES - total)
			return -1;
		total += t->size;
	}
	return 0;
}

/*
 * Whether cfd is a copy of o: an ELF file of the same class and machine
 * with o's build-id, o's sections (same names, with .zdebug_* as .debug_*;
 * same types; uncompressed sizes), none compressed, all inside the file.
 */
static int valid(const struct orig *o, int cfd)
{
	GElf_Ehdr oe, ce;
	struct stat st;
	size_t shnum, shstrndx;
	const void *id;
	Elf *c;
	int ok = 0;

	if (fstat(cfd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	c = elf_begin(cfd, ELF_C_READ_MMAP, NULL);
	if (!c || elf_kind(c) != ELF_K_ELF || !gelf_getehdr(c, &ce) ||
	    !gelf_getehdr(o->elf, &oe) || gelf_getclass(c) != gelf_getclass(o->elf) ||
	    ce.e_machine != oe.e_machine || ce.e_ident[EI_DATA] != oe.e_ident[EI_DATA] ||
	    elf_getshdrnum(c, &shnum) < 0 || shnum != o->shnum ||
	    elf_getshdrstrndx(c, &shstrndx) < 0 || shstrndx != o->shstrndx ||
	    dwelf_elf_gnu_build_id(c, &id) != (ssize_t)o->idlen ||
	    memcmp(id, o->id, o->idlen) != 0)
		goto out;
	for (size_t i = 1; i < shnum; i++) {
		const struct sect *t = &o->sects[i];
		Elf_Scn *scn = elf_getscn(c, i);
		const char *name;
		GElf_Shdr sh;

		if (!scn || !gelf_getshdr(scn, &sh) || (sh.sh_flags & SHF_COMPRESSED) ||
		    !(name = elf_strptr(c, shstrndx, sh.sh_name)) || sh.sh_type != t->type ||
		    sh.sh_size != t->size)
			goto out;
		if (t->gnu ? name[0] != '.' || strcmp(name + 1, t->name + 2) != 0
			   : strcmp(name, t->name) != 0)
			goto out;
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > (uint64_t)st.st_size ||
		     sh.sh_size > (uint64_t)st.st_size - sh.sh_offset))
			goto out;
	}
	ok = 1;
out:
	elf_end(c);
	return ok;
}

/* mkdir -p, new directories 0700 (the XDG cache directory's mode). */
static int make_dirs(const char *dir)
{
	char p[PATH_MAX];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(p))
		return -1;
	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return -1;
		if (i < n)
			p[i] = '/';
	}
	return 0;
}

/*
 * Writes the uncompressed copy of o to path: into a temporary file of the
 * same directory, renamed into place once complete. Inflates o's sections
 * in its Elf (libdw would do the same on opening it). Returns 0 or -1 (the
 * temporary file removed).
 */
static int write_copy(struct orig *o, const char *dir, const char *path)
{
	char tmp[PATH_MAX];
	char *names = NULL;       /* a copy of .shstrtab when .zdebug_* are renamed */
	GElf_Ehdr eh;
	size_t phnum;
	Elf *out = NULL;
	int tfd, ok = 0;

	if (make_dirs(dir) < 0 ||
	    snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -1;
	tfd = mkostemp(tmp, O_CLOEXEC);
	if (tfd < 0)
		return -1;
	out = elf_begin(tfd, ELF_C_WRITE, NULL);
	if (!out || !gelf_getehdr(o->elf, &eh) || !gelf_newehdr(out, gelf_getclass(o->elf)) ||
	    elf_getphdrnum(o->elf, &phnum) < 0 || (phnum && !gelf_newphdr(out, phnum)) ||
	    !gelf_update_ehdr(out, &eh))
		goto out;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(o->elf, (int)i, &ph) || !gelf_update_phdr(out, (int)i, &ph))
			goto out;
	}
	for (size_t i = 1; i < o->shnum; i++) {
		Elf_Data *sd;

		if (!o->sects[i].gnu)
			continue;
		if (!names) {
			sd = elf_getdata(elf_getscn(o->elf, o->shstrndx), NULL);
			if (!sd || !sd->d_buf || !(names = malloc(sd->d_size)))
				goto out;
			memcpy(names, sd->d_buf, sd->d_size);
		}
		/* ".zdebug_x" at k becomes ".debug_x" at k + 1 (scan saw it fit) */
		names[o->sects[i].name_off + 1] = '.';
	}
	for (size_t i = 1; i < o->shnum; i++) {
		const struct sect *t = &o->sects[i];
		Elf_Scn *scn = elf_getscn(o->elf, i), *oscn;
		Elf_Data *d = NULL, *od;
		GElf_Shdr sh;

		if (!scn || (t->compressed && elf_compress(scn, 0, 0) != 1) ||
		    (t->gnu && elf_compress_gnu(scn, 0, 0) != 1) || !gelf_getshdr(scn, &sh))
			goto out;
		if (t->gnu)
			sh.sh_name++;
		oscn = elf_newscn(out);
		if (!oscn || elf_ndxscn(oscn) != i || !gelf_update_shdr(oscn, &sh))
			goto out;
		while ((d = elf_getdata(scn, d))) {
			if (!(od = elf_newdata(oscn)))
				goto out;
			*od = *d;
			if (i == o->shstrndx && names)
				od->d_buf = names;
		}
	}
	if (elf_update(out, ELF_C_WRITE) < 0)
		goto out;
	ok = 1;
out:
	elf_end(out);
	free(names);
	if (close(tfd) < 0)
		ok = 0;
	if (ok && rename(tmp, path) == 0)
		return 0;
	unlink(tmp);
	return -1;
}

/*
 * Opens a copy for reading: never through a symbolic link, and without
 * waiting on anything but a regular file (a FIFO in its place would block
 * the open; valid() then refuses what is not a regular file).
 */
static int open_copy(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);

	if (fd >= 0)
		(void)fcntl(fd, F_SETFL, 0);
	return fd;
}

int mt_debugcache_swap(const char *dir, int fd, const void *build_id, size_t build_id_len)
{
	struct orig o;
	char path[PATH_MAX], hex[2 * BUILD_ID_MAX + 1];
	int cfd = -1, n;

	if (!dir || fd < 0 || !build_id || elf_version(EV_CURRENT) == EV_NONE)
		return fd;
	memset(&o, 0, sizeof(o));
	o.elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	if (scan(&o, fd) < 0 || !o.ncompressed || o.idlen != build_id_len ||
	    memcmp(o.id, build_id, build_id_len) != 0)
		goto keep;
	mt_fmt_hex(hex, sizeof(hex), o.id, o.idlen);
	n = snprintf(path, sizeof(path), "%s/%s.debug", dir, hex);
	if (n < 0 || (size_t)n >= sizeof(path) - 8)   /* room for mkostemp's suffix */
		goto keep;
	cfd = open_copy(path);
	if (cfd >= 0 && valid(&o, cfd))
		goto swap;
	if (cfd >= 0)
		close(cfd);
	cfd = -1;
	/* none, or corrupt or foreign: (re)written */
	if (write_copy(&o, dir, path) < 0)
		goto keep;
	cfd = open_copy(path);
	if (cfd >= 0 && valid(&o, cfd))
		goto swap;
keep:
	if (cfd >= 0)
		close(cfd);
	elf_end(o.elf);
	free(o.sects);
	return fd;
swap:
	elf_end(o.elf);
	free(o.sects);
	close(fd);
	return cfd;
}
