/*
 * unwind.c - the incremental unwinder (MEMTRAIL_UNWIND=incremental): each
 * capture unwinds only the frames pushed since the thread's previous capture
 * and reuses the rest; MEMTRAIL_UNWIND=check runs it and the full unwinder
 * on every event and counts the stacks that differ.
 *
 * The technique is a shadow stack, as in bytehound. A capture lets
 * libunwind's unw_backtrace() (the full unwinder, fast path included) walk
 * the stack; it writes, into the return-address slot of some frames it
 * walked, the address of a stub of ours instead of the real return address,
 * and remembers (slot, real address, position from the stack's bottom) in
 * a per-thread table: entry k is patched with stub k. The stubs carry
 * unwind information that says "the return address is undefined" (the end
 * of the stack, like _start's), so the next capture's unw_backtrace() stops
 * at the first patched frame: the stub's address, last in its output, says
 * which entry it is, and that entry's position says where the frames
 * remembered from before continue. When a patched frame returns, it
 * returns into stub k, which checks that entry k is live with exactly this
 * slot (else it stops the program with ud2: it cannot know where to
 * return), pops entry k and everything above it (frames inner to it, gone
 * with it), puts the real address back into the slot and
 * returns there, with every register but the flags as the function left
 * them (the stub saves what it uses below the stack pointer, where neither
 * the program nor the kernel's signal frames write at that moment).
 *
 * Why the result equals a full unwind: only return-address slots are
 * changed, and only while their frame is live. A frame that is still live
 * is exactly where the previous capture saw it, with the same return
 * address, and so are all frames outer to it (a live frame's callers are
 * live too, and their slots do not change while they are live: a program
 * writes its return addresses only by calling). So the frames outer to the
 * first patched frame are those remembered, and unw_backtrace() walked
 * every frame inner to it exactly as it would have. The checks on each
 * stack (the stub's index names a live table entry; the entries above it
 * belong to frames that are gone or on another stack, and are undone;
 * anything else undoes every patch and unwinds in full) keep that true.
 *
 * Where the program itself leaves frames without returning, every patch of
 * the thread is undone first (written back where the slot still holds our
 * stub), so that no other unwinder ever sees a stub: C++ exceptions and
 * forced unwinding (_Unwind_RaiseException, _Unwind_Resume,
 * _Unwind_Resume_or_Rethrow, _Unwind_ForcedUnwind, and _Unwind_Backtrace
 * for programs that print their own stacks), longjmp, siglongjmp,
 * _longjmp, __longjmp_chk, setcontext, swapcontext, pthread_exit. These
 * are exported here in every mode and jump straight to the real function
 * when nothing is patched. A switch to another stack that is not seen
 * (hand-written context switches) is found at the next capture: its
 * unwind meets no stub or a stub that is not the top entry, and the
 * patches on the other stack are undone (a suspended frame is live: its
 * real return address goes back). A thread that exits takes its table
 * with it (a pthread key's destructor). Frames are patched only from the
 * third frame of the program outward, never across a signal frame, never
 * where libunwind's step-by-step walk (which finds the slots: unw_backtrace
 * does not tell where the frames are) disagrees with it about the frames, and
 * only at positions that stayed live between captures, so that a stub is
 * rarely returned through.
 *
 * What it saves is libunwind's walk of the outer frames (about 8 ns a
 * frame): a program allocating under 50 stable frames records in half the
 * CPU time, but on churn, stl and python3 (tests/bench) the frames that
 * change are most of the walk, and the cache's upkeep costs what the
 * shorter walk saves (such a thread then unwinds in full for a while,
 * inc_backtrace); the hash and the interning of the whole stack (hooks.c,
 * core.c) stay.
 *
 * Known limits, why it is not the default: stack-copying coroutines
 * (greenlet) move patched slots to the heap and back where no capture sees
 * it; _Unwind_Backtrace or an exception run through an unwinder loaded
 * privately (glibc's backtrace() and pthread_cancel use their own copy of
 * libgcc) stops at a stub instead of the real caller; a signal taken while
 * a stub runs (a dozen instructions) records the handler's stack up to
 * there; x86-64 only. MEMTRAIL_UNWIND=check measures it against the full
 * unwinder (tests/e2e/rec_unwind.sh).
 *
 * Not for: what a stack becomes (hooks.c capture(), core.c); loading
 * libunwind (core.c load_unwinder).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unwind.h>

#include "recorder.h"
#include "unwind.h"

int mt_unwind_parse(const char *s)
{
	if (!s || !*s || strcmp(s, "full") == 0)
		return MT_UNWIND_FULL;
	if (strcmp(s, "incremental") == 0)
		return MT_UNWIND_INCREMENTAL;
	if (strcmp(s, "check") == 0)
		return MT_UNWIND_CHECK;
	return -1;
}

/* ---- the real functions the exported ones stand for ------------------------ */

typedef _Unwind_Reason_Code (*raise_fn)(struct _Unwind_Exception *);
typedef void (*resume_fn)(struct _Unwind_Exception *);
typedef _Unwind_Reason_Code (*forced_fn)(struct _Unwind_Exception *, _Unwind_Stop_Fn, void *);
typedef _Unwind_Reason_Code (*trace_fn)(_Unwind_Trace_Fn, void *);
typedef void (*jmp_fn)(void *, int);
typedef int (*setctx_fn)(const ucontext_t *);
typedef int (*swapctx_fn)(ucontext_t *, const ucontext_t *);
typedef void (*exit_fn)(void *);

enum { R_RAISE, R_RESUME, R_RETHROW, R_FORCED, R_TRACE, R_LONGJMP, R_LONGJMP_, R_SIGLONGJMP,
       R_LONGJMP_CHK, R_SETCONTEXT, R_SWAPCONTEXT, R_PTHREAD_EXIT, R_COUNT };

static const char *const real_names[R_COUNT] = {
	"_Unwind_RaiseException", "_Unwind_Resume", "_Unwind_Resume_or_Rethrow",
	"_Unwind_ForcedUnwind", "_Unwind_Backtrace", "longjmp", "_longjmp", "siglongjmp",
	"__longjmp_chk", "setcontext", "swapcontext", "pthread_exit",
};
static void *real_fns[R_COUNT];

/* libunwind's _Unwind_Backtrace: it finds the frames' slots. */
static trace_fn slow_backtrace;
static _Unwind_Ptr (*slow_get_ip_info)(struct _Unwind_Context *, int *);
static _Unwind_Word (*slow_get_cfa)(struct _Unwind_Context *);

/*
 * The function behind one of ours. Found at start where it is loaded; a
 * runtime loaded later (libgcc_s with a plugin, maybe without RTLD_GLOBAL)
 * is found on first use.
 */
static void *real(int i)
{
	void *f = __atomic_load_n(&real_fns[i], __ATOMIC_ACQUIRE);
	if (MT_LIKELY(f != NULL))
		return f;
	mt_tls.guard++;
	f = dlsym(RTLD_NEXT, real_names[i]);
	if (!f && i <= R_TRACE) {
		void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (h)
			f = dlsym(h, real_names[i]);
	}
	mt_tls.guard--;
	if (!f) {
		mt_say("cannot find ", real_names[i], NULL);
		abort();
	}
	__atomic_store_n(&real_fns[i], f, __ATOMIC_RELEASE);
	return f;
}

#if defined(__x86_64__)

/* ---- the stubs ------------------------------------------------------------------- */

#define UW_ENTS   256          /* stubs, and so patched frames per thread */
#define UW_FRAMES 512          /* frames a capture walks at most */
#define UW_CACHE  1024         /* frames remembered per thread */
#define UW_KEEP   2            /* innermost program frames never patched */
#define UW_RESET  4096         /* captures between two retries of patching deeper */
#define UW_WINDOW 1024         /* captures over which the saving is judged */
#define UW_MIN_SAVED 6         /* frames a capture must reuse on average... */
#define UW_PAUSE  65536        /* ...or the next this many unwind in full */

struct uw_ent {                /* 16 bytes: the stubs read it */
	uintptr_t *slot;
	uintptr_t ret;
};

struct uw_state {
	uint32_t count;        /* offset 0: live entries (the stubs read it) */
	uint32_t ceil;         /* highest position patched */
	uint32_t captures;     /* since ceil was last reset */
	uint32_t ncache;
	struct uw_ent ent[UW_ENTS];     /* offset 16 */
	uint32_t judged;                /* captures in this window */
	uint32_t saved;                 /* frames reused in this window */
	uint32_t paused;                /* captures left to unwind in full */
	uint32_t pos[UW_ENTS];          /* position of ent[k].ret in cache */
	uintptr_t cache[UW_CACHE];      /* the last stack, outermost first */
	void *ref[UW_FRAMES];           /* check mode's full unwind */
	uintptr_t wip[UW_FRAMES];       /* the slow walk: ip, cfa, signal frame */
	uintptr_t wcfa[UW_FRAMES];
	unsigned char wsig[UW_FRAMES];
	int wn;
	int hit;                        /* the last capture stopped at a stub */
};

__thread struct uw_state *mt_unwind_cur __attribute__((tls_model("initial-exec")));

void mt_unwind_stubs(void);
void mt_unwind_stubs_end(void);

/*
 * Stub k is at mt_unwind_stubs + 16 k. A patched frame's `ret` lands on
 * it with the stack pointer just above the slot; it pushes k into the slot
 * and goes on with the common part, which checks entry k, pops it, writes
 * the real address back into the slot and returns to it. Unwind info for
 * the whole range (and the byte before the first stub: unwinders look up
 * the return address minus one) says the return address is undefined.
 */
__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.type mt_unwind_stub_range, @function\n"
	"mt_unwind_stub_range:\n"
	"	.cfi_startproc\n"
	"	.cfi_undefined rip\n"
	"	.fill 16, 1, 0x90\n"
	"	.globl mt_unwind_stubs\n"
	"	.hidden mt_unwind_stubs\n"
	"mt_unwind_stubs:\n"
	"	.set mt_uw_k, 0\n"
	"	.rept 256\n"
	"	pushq $mt_uw_k\n"
	"	jmp mt_unwind_common\n"
	"	.p2align 4, 0x90\n"
	"	.set mt_uw_k, mt_uw_k + 1\n"
	"	.endr\n"
	"mt_unwind_common:\n"
	"	movq %rcx, -8(%rsp)\n"
	"	movq %rsi, -16(%rsp)\n"
	"	movq %r11, -24(%rsp)\n"
	"	movq (%rsp), %rcx\n"
	"	movq mt_unwind_cur@gottpoff(%rip), %r11\n"
	"	movq %fs:(%r11), %r11\n"
	"	testq %r11, %r11\n"
	"	jz 1f\n"
	"	cmpl (%r11), %ecx\n"
	"	jae 1f\n"
	"	movl %ecx, %esi\n"
	"	shlq $4, %rsi\n"
	"	leaq 16(%r11,%rsi), %rsi\n"
	"	cmpq (%rsi), %rsp\n"
	"	jne 1f\n"
	"	movq 8(%rsi), %rsi\n"
	"	movq %rsi, (%rsp)\n"
	"	movl %ecx, (%r11)\n"
	"	movq -8(%rsp), %rcx\n"
	"	movq -16(%rsp), %rsi\n"
	"	movq -24(%rsp), %r11\n"
	"	ret\n"
	"1:	ud2\n"
	"	.globl mt_unwind_stubs_end\n"
	"	.hidden mt_unwind_stubs_end\n"
	"mt_unwind_stubs_end:\n"
	"	.cfi_endproc\n"
	"	.size mt_unwind_stub_range, . - mt_unwind_stub_range\n");

static inline uintptr_t stub(uint32_t k)
{
	return (uintptr_t)mt_unwind_stubs + 16 * (uintptr_t)k;
}

/* Stub index of ip, or -1 if ip is not exactly a stub's start. */
static inline int stub_index(uintptr_t ip)
{
	uintptr_t off = ip - (uintptr_t)mt_unwind_stubs;
	if (off >= 16 * UW_ENTS || (off & 15))
		return -1;
	return (int)(off >> 4);
}

static inline int in_stubs(uintptr_t ip)
{
	return ip >= (uintptr_t)mt_unwind_stubs - 16 && ip < (uintptr_t)mt_unwind_stubs_end;
}

/* ---- per-thread state ------------------------------------------------------------- */

static mt_backtrace_fn full_bt;
static int uw_mode;
static pthread_key_t uw_key;

/* Undoes the patches of entries from..count-1, innermost first. */
static void undo_from(struct uw_state *st, uint32_t from)
{
	for (uint32_t i = st->count; i-- > from;) {
		if (*st->ent[i].slot == stub(i))
			*st->ent[i].slot = st->ent[i].ret;
	}
	st->count = from;
}

/* Before the program leaves frames without returning: no stub stays. */
static inline void undo_all(void)
{
	struct uw_state *st = mt_unwind_cur;
	if (st && st->count) {
		mt_tls.guard++;
		undo_from(st, 0);
		mt_tls.guard--;
	}
}

static void uw_thread_exit(void *p)
{
	struct uw_state *st = p;
	if (mt_unwind_cur == st) {
		undo_from(st, 0);
		mt_unwind_cur = NULL;
	}
	munmap(st, sizeof(*st));
}

static struct uw_state *state(void)
{
	struct uw_state *st = mt_unwind_cur;
	if (MT_LIKELY(st != NULL))
		return st;
	void *m = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	st = m;
	st->ceil = UINT32_MAX;
	mt_unwind_cur = st;
	pthread_setspecific(uw_key, st);
	return st;
}

/* ---- finding the slots: libunwind's _Unwind_Backtrace --------------------------- */

static _Unwind_Reason_Code walk_cb(struct _Unwind_Context *ctx, void *arg)
{
	struct uw_state *st = arg;
	int before = 0;
	if (st->wn >= UW_FRAMES)
		return _URC_END_OF_STACK;
	st->wip[st->wn] = (uintptr_t)slow_get_ip_info(ctx, &before);
	st->wcfa[st->wn] = (uintptr_t)slow_get_cfa(ctx);
	st->wsig[st->wn] = (unsigned char)(before != 0);
	st->wn++;
	return _URC_NO_REASON;
}

/*
 * Patches the return addresses at cache positions lo..hi (lo <= hi), which
 * are tmp[t] for t = top - p (top: position of tmp[0]), n frames in tmp.
 * The slot of tmp[t] is the word below the stack pointer of its frame at
 * the call (_Unwind_GetCFA for that frame), and must hold exactly
 * tmp[t]. Outermost first, so that the table stays ordered outer to inner.
 */
static void patch(struct uw_state *st, void **tmp, int lastidx, uint32_t top, uint32_t lo,
		  uint32_t hi, uintptr_t last)
{
	st->wn = 0;
	slow_backtrace(walk_cb, st);
	int w = st->wn, j = w;
	/* Align the walk's frames with unw_backtrace's at the outermost one
	 * unw_backtrace gave, last, at tmp index lastidx (a stub, or the
	 * stack's bottom, where the walk may list one more frame), then every
	 * frame used is compared. A signal frame's flag is on the sigreturn
	 * frame: neither its slot nor the interrupted frame's (not a slot: the
	 * signal context) is used. */
	while (j-- > 0 && st->wip[j] != last)
		;
	if (j < 0)
		return;
	int shift = j - lastidx;        /* wip[t + shift] is tmp[t] */
	for (uint32_t p = lo; p <= hi; p++) {
		int t = (int)(top - p);
		if (t < 1 || t + shift < 1 || t + shift >= w || st->count >= UW_ENTS)
			continue;
		if (st->wip[t + shift] != (uintptr_t)tmp[t] ||
		    st->wip[t - 1 + shift] != (uintptr_t)tmp[t - 1] ||
		    st->wsig[t + shift] || st->wsig[t - 1 + shift])
			continue;
		uintptr_t *slot = (uintptr_t *)(st->wcfa[t + shift] - 8);
		if (*slot != (uintptr_t)tmp[t])
			continue;
		uint32_t k = st->count;
		st->ent[k].slot = slot;
		st->ent[k].ret = *slot;
		st->pos[k] = p;
		st->count = k + 1;
		*slot = stub(k);
	}
}

/* ---- the capture ----------------------------------------------------------------- */

static inline int in_self(uintptr_t ip)
{
	return ip >= mt_self_lo && ip < mt_self_hi;
}

/*
 * Patches the new frames buf[0..n-1] (cache positions lo..top, buf[0] at
 * top; stubk: the stub unw_backtrace stopped at, or -1), from the UW_KEEP-th program frame outward, no deeper than ceil; a
 * first patch after a reset sets ceil to how deep it went.
 */
static void patch_new(struct uw_state *st, void **buf, int n, uint32_t lo, uint32_t top, int stubk)
{
	if (++st->captures >= UW_RESET) {
		st->captures = 0;
		st->ceil = UINT32_MAX;
	}
	int first = 0;
	while (first < n && in_self((uintptr_t)buf[first]))
		first++;
	int innermost = first + UW_KEEP;
	if (innermost >= n || !slow_backtrace)
		return;
	uint32_t hi = top - (uint32_t)innermost;
	if (st->ceil != UINT32_MAX && hi > st->ceil)
		hi = st->ceil;
	if (lo > hi)
		return;
	/* Walked with the stub (if any) still in place: the walk stops there
	 * too. */
	patch(st, buf, stubk >= 0 ? n : n - 1, top, lo, hi,
	      stubk >= 0 ? stub((uint32_t)stubk) : (uintptr_t)buf[n - 1]);
	if (st->ceil == UINT32_MAX)
		st->ceil = hi;
}

/*
 * The stack into buf (room for size frames), innermost first, exactly as
 * unw_backtrace(buf, size) gives it: unw_backtrace writes the frames down
 * to the first patched one (the stub, last), the cache the rest.
 */
static int incremental(struct uw_state *st, void **buf, int size)
{
	int n = full_bt(buf, size);
	int k = n > 0 ? stub_index((uintptr_t)buf[n - 1]) : -1;
	uint32_t base, top;

	st->hit = 0;
	/* A signal taken while a stub runs: the walk stopped inside it (its
	 * unwind info ends the stack). The stub needs its entry: nothing is
	 * undone, and this stack ends there. */
	if (n > 0 && MT_UNLIKELY(in_stubs((uintptr_t)buf[n - 1])) && k < 0)
		return n;
	if (k >= 0) {
		if ((uint32_t)k >= st->count || *st->ent[k].slot != stub((uint32_t)k) ||
		    st->pos[k] + (uint32_t)n >= UW_CACHE)
			goto again;
		/* Frames after entry k in the table are gone, or on another stack. */
		undo_from(st, (uint32_t)k + 1);
		st->hit = 1;
		base = st->pos[k];
		n--;                /* the stub: its frames are in the cache */
		top = base + (uint32_t)n;
		for (int i = 0; i < n; i++)
			st->cache[top - (uint32_t)i] = (uintptr_t)buf[i];
		st->ncache = top + 1;
		int total = n;
		for (uint32_t p = base + 1; p-- > 0 && total < size;)
			buf[total++] = (void *)st->cache[p];
		st->saved += (uint32_t)(total - n);
		/* Positions above base that were patched have returned since:
		 * patch no deeper than base for a while. */
		if (st->ceil != UINT32_MAX && st->ceil > base)
			st->ceil = base;
		patch_new(st, buf, n, base + 1, top, k);
		return total;
	}
	if (n >= size)
		return n;           /* deeper than asked: nothing to learn */
	if (st->count)
		undo_from(st, 0);   /* patched frames not met: on another stack */
	if (n < 1)
		return n;
	top = (uint32_t)n - 1;
	for (int i = 0; i < n; i++)
		st->cache[top - (uint32_t)i] = (uintptr_t)buf[i];
	st->ncache = top + 1;
	patch_new(st, buf, n, 0, top, -1);
	return n;
again:
	undo_from(st, 0);
	return full_bt(buf, size);
}

/*
 * Where the frames that change are most of the stack (a loop calling
 * through varying chains), the cache's upkeep costs more than the shorter
 * walk saves: such a thread unwinds in full for a while, with nothing
 * patched, and tries again.
 */
static int inc_backtrace(void **buf, int size)
{
	struct uw_state *st = state();
	if (!st || size < 1)
		return full_bt(buf, size);
	if (st->paused) {
		st->paused--;
		return full_bt(buf, size);
	}
	int n = incremental(st, buf, size);
	if (++st->judged >= UW_WINDOW) {
		if (st->saved < UW_WINDOW * UW_MIN_SAVED) {
			undo_from(st, 0);
			st->ceil = UINT32_MAX;
			st->paused = UW_PAUSE;
		}
		st->judged = st->saved = 0;
	}
	return n;
}

/* ---- check mode ------------------------------------------------------------------ */

static unsigned long check_stacks, check_reused, check_mismatches;

/* The frames of a stack outside libmemtrail (the hooks drop those). */
static void **program_part(void **ips, int *n)
{
	int i = 0;
	while (i < *n && in_self((uintptr_t)ips[i]))
		i++;
	*n -= i;
	return ips + i;
}

/*
 * Both unwinders on the same stack: the incremental one, then the full one
 * with every patch undone (the program's own stack, as without us), then
 * the patches put back. Compared outside our own frames.
 */
static int check_backtrace(void **buf, int size)
{
	struct uw_state *st = state();
	if (!st || size < 1)
		return full_bt(buf, size);
	int n = incremental(st, buf, size);

	uint32_t c = st->count;
	unsigned char undone[UW_ENTS];
	for (uint32_t i = 0; i < c; i++) {
		undone[i] = *st->ent[i].slot == stub(i);
		if (undone[i])
			*st->ent[i].slot = st->ent[i].ret;
	}
	int m = full_bt(st->ref, size);
	for (uint32_t i = 0; i < c; i++)
		if (undone[i])
			*st->ent[i].slot = stub(i);

	/* Called one frame apart, the two may cut a stack deeper than size
	 * one frame apart: then the shorter must be the start of the other. */
	int a = n, b = m;
	void **pa = program_part(buf, &a), **pb = program_part(st->ref, &b);
	int cut = n >= size || m >= size;
	int same = (cut || a == b) && memcmp(pa, pb, (size_t)(a < b ? a : b) * sizeof(void *)) == 0;
	__atomic_add_fetch(&check_stacks, 1, __ATOMIC_RELAXED);
	if (st->hit)
		__atomic_add_fetch(&check_reused, 1, __ATOMIC_RELAXED);
	/* Said at once too: a program may end without running destructors. */
	if (!same && __atomic_add_fetch(&check_mismatches, 1, __ATOMIC_RELAXED) <= 5)
		mt_say("unwind check: a stack differs from the full unwinder's", NULL);
	return n;
}

__attribute__((destructor)) static void check_report(void)
{
	char a[24], b[24], c[24];
	if (uw_mode != MT_UNWIND_CHECK)
		return;
	mt_fmt_i64(a, (int64_t)__atomic_load_n(&check_stacks, __ATOMIC_RELAXED));
	mt_fmt_i64(b, (int64_t)__atomic_load_n(&check_reused, __ATOMIC_RELAXED));
	mt_fmt_i64(c, (int64_t)__atomic_load_n(&check_mismatches, __ATOMIC_RELAXED));
	mt_say("unwind check: ", a, " stacks, ", b, " reused, ", c, " mismatches", NULL);
}

/* ---- setup ---------------------------------------------------------------------- */

mt_backtrace_fn mt_unwind_setup(mt_backtrace_fn full, int mode)
{
	for (int i = 0; i < R_COUNT; i++)
		if (!real_fns[i])
			real_fns[i] = dlsym(RTLD_NEXT, real_names[i]);
	if (mode == MT_UNWIND_FULL)
		return full;
	/* libunwind's _Unwind_* set, from the copy core.c opened privately:
	 * opening libgcc_s here would change what the program does (glibc
	 * opens it, allocating, on the first pthread_exit or cancel). */
	Dl_info di;
	void *h = NULL;
	if (dladdr((void *)full, &di) && di.dli_fname)
		h = dlopen(di.dli_fname, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
	if (h) {
		slow_backtrace = (trace_fn)dlsym(h, "_Unwind_Backtrace");
		slow_get_ip_info = (_Unwind_Ptr (*)(struct _Unwind_Context *, int *))
			dlsym(h, "_Unwind_GetIPInfo");
		slow_get_cfa = (_Unwind_Word (*)(struct _Unwind_Context *))dlsym(h, "_Unwind_GetCFA");
	}
	if (!slow_backtrace || !slow_get_ip_info || !slow_get_cfa ||
	    pthread_key_create(&uw_key, uw_thread_exit) != 0) {
		slow_backtrace = NULL;
		mt_say("libunwind has no _Unwind_Backtrace: unwinding in full", NULL);
		return full;
	}
	full_bt = full;
	uw_mode = mode;
	return mode == MT_UNWIND_CHECK ? check_backtrace : inc_backtrace;
}

#else  /* not x86-64: the full unwinder only */

static inline void undo_all(void)
{
}

mt_backtrace_fn mt_unwind_setup(mt_backtrace_fn full, int mode)
{
	for (int i = 0; i < R_COUNT; i++)
		if (!real_fns[i])
			real_fns[i] = dlsym(RTLD_NEXT, real_names[i]);
	if (mode != MT_UNWIND_FULL)
		mt_say("incremental unwinding is for x86-64 only: unwinding in full", NULL);
	return full;
}

#endif

/* ---- where the program leaves frames without returning --------------------------- */

MT_EXPORT _Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception *e)
{
	undo_all();
	return ((raise_fn)real(R_RAISE))(e);
}

MT_EXPORT void _Unwind_Resume(struct _Unwind_Exception *e)
{
	undo_all();
	((resume_fn)real(R_RESUME))(e);
	__builtin_unreachable();
}

MT_EXPORT _Unwind_Reason_Code _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e)
{
	undo_all();
	return ((raise_fn)real(R_RETHROW))(e);
}

MT_EXPORT _Unwind_Reason_Code _Unwind_ForcedUnwind(struct _Unwind_Exception *e,
						   _Unwind_Stop_Fn stop, void *arg)
{
	undo_all();
	return ((forced_fn)real(R_FORCED))(e, stop, arg);
}

MT_EXPORT _Unwind_Reason_Code _Unwind_Backtrace(_Unwind_Trace_Fn fn, void *arg)
{
	undo_all();
	return ((trace_fn)real(R_TRACE))(fn, arg);
}

MT_EXPORT void longjmp(struct __jmp_buf_tag env[1], int val)
{
	undo_all();
	((jmp_fn)real(R_LONGJMP))(env, val);
	__builtin_unreachable();
}

MT_EXPORT void _longjmp(struct __jmp_buf_tag env[1], int val)
{
	undo_all();
	((jmp_fn)real(R_LONGJMP_))(env, val);
	__builtin_unreachable();
}

MT_EXPORT void siglongjmp(struct __jmp_buf_tag env[1], int val)
{
	undo_all();
	((jmp_fn)real(R_SIGLONGJMP))(env, val);
	__builtin_unreachable();
}

void __longjmp_chk(struct __jmp_buf_tag env[1], int val);
MT_EXPORT void __longjmp_chk(struct __jmp_buf_tag env[1], int val)
{
	undo_all();
	((jmp_fn)real(R_LONGJMP_CHK))(env, val);
	__builtin_unreachable();
}

MT_EXPORT int setcontext(const ucontext_t *ucp)
{
	undo_all();
	return ((setctx_fn)real(R_SETCONTEXT))(ucp);
}

MT_EXPORT int swapcontext(ucontext_t *oucp, const ucontext_t *ucp)
{
	undo_all();
	return ((swapctx_fn)real(R_SWAPCONTEXT))(oucp, ucp);
}

MT_EXPORT void pthread_exit(void *ret)
{
	undo_all();
	((exit_fn)real(R_PTHREAD_EXIT))(ret);
	__builtin_unreachable();
}
