/*
 * modules.c - the module map: every loaded ELF object with its load bias,
 * GNU build-id and executable PT_LOAD ranges, found with dl_iterate_phdr.
 * A scan (without the log lock: dl_iterate_phdr takes the loader's lock)
 * notes which objects are new and which are gone since the previous scan;
 * emit (with the log lock) writes MODULE and UNLOAD records for them and
 * refreshes the table of known executable ranges that core.c checks every
 * new stack against: a frame outside them means something was loaded
 * (dlopen is deliberately not hooked: glibc resolves a relative name with
 * the RUNPATH and $ORIGIN of dlopen's caller, which a hook would replace).
 *
 * Not for: symbolization (offline, lib/), locking (core.c serializes scans
 * with its own module lock).
 */
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "recorder.h"
#include "writer.h"

#define MAX_SEGS 16
#define MAX_BID  64

struct mod {
	uint64_t base;
	uint64_t name_hash;
	int state;            /* KNOWN, NEW (to emit), GONE (to emit UNLOAD) */
	int seen;             /* in the current scan */
	uint32_t nseg;
	uint32_t bid_len;
	uint64_t segs[2 * MAX_SEGS];
	uint8_t bid[MAX_BID];
	char path[4096];
};

enum { FREE_SLOT = 0, KNOWN, NEW, GONE };

struct mt_modules {
	struct mod *mods;
	size_t n, cap;
	uint64_t *ranges;     /* start, end pairs of the emitted modules' segments */
	size_t nranges, ranges_cap;
	unsigned long long adds, subs;  /* loader counters at the last scan */
	char exe[4096];       /* the main program's path */
};

struct mt_modules *mt_modules_new(void)
{
	struct mt_modules *m = mt_mem_alloc(sizeof(*m));
	if (!m)
		return NULL;
	memset(m, 0, sizeof(*m));
	ssize_t n = readlink("/proc/self/exe", m->exe, sizeof(m->exe) - 1);
	m->exe[n > 0 ? n : 0] = '\0';
	return m;
}

void mt_modules_free(struct mt_modules *m)
{
	if (!m)
		return;
	mt_mem_free(m->ranges);
	mt_mem_free(m->mods);
	mt_mem_free(m);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static void read_build_id(struct mod *md, const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const uint8_t *name = p + sizeof(*nh);
			const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);
			const uint8_t *next = desc + ((nh->n_descsz + 3) & ~3u);
			if (next > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= MAX_BID) {
				memcpy(md->bid, desc, nh->n_descsz);
				md->bid_len = nh->n_descsz;
				return;
			}
			p = next;
		}
	}
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct mt_modules *m = data;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	(void)size;

	/* The vDSO's program headers are those of the ELF image the kernel
	 * maps at AT_SYSINFO_EHDR (an address range check would also catch
	 * ld.so, often mapped right after it). */
	if (vdso && (uintptr_t)info->dlpi_phdr == vdso + ((const ElfW(Ehdr) *)vdso)->e_phoff)
		name = "[vdso]";
	else if (!name[0])
		name = m->exe;
	uint64_t h = str_hash(name);

	for (size_t i = 0; i < m->n; i++) {
		struct mod *md = &m->mods[i];
		if (md->state != FREE_SLOT && md->state != GONE &&
		    md->base == info->dlpi_addr && md->name_hash == h) {
			md->seen = 1;
			return 0;
		}
	}
	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 32;
		struct mod *nm = mt_mem_alloc(ncap * sizeof(*nm));
		if (!nm)
			return 1;
		if (m->n)
			memcpy(nm, m->mods, m->n * sizeof(*nm));
		mt_mem_free(m->mods);
		m->mods = nm;
		m->cap = ncap;
	}
	struct mod *md = &m->mods[m->n++];
	memset(md, 0, offsetof(struct mod, path));
	md->base = info->dlpi_addr;
	md->name_hash = h;
	md->state = NEW;
	md->seen = 1;
	strncpy(md->path, name, sizeof(md->path) - 1);
	md->path[sizeof(md->path) - 1] = '\0';
	for (int i = 0; i < info->dlpi_phnum && md->nseg < MAX_SEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			md->segs[2 * md->nseg] = info->dlpi_addr + ph->p_vaddr;
			md->segs[2 * md->nseg + 1] = ph->p_memsz;
			md->nseg++;
		}
	}
	read_build_id(md, info);
	return 0;
}

struct counters {
	unsigned long long adds, subs;
};

static int counters_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct counters *c = data;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		c->adds = info->dlpi_adds;
		c->subs = info->dlpi_subs;
	}
	return 1;     /* the first object is enough */
}

int mt_modules_changed(struct mt_modules *m)
{
	struct counters c = { 0, 0 };
	dl_iterate_phdr(counters_one, &c);
	return c.adds != m->adds || c.subs != m->subs || (c.adds == 0 && c.subs == 0);
}

int mt_modules_scan(struct mt_modules *m)
{
	struct counters c = { 0, 0 };
	dl_iterate_phdr(counters_one, &c);
	m->adds = c.adds;
	m->subs = c.subs;
	for (size_t i = 0; i < m->n; i++)
		m->mods[i].seen = 0;
	int r = dl_iterate_phdr(scan_one, m);
	for (size_t i = 0; i < m->n; i++) {
		struct mod *md = &m->mods[i];
		if (md->state == KNOWN && !md->seen)
			md->state = GONE;
	}
	return r ? -1 : 0;
}

int mt_modules_emit_known(const struct mt_modules *m, struct mt_writer *w, uint64_t t)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct mod *md = &m->mods[i];
		int e;

		/* GONE: its UNLOAD, still to come, names it */
		if (md->state != KNOWN && md->state != GONE)
			continue;
		e = mt_writer_module(w, t, md->base, md->path, md->bid, md->bid_len,
				     md->segs, md->nseg);
		if (e < 0)
			return e;
	}
	return 0;
}

int mt_modules_emit(struct mt_modules *m, struct mt_writer *w, uint64_t t)
{
	size_t keep = 0;
	int err = 0;
	for (size_t i = 0; i < m->n; i++) {
		struct mod *md = &m->mods[i];
		if (md->state == NEW) {
			int e = mt_writer_module(w, t, md->base, md->path, md->bid, md->bid_len,
						 md->segs, md->nseg);
			if (e < 0 && !err)
				err = e;
			md->state = KNOWN;
		} else if (md->state == GONE) {
			int e = mt_writer_unload(w, t, md->base);
			if (e < 0 && !err)
				err = e;
			continue;     /* dropped from the table */
		}
		if (keep != i)
			memcpy(&m->mods[keep], md, sizeof(*md));
		keep++;
	}
	m->n = keep;

	size_t need = 0;
	for (size_t i = 0; i < m->n; i++)
		need += 2 * m->mods[i].nseg;
	if (need > m->ranges_cap) {
		uint64_t *nr = mt_mem_alloc((need + 64) * sizeof(uint64_t));
		if (!nr)
			return err ? err : -1;
		mt_mem_free(m->ranges);
		m->ranges = nr;
		m->ranges_cap = need + 64;
	}
	m->nranges = 0;
	for (size_t i = 0; i < m->n; i++) {
		for (uint32_t s = 0; s < m->mods[i].nseg; s++) {
			m->ranges[m->nranges++] = m->mods[i].segs[2 * s];
			m->ranges[m->nranges++] = m->mods[i].segs[2 * s] + m->mods[i].segs[2 * s + 1];
		}
	}
	return err;
}

int mt_modules_known(const struct mt_modules *m, uint64_t ip)
{
	for (size_t i = 0; i < m->nranges; i += 2)
		if (ip >= m->ranges[i] && ip < m->ranges[i + 1])
			return 1;
	return 0;
}

struct text_query {
	uintptr_t addr, lo, hi;
	int found;
};

static int text_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct text_query *q = data;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	int inside = 0;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
		if (q->addr >= s && q->addr < e)
			inside = 1;
		if ((ph->p_flags & PF_X) && s < lo)
			lo = s;
		if ((ph->p_flags & PF_X) && e > hi)
			hi = e;
	}
	if (!inside)
		return 0;
	q->lo = lo;
	q->hi = hi;
	q->found = 1;
	return 1;
}

int mt_modules_text_of(const void *addr, uintptr_t *lo, uintptr_t *hi)
{
	struct text_query q = { (uintptr_t)addr, 0, 0, 0 };
	dl_iterate_phdr(text_one, &q);
	if (!q.found)
		return -1;
	*lo = q.lo;
	*hi = q.hi;
	return 0;
}
