/*
 * unwind.c - the recorder's stack walk (MEMTRAIL_UNWIND=incremental, the
 * default on x86-64): each capture walks the frames with unwind rules
 * cached by address, and reuses the outer part of the thread's previous
 * stack where it can prove it unchanged; MEMTRAIL_UNWIND=full is
 * libunwind's unw_backtrace() on every event, and check runs both on
 * every event and counts the stacks that differ.
 *
 * Why a walker of our own: libunwind's unw_backtrace() spends about 70
 * instructions a frame (a per-thread cache behind function pointers, a
 * context saved and a cursor set up per call); a frame here costs a
 * probe of one table and two loads. It is the hot path of recording.
 *
 * The rules. A frame's rule says where its caller's frame is: the
 * canonical frame address (CFA) is rsp or rbp plus an offset, the return
 * address lies at CFA - 8, the caller's rsp is the CFA and its rbp is
 * either the same or saved at CFA + an offset. The rule of an address
 * comes from the module's .eh_frame, found through .eh_frame_hdr's sorted
 * table (_dl_find_object gives both without the loader's lock): the CIE's
 * and the FDE's call-frame instructions are run up to the address.
 * Anything else (a CFA by expression or by another register, a return
 * address elsewhere, rbp kept in another register, a signal frame, an
 * address in no module, an encoding we do not read) makes the whole
 * capture fall back to libunwind, which knows those (a thread that keeps
 * meeting such frames leaves its captures to libunwind for a while).
 * Rules are kept
 * in one table for every thread, keyed by address, entered under a
 * spinlock and read without one; a dlclose bumps a generation that every
 * kept rule carries, so a rule of code unloaded is never used for code
 * loaded at its address later. In front of that table each thread keeps
 * a small cache of the rules its walks used (struct rcache), checked
 * against the same generation.
 *
 * As unw_backtrace() does, outer frames are looked up at their return
 * address minus one (the call, not what follows it), the first at its
 * own address; the walk ends at a frame whose return address is
 * undefined (_start, a thread's first frame), at a null return address or
 * after size frames.
 *
 * Reuse, and why it is exact. A walk is a function of its starting
 * registers (ip, rsp, rbp) and of the words it reads: each step reads the
 * return address at CFA - 8 and, where the rule says so, the saved rbp.
 * Each thread keeps its previous walk: every frame's registers and the
 * addresses each step read. When the new walk reaches a frame whose
 * registers equal a kept frame's (rbp only where some outer step still
 * depends on it), the kept steps from there are checked by reading the
 * same addresses again: where every word is the same, the rest of the
 * walk would read the same words and compute the same frames, so they
 * are taken from the previous walk; at the first word that differs, the
 * walk goes on by rule from the last frame proven equal. Nothing is
 * written into the program's stack, so exceptions, longjmp, swapcontext,
 * stack-copying coroutines, signal handlers and exiting threads need no
 * care: a stack that changed by any means fails the check, and a stack
 * copied back to where it was passes it only if it is word for word what
 * the walk read. The check costs one or two loads a frame; the rule
 * lookups of the outer frames are what it saves (on the bench's python3,
 * a capture walks 6 of 17 frames).
 *
 * Not for: what a stack becomes (hooks.c capture(), core.c); loading
 * libunwind (core.c load_unwinder).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "recorder.h"
#include "unwind.h"

int mt_unwind_parse(const char *s)
{
	if (!s || !*s || strcmp(s, "incremental") == 0)
		return MT_UNWIND_INCREMENTAL;
	if (strcmp(s, "full") == 0)
		return MT_UNWIND_FULL;
	if (strcmp(s, "check") == 0)
		return MT_UNWIND_CHECK;
	return -1;
}

#if defined(__x86_64__)

/* ---- rules ------------------------------------------------------------------------ */

/*
 * A rule in 64 bits:
 *   bits 0-1    kind: R_WALK, R_END (no caller), R_HARD (fall back)
 *   bit 2       the CFA is rbp + offset (else rsp + offset)
 *   bit 3       rbp is saved at CFA + rbp offset (else it is the same)
 *   bits 8-31   the CFA offset (signed, 24 bits)
 *   bits 32-47  the rbp offset (signed, 16 bits)
 *   bits 48-63  the generation (dlclose) it belongs to
 * Offsets that do not fit make a rule R_HARD.
 */
enum { R_NONE, R_WALK, R_END, R_HARD };

static inline unsigned r_kind(uint64_t r) { return (unsigned)(r & 3); }
static inline int r_cfa_bp(uint64_t r) { return (int)((r >> 2) & 1); }
static inline int r_bp_saved(uint64_t r) { return (int)((r >> 3) & 1); }
static inline int64_t r_cfa_off(uint64_t r) { return (int64_t)((int32_t)(uint32_t)r >> 8); }
static inline int64_t r_bp_off(uint64_t r) { return (int64_t)(int16_t)(uint16_t)(r >> 32); }
static inline unsigned r_gen(uint64_t r) { return (unsigned)(r >> 48); }

static uint64_t r_make(unsigned kind, int cfa_bp, int64_t cfa_off, int bp_saved, int64_t bp_off)
{
	if (kind != R_WALK)
		return kind;
	if (cfa_off < -(1 << 23) || cfa_off >= (1 << 23) || bp_off < -32768 || bp_off > 32767)
		return R_HARD;
	return R_WALK | (uint64_t)cfa_bp << 2 | (uint64_t)bp_saved << 3 |
	       ((uint64_t)(uint32_t)cfa_off & 0xffffff) << 8 | (uint64_t)(uint16_t)bp_off << 32;
}

/* ---- reading .eh_frame ---------------------------------------------------------------- */

enum {
	PE_ABS = 0x00, PE_ULEB = 0x01, PE_U2 = 0x02, PE_U4 = 0x03, PE_U8 = 0x04,
	PE_SLEB = 0x09, PE_S2 = 0x0a, PE_S4 = 0x0b, PE_S8 = 0x0c,
	PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_INDIRECT = 0x80, PE_OMIT = 0xff,
};

/* The DWARF registers of x86-64 that matter here. */
enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

struct rd {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	while (r->p < r->end) {
		uint8_t b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static int64_t rd_sleb(struct rd *r)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0x80;
	while (r->p < r->end && (b & 0x80)) {
		b = *r->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
	}
	if (b & 0x80) {
		r->bad = 1;
		return 0;
	}
	if (shift < 64 && (b & 0x40))
		v |= (int64_t)(~0ull << shift);
	return v;
}

static uint64_t rd_fixed(struct rd *r, unsigned n)
{
	uint64_t v = 0;
	if ((size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	memcpy(&v, r->p, n);
	r->p += n;
	return v;
}

/* A pointer in encoding enc (the value part and pcrel or datarel). */
static uint64_t rd_enc(struct rd *r, unsigned enc, uint64_t datarel)
{
	uint64_t at = (uintptr_t)r->p, v;
	if (enc == PE_OMIT) {
		r->bad = 1;
		return 0;
	}
	switch (enc & 0x0f) {
	case PE_ABS: v = rd_fixed(r, 8); break;
	case PE_ULEB: v = rd_uleb(r); break;
	case PE_U2: v = rd_fixed(r, 2); break;
	case PE_U4: v = rd_fixed(r, 4); break;
	case PE_U8: v = rd_fixed(r, 8); break;
	case PE_SLEB: v = (uint64_t)rd_sleb(r); break;
	case PE_S2: v = (uint64_t)(int64_t)(int16_t)rd_fixed(r, 2); break;
	case PE_S4: v = (uint64_t)(int64_t)(int32_t)rd_fixed(r, 4); break;
	case PE_S8: v = rd_fixed(r, 8); break;
	default: r->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0: break;
	case PE_PCREL: v += at; break;
	case PE_DATAREL: v += datarel; break;
	default: r->bad = 1; return 0;
	}
	if (enc & PE_INDIRECT) {
		if (r->bad || !v)
			return 0;
		v = *(const uint64_t *)(uintptr_t)v;
	}
	return v;
}

/* The extent of a CIE or FDE at p: its content in *r; 0, or -1. */
/* A product of factors read from the tables, wrapping as the unsigned one
 * does (a damaged table must not be undefined behaviour; r_make's range
 * checks reject what comes of it). */
static inline int64_t mulw(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* An entry longer than any real CIE or FDE (they are tens of bytes): a
 * damaged table, not read (its end is not known to be mapped). */
#define ENTRY_MAX (64u << 10)

static int rd_entry(const uint8_t *p, struct rd *r)
{
	uint32_t len32;
	memcpy(&len32, p, 4);
	if (len32 == 0 || len32 == 0xffffffffu ||   /* a terminator; 64-bit DWARF */
	    len32 > ENTRY_MAX)
		return -1;
	r->p = p + 4;
	r->end = p + 4 + len32;
	r->bad = 0;
	return 0;
}

/* The rules of one row: what the CFA is, where rbp and the return address are. */
enum { RULE_SAME, RULE_OFFSET, RULE_UNDEF, RULE_OTHER };
struct row {
	int cfa_reg;
	int64_t cfa_off;
	int cfa_expr;
	int bp, ra, sp;       /* RULE_* */
	int64_t bp_off, ra_off;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	unsigned ra_reg;
	unsigned fde_enc;
	int signal;
	struct rd init;       /* the initial instructions */
};

static int parse_cie(const uint8_t *p, struct cie *c)
{
	struct rd r;
	if (rd_entry(p, &r) < 0 || rd_fixed(&r, 4) != 0)
		return -1;
	unsigned version = (unsigned)rd_fixed(&r, 1);
	if (version != 1 && version != 3)
		return -1;
	const char *aug = (const char *)r.p;
	while (r.p < r.end && *r.p)
		r.p++;
	if (r.p >= r.end)
		return -1;
	r.p++;
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	c->ra_reg = version == 1 ? (unsigned)rd_fixed(&r, 1) : (unsigned)rd_uleb(&r);
	c->fde_enc = PE_ABS;
	c->signal = 0;
	if (aug[0] == 'z') {
		uint64_t alen = rd_uleb(&r);
		const uint8_t *aend = r.p + alen;
		if (r.bad || alen > (uint64_t)(r.end - r.p))
			return -1;
		for (const char *a = aug + 1; *a; a++) {
			switch (*a) {
			case 'R': c->fde_enc = (unsigned)rd_fixed(&r, 1); break;
			case 'L': (void)rd_fixed(&r, 1); break;
			case 'S': c->signal = 1; break;
			case 'P': {
				unsigned enc = (unsigned)rd_fixed(&r, 1);
				/* only its length matters: read it without the indirection */
				(void)rd_enc(&r, enc & ~(unsigned)PE_INDIRECT, 0);
				break;
			}
			default: return -1;   /* unknown: the data after it cannot be found */
			}
		}
		r.p = aend;
	} else if (aug[0]) {
		return -1;
	}
	if (r.bad || c->ra_reg != REG_RA)
		return -1;
	c->init = r;
	return 0;
}

/*
 * Runs call-frame instructions from *r on row, the location starting at
 * loc, until the location passes pc. init: the row after the CIE's
 * instructions (DW_CFA_restore), NULL while running those. 0, or -1 on
 * an instruction this reader does not know.
 */
static int run_cfa(struct rd *r, const struct cie *c, struct row *row, const struct row *init,
		   uint64_t loc, uint64_t pc)
{
	struct row saved[8];
	int nsaved = 0;

	while (r->p < r->end && !r->bad) {
		uint8_t op = *r->p++;
		uint64_t reg = 0, adv = 0;
		int64_t off = 0;
		int rule = -1;

		switch (op >> 6) {
		case 1:         /* DW_CFA_advance_loc */
			adv = op & 0x3f;
			goto advance;
		case 2:         /* DW_CFA_offset */
			reg = op & 0x3f;
			off = mulw((int64_t)rd_uleb(r), c->data_align);
			rule = RULE_OFFSET;
			goto set;
		case 3:         /* DW_CFA_restore */
			reg = op & 0x3f;
			goto restore;
		}
		switch (op) {
		case 0x00:      /* nop */
			continue;
		case 0x02: adv = rd_fixed(r, 1); goto advance;
		case 0x03: adv = rd_fixed(r, 2); goto advance;
		case 0x04: adv = rd_fixed(r, 4); goto advance;
		case 0x05:      /* offset_extended */
			reg = rd_uleb(r);
			off = mulw((int64_t)rd_uleb(r), c->data_align);
			rule = RULE_OFFSET;
			goto set;
		case 0x06:      /* restore_extended */
			reg = rd_uleb(r);
			goto restore;
		case 0x07:      /* undefined */
			reg = rd_uleb(r);
			rule = RULE_UNDEF;
			goto set;
		case 0x08:      /* same_value */
			reg = rd_uleb(r);
			rule = RULE_SAME;
			goto set;
		case 0x09:      /* register: reg held in another register */
			reg = rd_uleb(r);
			(void)rd_uleb(r);
			rule = RULE_OTHER;
			goto set;
		case 0x0a:      /* remember_state */
			if (nsaved == 8)
				return -1;
			saved[nsaved++] = *row;
			continue;
		case 0x0b:      /* restore_state */
			/* the CFA comes back too, as in libgcc and libunwind:
			 * compilers wrap a mid-function epilogue in these */
			if (!nsaved)
				return -1;
			*row = saved[--nsaved];
			continue;
		case 0x0c:      /* def_cfa */
			row->cfa_reg = (int)rd_uleb(r);
			row->cfa_off = (int64_t)rd_uleb(r);
			row->cfa_expr = 0;
			continue;
		case 0x0d:      /* def_cfa_register */
			row->cfa_reg = (int)rd_uleb(r);
			row->cfa_expr = 0;
			continue;
		case 0x0e:      /* def_cfa_offset */
			row->cfa_off = (int64_t)rd_uleb(r);
			continue;
		case 0x0f:      /* def_cfa_expression */
			adv = rd_uleb(r);
			if (adv > (uint64_t)(r->end - r->p))
				return -1;
			r->p += adv;
			row->cfa_expr = 1;
			continue;
		case 0x10:      /* expression */
		case 0x16:      /* val_expression */
			reg = rd_uleb(r);
			adv = rd_uleb(r);
			if (adv > (uint64_t)(r->end - r->p))
				return -1;
			r->p += adv;
			rule = RULE_OTHER;
			goto set;
		case 0x11:      /* offset_extended_sf */
			reg = rd_uleb(r);
			off = mulw(rd_sleb(r), c->data_align);
			rule = RULE_OFFSET;
			goto set;
		case 0x12:      /* def_cfa_sf */
			row->cfa_reg = (int)rd_uleb(r);
			row->cfa_off = mulw(rd_sleb(r), c->data_align);
			row->cfa_expr = 0;
			continue;
		case 0x13:      /* def_cfa_offset_sf */
			row->cfa_off = mulw(rd_sleb(r), c->data_align);
			continue;
		case 0x14:      /* val_offset */
			reg = rd_uleb(r);
			(void)rd_uleb(r);
			rule = RULE_OTHER;
			goto set;
		case 0x15:      /* val_offset_sf */
			reg = rd_uleb(r);
			(void)rd_sleb(r);
			rule = RULE_OTHER;
			goto set;
		case 0x2e:      /* GNU_args_size */
			(void)rd_uleb(r);
			continue;
		case 0x2f:      /* GNU_negative_offset_extended */
			reg = rd_uleb(r);
			off = mulw((int64_t)(0 - rd_uleb(r)), c->data_align);
			rule = RULE_OFFSET;
			goto set;
		default:
			return -1;
		}
advance:
		loc += adv * c->code_align;
		if (init && loc > pc)
			return 0;
		continue;
restore:
		if (!init)
			return -1;
		if (reg == REG_RBP) {
			row->bp = init->bp;
			row->bp_off = init->bp_off;
		} else if (reg == REG_RA) {
			row->ra = init->ra;
			row->ra_off = init->ra_off;
		} else if (reg == REG_RSP) {
			row->sp = init->sp;
		}
		continue;
set:
		if (reg == REG_RBP) {
			row->bp = rule;
			row->bp_off = off;
		} else if (reg == REG_RA) {
			row->ra = rule;
			row->ra_off = off;
		} else if (reg == REG_RSP) {
			row->sp = rule;
		}
	}
	return r->bad ? -1 : 0;
}

/*
 * The rule of the frame executing at pc (an outer frame's return address
 * minus one), from its module's unwind tables; R_HARD where this reader
 * cannot say (the capture then falls back to libunwind).
 */
static int (*find_object)(void *, struct dl_find_object *);

static uint64_t rule_of(uint64_t pc)
{
	struct dl_find_object fo;
	if (!find_object || find_object((void *)(uintptr_t)pc, &fo) != 0 || !fo.dlfo_eh_frame)
		return R_HARD;
	/* .eh_frame_hdr: version 1, then three encodings, eh_frame_ptr,
	 * fde_count and the table, which linkers write as pairs of 32-bit
	 * offsets from the header (datarel sdata4), sorted by location */
	const uint8_t *h = fo.dlfo_eh_frame;
	if (h[0] != 1 || h[3] != (PE_DATAREL | PE_S4))
		return R_HARD;
	struct rd r = { h + 4, h + 4 + 16, 0 };
	(void)rd_enc(&r, h[1], (uintptr_t)h);
	uint64_t count = rd_enc(&r, h[2], (uintptr_t)h);
	if (r.bad || !count || count > (1u << 28))
		return R_HARD;
	const int32_t *tab = (const int32_t *)(const void *)r.p;
	uint64_t lo = 0, hi = count;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t)h + (int64_t)tab[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if ((uintptr_t)h + (int64_t)tab[2 * lo] > pc)
		return R_HARD;
	const uint8_t *fde = h + tab[2 * lo + 1];

	struct rd f;
	if (rd_entry(fde, &f) < 0)
		return R_HARD;
	uint32_t cie_ptr = (uint32_t)rd_fixed(&f, 4);
	struct cie c;
	if (f.bad || !cie_ptr || parse_cie(fde + 4 - cie_ptr, &c) < 0)
		return R_HARD;
	uint64_t start = rd_enc(&f, c.fde_enc, 0);
	uint64_t range = rd_enc(&f, c.fde_enc & 0x0f, 0);
	if (f.bad || pc < start || pc - start >= range)
		return R_HARD;
	if (c.signal)
		return R_HARD;
	/* the 'z' augmentation's data length: present when the CIE has one */
	const uint8_t *cie = fde + 4 - cie_ptr;
	if (cie[9] == 'z') {
		uint64_t alen = rd_uleb(&f);
		if (f.bad || alen > (uint64_t)(f.end - f.p))
			return R_HARD;
		f.p += alen;
	}

	struct row init = { .cfa_reg = -1, .bp = RULE_SAME, .ra = RULE_SAME, .sp = RULE_SAME };
	struct rd ci = c.init;
	if (run_cfa(&ci, &c, &init, NULL, start, pc) < 0)
		return R_HARD;
	struct row row = init;
	if (run_cfa(&f, &c, &row, &init, start, pc) < 0)
		return R_HARD;

	if (row.ra == RULE_UNDEF)
		return R_END;
	if (row.cfa_expr || (row.cfa_reg != REG_RSP && row.cfa_reg != REG_RBP) ||
	    row.ra != RULE_OFFSET || row.ra_off != -8 || row.sp != RULE_SAME ||
	    (row.bp != RULE_SAME && row.bp != RULE_OFFSET))
		return R_HARD;
	return r_make(R_WALK, row.cfa_reg == REG_RBP, row.cfa_off, row.bp == RULE_OFFSET,
		      row.bp_off);
}

/* ---- the table of rules ----------------------------------------------------------- */

/*
 * Open addressing by address, read without a lock: a reader takes the
 * slot's key, then its rule, then the key again, and uses the rule only
 * if the key did not change (x86-64 keeps loads in order, and the writer
 * stores key 0, the rule, then the key, in order). A rule of an older
 * generation is as good as absent, and its slot is taken over in place.
 * Tables grow by doubling into new memory; the old ones stay mapped (a
 * reader may still be in one), but the whole pages of their slots are
 * given back: read again they are zeros, empty slots, so a reader still
 * there finds no rule and makes it anew, as for any miss (a key that
 * turns 0 under it fails its second read; a slot across the first
 * page's end keeps its key and reads rule 0, whose generation, 0, is
 * never a current one). Of an old table only its first page (with the
 * header: s and mask, which readers still use) and its last partial one
 * stay resident (cc1: 200 KiB less).
 */
struct rslot {
	volatile uint64_t key;
	volatile uint64_t rule;
};
struct rtab {
	struct rslot *s;
	uint64_t mask;
	uint64_t used;
};

static struct rtab *volatile rtab;
static volatile int rlock;
static volatile unsigned rgen = 1;   /* 16 bits in each rule; 0 never used */
/* Counts every change of rgen and never wraps: a thread's cache of rules
 * (struct uw_state) holds for one value of it. */
static volatile uint64_t rgen_all = 1;

#define barrier() __asm__ __volatile__("" ::: "memory")

/* An ip's bits mixed into the high ones (Fibonacci hashing): the shared
 * table takes its slot from bit 20 up, a thread's cache from the top. */
static inline uint64_t ip_mix(uint64_t ip)
{
	return ip * 0x9E3779B97F4A7C15ull;
}

static inline uint64_t rhash(uint64_t ip)
{
	return ip_mix(ip) >> 20;
}

static inline uint64_t rule_find(const struct rtab *t, uint64_t ip, unsigned gen)
{
	for (uint64_t i = rhash(ip) & t->mask;; i = (i + 1) & t->mask) {
		uint64_t k = t->s[i].key;
		if (k == ip) {
			uint64_t r = t->s[i].rule;
			barrier();
			if (t->s[i].key == ip && r_gen(r) == gen)
				return r;
			return R_NONE;
		}
		if (!k)
			return R_NONE;
	}
}

static struct rtab *rtab_new(uint64_t cap)
{
	struct rtab *t = mt_mem_alloc_kept(sizeof(*t) + cap * sizeof(struct rslot));
	if (!t)
		return NULL;
	t->s = (struct rslot *)(t + 1);
	t->mask = cap - 1;
	t->used = 0;
	return t;
}

static void rtab_put(struct rtab *t, uint64_t ip, uint64_t rule)
{
	uint64_t i = rhash(ip) & t->mask;
	while (t->s[i].key && t->s[i].key != ip)
		i = (i + 1) & t->mask;
	if (!t->s[i].key)
		t->used++;
	t->s[i].key = 0;
	barrier();
	t->s[i].rule = rule;
	barrier();
	t->s[i].key = ip;
}

/* Keeps ip's rule (gen already in it); skipped when another thread is at it. */
static void rule_keep(uint64_t ip, uint64_t rule)
{
	if (__atomic_exchange_n(&rlock, 1, __ATOMIC_ACQUIRE))
		return;
	struct rtab *t = rtab;
	if (t && (t->used + 1) * 2 > t->mask + 1) {
		struct rtab *n = rtab_new(2 * (t->mask + 1));
		if (n) {
			unsigned gen = rgen;
			for (uint64_t i = 0; i <= t->mask; i++)
				if (t->s[i].key && r_gen(t->s[i].rule) == gen)
					rtab_put(n, t->s[i].key, t->s[i].rule);
			__atomic_store_n(&rtab, n, __ATOMIC_RELEASE);
			/* the header (s, mask) stays: readers still use it */
			mt_mem_idle(t->s, (t->mask + 1) * sizeof(struct rslot));
			t = n;
		} else if (t->used + 1 > t->mask) {
			t = NULL;
		}
	}
	if (t)
		rtab_put(t, ip, rule);
	__atomic_store_n(&rlock, 0, __ATOMIC_RELEASE);
}

static inline uint64_t rule_at(const struct rtab *t, uint64_t ip, unsigned gen)
{
	uint64_t r = rule_find(t, ip, gen);
	if (MT_LIKELY(r != R_NONE))
		return r;
	/* looked up at the call, ip - 1; kept by ip */
	r = rule_of(ip - 1) | (uint64_t)gen << 48;
	rule_keep(ip, r);
	return r;
}

static void (*flush_full)(void);

void mt_unwind_forget(void)
{
	if (flush_full)
		flush_full();
	unsigned g = __atomic_add_fetch(&rgen, 1, __ATOMIC_ACQ_REL) & 0xffff;
	if (g == 0)
		__atomic_store_n(&rgen, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&rgen_all, 1, __ATOMIC_ACQ_REL);
	/* A generation number met again after 65,535 dlcloses: no kept rule
	 * may pass for it, so the slots are emptied (readers check the key
	 * around the rule; empty keys only end their probes early). A lock
	 * not had in a while (its holder preempted for long) leaves the rules
	 * to a new table instead. */
	if (g == 0 || g == 1) {
		int tries = 0;
		while (__atomic_exchange_n(&rlock, 1, __ATOMIC_ACQUIRE))
			if (++tries == 1000000) {
				struct rtab *n = rtab_new(4096);
				if (n)
					__atomic_store_n(&rtab, n, __ATOMIC_RELEASE);
				return;
			}
		struct rtab *t = rtab;
		if (t) {
			for (uint64_t i = 0; i <= t->mask; i++)
				t->s[i].key = 0;
			t->used = 0;
		}
		__atomic_store_n(&rlock, 0, __ATOMIC_RELEASE);
	}
}

void mt_unwind_child(void)
{
	/* a slot half written by a thread gone has key 0 or a whole rule:
	 * the stores are words, in order */
	__atomic_store_n(&rlock, 0, __ATOMIC_RELEASE);
}

/* ---- the walk ---------------------------------------------------------------------- */

/* Frames of the recorder a walk may meet before the program's (a hook
 * called by another, as cfree calls free). */
#define UW_SLACK 8
#define UW_FRAMES (MT_MAX_DEPTH + 16)

struct frame {
	uint64_t ip, sp, bp;
	uint64_t bpslot;        /* where the step to its caller read rbp (0: kept it) */
	uint64_t hash;          /* mt_unwind_mix over the frames from the outermost to it */
	uint32_t cfabp;         /* that step's CFA was rbp-based */
	uint32_t needbp;        /* the steps from it outward depend on its rbp */
};

/*
 * A thread's own cache of rules by ip, direct-mapped, in front of the
 * shared table: a walk's steps mostly meet the ips of its recent walks,
 * and a probe of the shared table (a multiply, and a line of a table of
 * thousands of rules, often not in this core's cache) was most of a
 * step (perf, sqlite3 bench: the probe's load was 18 % of walk's
 * samples, walk 18 % of the run). 4,096 entries, 64 KiB in the thread's
 * state (its pages are touched only as entries fill): the bench's
 * programs missed 18 to 31 % of their steps with 256 (cc1, sqlite3;
 * stl's two hot ips shared an entry), 0 to 3.4 % with 4,096. An ip of 0
 * (an empty entry's) is never stepped from, and rule 0 is R_NONE.
 */
#define UW_RCACHE_BITS 12
#define UW_RCACHE (1 << UW_RCACHE_BITS)
struct rcache {
	uint64_t ip, rule;
};

struct uw_state {
	unsigned gen;           /* of the rules the kept walk used */
	int n;                  /* frames kept, outermost first */
	int open;               /* the outermost kept frame does not end the stack
				   (the walk was cut at size, or read a null
				   return address): a reuse reaching it steps on */
	int hit;                /* the last walk reused kept frames */
	int same;               /* the last walk is the kept one, unchanged */
	int keep;               /* its outermost frames proven the kept walk's
				   (kept frame c: c + 1; 0 when it is not so
				   simple: several runs, or none) */
	unsigned whole;         /* the last capture's program frames began at
				   its walk's outermost (none cut at max), */
	unsigned prog_n;        /* and were so many */
	int walked;             /* the capture before the last was a walk (not
				   libunwind's), so the kept walk is its frames */
	uint64_t *prev;         /* check mode: the last capture, by libunwind */
	unsigned prevn;
	unsigned misses;        /* walks in a row that fell back to libunwind */
	unsigned skip;          /* captures left to leave to libunwind at once */
	struct frame f[UW_FRAMES];      /* the last walk, outermost first */
	uint64_t ips[UW_FRAMES];        /* f[k].ip, side by side: the captured stack */
	struct frame in[UW_FRAMES];     /* new frames, innermost first */
	struct frame out[UW_FRAMES];    /* frames found outward of a reuse, likewise */
	uint64_t rc_gen;                /* rgen_all the cache holds for (0: empty) */
	struct rcache rc[UW_RCACHE];
};

static mt_backtrace_fn full_bt;
static int uw_mode;
static pthread_key_t uw_key;
static __thread struct uw_state *uw_cur __attribute__((tls_model("initial-exec")));

/* Set once the thread's state is freed at its exit: the last destructors'
 * allocations are walked in full rather than given a state nobody frees. */
static __thread int uw_gone __attribute__((tls_model("initial-exec")));

static void uw_thread_exit(void *p)
{
	if (uw_cur == p)
		uw_cur = NULL;
	uw_gone = 1;
	mt_mem_free(((struct uw_state *)p)->prev);
	mt_mem_free(p);
}

static struct uw_state *state(void)
{
	struct uw_state *st = uw_cur;
	if (MT_LIKELY(st != NULL))
		return st;
	if (uw_gone)
		return NULL;
	st = mt_mem_alloc_kept(sizeof(*st));
	if (!st)
		return NULL;
	uw_cur = st;
	pthread_setspecific(uw_key, st);
	return st;
}

enum { S_NEXT, S_END, S_NULL, S_HARD };

/*
 * One step by rule from the frame at fr (its ip, sp, bp set): what it
 * read goes into fr, the caller's registers into *ip, *sp, *bp. S_END:
 * the frame has no caller; S_NULL: a null return address (the walk stops
 * there, as unw_backtrace does); S_HARD: no rule this walk can use.
 */
static inline __attribute__((always_inline)) int step(struct rcache *rc, const struct rtab *t, unsigned gen,
						     struct frame *fr, uint64_t *ip, uint64_t *sp, uint64_t *bp)
{
	struct rcache *e = &rc[ip_mix(fr->ip) >> (64 - UW_RCACHE_BITS)];
	uint64_t rule;
	/* of the walk's own generation only, as the shared table answers: a
	 * dlclose between rgen and rgen_all's bumps cannot pass an old rule */
	if (MT_LIKELY(e->ip == fr->ip && r_gen(e->rule) == gen)) {
		rule = e->rule;
	} else {
		rule = rule_at(t, fr->ip, gen);
		e->ip = fr->ip;
		e->rule = rule;
	}
	if (MT_UNLIKELY(r_kind(rule) != R_WALK)) {
		fr->bpslot = 0;
		fr->cfabp = 0;
		return r_kind(rule) == R_END ? S_END : S_HARD;
	}
	uint64_t cfa = (r_cfa_bp(rule) ? fr->bp : fr->sp) + (uint64_t)r_cfa_off(rule);
	/* the caller's frame lies above: anything else is not a stack this
	 * walk understands */
	if (MT_UNLIKELY(cfa <= fr->sp || (cfa & 7) || cfa - fr->sp > (1ull << 30)))
		return S_HARD;
	*ip = *(const uint64_t *)(uintptr_t)(cfa - 8);
	*sp = cfa;
	fr->cfabp = (uint32_t)r_cfa_bp(rule);
	fr->bpslot = 0;
	*bp = fr->bp;
	if (r_bp_saved(rule)) {
		fr->bpslot = cfa + (uint64_t)r_bp_off(rule);
		*bp = *(const uint64_t *)(uintptr_t)fr->bpslot;
	}
	return *ip ? S_NEXT : S_NULL;
}

/*
 * A frame just found (in st->in) put in the walk: its registers and what
 * its step read, each word loaded on its own. A copy of the struct
 * loads 16 bytes at a time, each over two 8-byte stores made a few
 * instructions before, which the CPU cannot forward: the load waits for
 * the stores to reach the cache (perf, stl bench: 12 % of walk's samples
 * on that copy). Its hash and rbp dependence are finish()'s to set.
 */
static inline __attribute__((always_inline)) void put_frame(struct frame *d, const struct frame *s)
{
	uint64_t ip = s->ip, sp = s->sp, bp = s->bp, slot = s->bpslot;
	uint32_t cb = s->cfabp;

	__asm__("" : "+r"(ip), "+r"(sp), "+r"(bp), "+r"(slot), "+r"(cb));
	d->ip = ip;
	d->sp = sp;
	d->bp = bp;
	d->bpslot = slot;
	d->cfabp = cb;
}

/* Prefix hashes and rbp dependences of f[from..n-1] (those before are right). */
static inline __attribute__((always_inline)) void finish(struct uw_state *st, int from)
{
	struct frame *f = st->f;
	uint64_t h = from ? f[from - 1].hash : MT_UNWIND_SEED;
	uint32_t need = from ? f[from - 1].needbp : (uint32_t)st->open;
	for (int k = from; k < st->n; k++) {
		h = mt_unwind_mix(h, f[k].ip);
		f[k].hash = h;
		need = f[k].cfabp || (!f[k].bpslot && need);
		f[k].needbp = need;
	}
}

/*
 * A walk is made of segments, innermost first: frames found by rule (in
 * st->in[a..b-1]) and runs of the kept walk proven equal (f[a..b], the
 * outer end first). Runs usually keep their place in f: only the frames
 * between them are written.
 */
#define UW_SEGS 32
struct seg {
	int run;
	int a, b;
};

/*
 * The walk from the frame whose registers are ip, sp, bp, at most size
 * frames: their number (st->f and st->ips, outermost first), or -1 where
 * a rule cannot be had (the caller falls back).
 */
static inline __attribute__((always_inline)) int walk(struct uw_state *st, uint64_t ip, uint64_t sp, uint64_t bp, int size)
{
	/* After any dlclose the cache is emptied and the kept walk dropped
	 * (gen is never 0), so that neither outlives the 16-bit generation's
	 * wrap: a thread idle across 65,535 dlcloses would otherwise meet
	 * its old gen again (each entry is also checked against gen, for a
	 * dlclose that runs while this walk does). */
	uint64_t all = __atomic_load_n(&rgen_all, __ATOMIC_ACQUIRE);
	if (MT_UNLIKELY(st->rc_gen != all)) {
		if (st->rc_gen)         /* a new state's pages are zero already */
			memset(st->rc, 0, sizeof(st->rc));
		st->rc_gen = all;
		st->gen = 0;
	}
	const struct rtab *t = __atomic_load_n(&rtab, __ATOMIC_ACQUIRE);
	unsigned gen = rgen;
	struct frame *f = st->f, *in = st->in;
	struct seg seg[UW_SEGS];
	int j = 0, from = 0, nseg = 0, total = 0, rc, open = 0;
	int c = st->gen == gen ? st->n - 1 : -1;
	const int kept = c;

	st->hit = 0;
	st->same = 0;
	st->keep = 0;
	for (;;) {
		/* the kept walk's frame at this stack pointer, if any */
		while (c >= 0 && f[c].sp < sp)
			c--;
		if (c >= 0 && f[c].sp == sp && f[c].ip == ip && (f[c].bp == bp || !f[c].needbp) &&
		    MT_LIKELY(nseg + 3 <= UW_SEGS)) {
			/* This frame is kept frame c: the kept steps outward from
			 * it are checked word by word, down to frame v. A saved
			 * rbp that no step outward of its frame depends on need
			 * not be the same (the frame keeps a stale one, which
			 * nothing compares: see needbp). */
			int v = c;
			while (v > 0 && *(const uint64_t *)(uintptr_t)(f[v - 1].sp - 8) == f[v - 1].ip &&
			       (!f[v].bpslot || !f[v - 1].needbp ||
				*(const uint64_t *)(uintptr_t)f[v].bpslot == f[v - 1].bp))
				v--;
			if (MT_LIKELY(v == 0 && !st->open && !nseg && c + 1 + j <= size)) {
				/* The usual: new frames, then all of the kept walk
				 * from frame c out. Only the new ones are written. */
				for (int k = 0; k < j; k++) {
					put_frame(&f[c + 1 + k], &in[j - 1 - k]);
					st->ips[c + 1 + k] = in[j - 1 - k].ip;
				}
				st->n = c + 1 + j;
				st->hit = 1;
				st->same = j == 0 && c == kept;
				st->keep = c + 1;
				finish(st, c + 1);
				return st->n;
			}
			if (j > from)
				seg[nseg++] = (struct seg){ 0, from, j };
			if (c - v + 1 > size - total)
				v = c - (size - total) + 1;
			seg[nseg++] = (struct seg){ 1, v, c };
			total += c - v + 1;
			st->hit = 1;
			if (total >= size) {
				open = 1;
				break;
			}
			if (v == 0 && !st->open)
				break;          /* the kept walk's end is this one's */
			/* Steps on by rule from frame v, with its true rbp: a
			 * kept frame's may be stale where nothing depended on it,
			 * and now something outward may. (The slots read are the
			 * ones a walk from frame c would read.) */
			f[c].bp = bp;
			for (int k = c - 1; k >= v; k--)
				f[k].bp = f[k + 1].bpslot ?
					*(const uint64_t *)(uintptr_t)f[k + 1].bpslot : f[k + 1].bp;
			rc = step(st->rc, t, gen, &f[v], &ip, &sp, &bp);
			c = v - 1;
			from = j;
		} else {
			in[j].ip = ip;
			in[j].sp = sp;
			in[j].bp = bp;
			rc = step(st->rc, t, gen, &in[j], &ip, &sp, &bp);
			j++;
			total++;
			if (MT_LIKELY(rc == S_NEXT) && total >= size) {
				open = 1;
				seg[nseg++] = (struct seg){ 0, from, j };
				break;
			}
		}
		if (MT_UNLIKELY(rc != S_NEXT)) {
			if (rc == S_HARD) {
				st->n = 0;      /* may be half rewritten: kept no more */
				return -1;
			}
			open = rc == S_NULL;
			if (j > from)
				seg[nseg++] = (struct seg){ 0, from, j };
			break;
		}
	}

	/* The new walk, outermost first: runs stay where they are, frames
	 * found by rule go between them. Where a run would have to move
	 * inward over one not yet placed, the whole walk is gathered in
	 * st->out first. */
	int at = 0, changed = -1;
	for (int s = nseg - 1; s >= 0; s--) {
		if (seg[s].run && seg[s].a < at)
			goto gather;
		at += seg[s].run ? seg[s].b - seg[s].a + 1 : seg[s].b - seg[s].a;
	}
	at = 0;
	for (int s = nseg - 1; s >= 0; s--) {
		if (seg[s].run) {
			int len = seg[s].b - seg[s].a + 1;
			if (seg[s].a != at) {
				memmove(f + at, f + seg[s].a, (size_t)len * sizeof(*f));
				memmove(st->ips + at, st->ips + seg[s].a, (size_t)len * sizeof(*st->ips));
				if (changed < 0)
					changed = at;
			}
			at += len;
		} else {
			if (changed < 0)
				changed = at;
			for (int k = seg[s].b - 1; k >= seg[s].a; k--) {
				st->ips[at] = in[k].ip;
				put_frame(&f[at++], &in[k]);
			}
		}
	}
	goto placed;
gather:
	at = 0;
	for (int s = 0; s < nseg; s++) {
		if (seg[s].run)
			for (int k = seg[s].b; k >= seg[s].a; k--)
				st->out[at++] = f[k];
		else
			for (int k = seg[s].a; k < seg[s].b; k++)
				st->out[at++] = in[k];
	}
	for (int k = 0; k < at; k++) {
		f[k] = st->out[at - 1 - k];
		st->ips[k] = f[k].ip;
	}
	changed = 0;
placed:
	/* the outermost frame's dependence on rbp changes with open */
	if (open != st->open)
		changed = 0;
	st->n = at;
	st->open = open;
	st->gen = gen;
	if (changed >= 0)
		finish(st, changed);
	return at;
}

/*
 * The frames of a walk of n, less those of the recorder at the inner end
 * and those past max, outermost first. *hash: theirs, when the walk
 * reached the stack's end (it keeps the prefix hashes), else 0.
 */
static inline const uint64_t *program_frames(struct uw_state *st, int n, unsigned max,
					     unsigned *np, uint64_t *hash)
{
	int i = n;
	while (i > 0 && st->ips[i - 1] >= mt_self_lo && st->ips[i - 1] < mt_self_hi)
		i--;
	*hash = 0;
	if ((unsigned)i > max) {
		*np = max;
		return st->ips + i - max;
	}
	if (i > 0 && !st->open)
		*hash = st->f[i - 1].hash;
	*np = (unsigned)i;
	return st->ips;
}

/*
 * The outermost program frames of a capture (ips, np: program_frames')
 * that are the thread's last capture's (mt_tls.keep_frames), was: that
 * capture was a walk (the kept one). Only when neither was cut at max:
 * then program frames and walk frames are counted alike from the
 * outermost. No more than either has.
 */
static unsigned shared_outer(struct uw_state *st, const uint64_t *ips, unsigned np, int was)
{
	unsigned before = was && st->whole ? st->prog_n : 0;
	st->whole = ips == st->ips;
	st->prog_n = np;
	unsigned keep = st->whole ? (unsigned)st->keep : 0;
	keep = keep < before ? keep : before;
	return keep < np ? keep : np;
}

/*
 * The walk starts at the caller of the function whose frame pointer is
 * fp, or further out: the recorder keeps frame pointers, so its own
 * frames (the hook's, between the program and the capture) are left by
 * their chain, without a rule each (a step of the walk's 2 to 7 a
 * capture on the bench's programs). A chain that goes down the stack or
 * far up it stops there, and the walk steps on by rule (as from a frame
 * of the program that called a hook by a tail call).
 */
static inline const uint64_t *first_frame(const uint64_t *fr)
{
	while (fr[1] >= mt_self_lo && fr[1] < mt_self_hi) {
		const uint64_t *up = (const uint64_t *)(uintptr_t)fr[0];
		if (up <= fr || (uintptr_t)up - (uintptr_t)fr > (1u << 16) || ((uintptr_t)up & 7))
			break;
		fr = up;
	}
	return fr;
}

/*
 * A thread whose stacks keep meeting frames the walk cannot take (code
 * made at run time without unwind tables, a handler of a signal that
 * comes often) pays for both walks: after FALLBACKS_IN_A_ROW of them it
 * leaves its next SKIP_AFTER captures to libunwind, then tries again.
 */
#define FALLBACKS_IN_A_ROW 64
#define SKIP_AFTER 4096

static const uint64_t *fast_backtrace(void *fp, unsigned max, uint64_t *scratch, unsigned *np,
				      uint64_t *hash)
{
	struct uw_state *st = state();
	const uint64_t *fr = fp;
	int n;
	mt_tls.same_stack = 0;
	mt_tls.keep_frames = 0;
	if (MT_UNLIKELY(!st))
		return full_bt(fp, max, scratch, np, hash);
	if (MT_UNLIKELY(st->skip)) {
		st->skip--;
		st->walked = 0;
		return full_bt(fp, max, scratch, np, hash);
	}
	fr = first_frame(fr);
	n = walk(st, fr[1], (uintptr_t)(fr + 2), fr[0], (int)max + UW_SLACK);
	if (MT_UNLIKELY(n < 0)) {
		if (++st->misses == FALLBACKS_IN_A_ROW) {
			st->misses = 0;
			st->skip = SKIP_AFTER;
		}
		st->walked = 0;
		return full_bt(fp, max, scratch, np, hash);
	}
	st->misses = 0;
	/* the same frames as the thread's last capture, when that was a walk
	 * too (its frames are the kept walk) and this one kept it unchanged */
	mt_tls.same_stack = st->same && st->walked;
	int was = st->walked;
	st->walked = 1;
	const uint64_t *ips = program_frames(st, n, max, np, hash);
	mt_tls.keep_frames = shared_outer(st, ips, *np, was);
	return ips;
}

/* ---- check mode ------------------------------------------------------------------ */

static unsigned long check_stacks, check_reused, check_same, check_mismatches, check_fallbacks;

/*
 * Both walks on the same stack, the program's frames compared, and the
 * walk's hash against one computed over them; a walk that calls its
 * frames the last capture's unchanged (mt_tls.same_stack, as
 * fast_backtrace sets it) is also compared with the last capture
 * libunwind made.
 */
static const uint64_t *check_backtrace(void *fp, unsigned max, uint64_t *scratch, unsigned *np,
				       uint64_t *hash)
{
	struct uw_state *st = state();
	const uint64_t *fr = fp;
	uint64_t ref[UW_FRAMES], ignored;
	unsigned m;
	int n;
	mt_tls.same_stack = 0;
	mt_tls.keep_frames = 0;
	if (st && !st->prev && !(st->prev = mt_mem_alloc_kept(UW_FRAMES * sizeof(uint64_t))))
		st = NULL;
	fr = first_frame(fr);
	if (!st || (n = walk(st, fr[1], (uintptr_t)(fr + 2), fr[0], (int)max + UW_SLACK)) < 0) {
		__atomic_add_fetch(&check_fallbacks, 1, __ATOMIC_RELAXED);
		if (st)
			st->walked = 0;
		return full_bt(fp, max, scratch, np, hash);
	}
	const uint64_t *ips = program_frames(st, n, max, np, hash);
	const uint64_t *rips = full_bt(fp, max, ref, &m, &ignored);
	int same = m == *np && memcmp(ips, rips, m * sizeof(*ips)) == 0;
	if (*hash && *hash != mt_unwind_hash(ips, *np))
		same = 0;
	__atomic_add_fetch(&check_stacks, 1, __ATOMIC_RELAXED);
	if (st->hit)
		__atomic_add_fetch(&check_reused, 1, __ATOMIC_RELAXED);
	mt_tls.same_stack = st->same && st->walked;
	if (mt_tls.same_stack) {
		__atomic_add_fetch(&check_same, 1, __ATOMIC_RELAXED);
		if (m != st->prevn || memcmp(rips, st->prev, m * sizeof(*rips)))
			same = 0;
	}
	/* the outer frames it calls the last capture's, against libunwind's */
	unsigned keep = shared_outer(st, ips, *np, st->walked);
	if (keep > st->prevn || memcmp(rips, st->prev, keep * sizeof(*rips))) {
		same = 0;
		keep = 0;       /* (tbuf.c would take the claim on trust) */
	}
	mt_tls.keep_frames = keep;
	st->walked = 1;
	memcpy(st->prev, rips, m * sizeof(*rips));
	st->prevn = m;
	/* Said at once too: a program may end without running destructors. */
	if (!same && __atomic_add_fetch(&check_mismatches, 1, __ATOMIC_RELAXED) <= 5)
		mt_say("unwind check: a stack differs from the full unwinder's", NULL);
	return ips;
}

__attribute__((destructor)) static void check_report(void)
{
	char a[24], b[24], c[24], d[24], e[24];
	if (uw_mode != MT_UNWIND_CHECK)
		return;
	mt_fmt_i64(a, (int64_t)__atomic_load_n(&check_stacks, __ATOMIC_RELAXED));
	mt_fmt_i64(b, (int64_t)__atomic_load_n(&check_reused, __ATOMIC_RELAXED));
	mt_fmt_i64(c, (int64_t)__atomic_load_n(&check_mismatches, __ATOMIC_RELAXED));
	mt_fmt_i64(d, (int64_t)__atomic_load_n(&check_fallbacks, __ATOMIC_RELAXED));
	mt_fmt_i64(e, (int64_t)__atomic_load_n(&check_same, __ATOMIC_RELAXED));
	mt_say("unwind check: ", a, " stacks, ", b, " reused, ", e, " same, ", d, " fallbacks, ",
	       c, " mismatches", NULL);
}

uintptr_t mt_unwind_caller_sp(void *fp, uintptr_t lo, uintptr_t hi)
{
	struct uw_state *st = full_bt ? state() : NULL;

	if (!st)
		return 0;
	const uint64_t *fr = first_frame(fp);
	int n = walk(st, fr[1], (uintptr_t)(fr + 2), fr[0], UW_FRAMES);
	/* f[] is outermost first: the innermost frame in [lo, hi), then the
	 * one outward of it. Every ip here is a return address: the call is
	 * the byte before (a call to a function that does not return may be
	 * the last instruction of the caller). */
	for (int k = n - 1; k > 0; k--)
		if (st->f[k].ip - 1 >= lo && st->f[k].ip - 1 < hi)
			return (uintptr_t)st->f[k - 1].sp;
	return 0;
}

/* ---- setup ---------------------------------------------------------------------- */

mt_backtrace_fn mt_unwind_setup(mt_backtrace_fn full, void (*flush)(void), int mode)
{
	flush_full = flush;
	if (mode == MT_UNWIND_FULL)
		return full;
	find_object = (int (*)(void *, struct dl_find_object *))dlsym(RTLD_DEFAULT,
								      "_dl_find_object");
	if (!find_object) {
		mt_say("no _dl_find_object (glibc before 2.35): unwinding in full", NULL);
		return full;
	}
	rtab = rtab_new(4096);
	if (!rtab || pthread_key_create(&uw_key, uw_thread_exit) != 0) {
		mt_say("out of memory for the unwinder: unwinding in full", NULL);
		return full;
	}
	full_bt = full;
	uw_mode = mode;
	return mode == MT_UNWIND_CHECK ? check_backtrace : fast_backtrace;
}

#else  /* not x86-64: libunwind only */

static void (*flush_full)(void);

void mt_unwind_forget(void)
{
	if (flush_full)
		flush_full();
}

void mt_unwind_child(void)
{
}

mt_backtrace_fn mt_unwind_setup(mt_backtrace_fn full, void (*flush)(void), int mode)
{
	flush_full = flush;
	if (mode != MT_UNWIND_FULL)
		mt_say("incremental unwinding is for x86-64 only: unwinding in full", NULL);
	return full;
}

uintptr_t mt_unwind_caller_sp(void *fp, uintptr_t lo, uintptr_t hi)
{
	(void)fp;
	(void)lo;
	(void)hi;
	return 0;
}

#endif
