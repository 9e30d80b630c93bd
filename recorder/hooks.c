/*
 * hooks.c - the entry points libmemtrail.so exports in place of the C
 * library's and libstdc++'s: the allocator (malloc ... pvalloc,
 * malloc_usable_size), every C++ operator new/delete, the exec family,
 * _exit/_Exit, dlclose, dl_iterate_phdr (see children.c), sigaction/signal
 * (to hide our handlers), and close, close_range, closefrom, dup2, dup3
 * (to keep the program's descriptor hygiene off the log's descriptor).
 *
 * This is the hot path. A hook checks the thread's guard, calls the real
 * function (with the guard held, so what that does inside is not counted
 * again), captures the stack without any lock (through mt_backtrace: the
 * walker of unwind.c, or libunwind's unw_backtrace()), and hands
 * (stack, size, address) to core.c, which puts it in the thread's ring (tbuf.c).
 * No malloc, no stdio, no lock here.
 *
 * Before the real functions are known (dlsym itself calls calloc), requests
 * are served from a small static bootstrap arena; a free() of a pointer in
 * it is ignored and never recorded.
 *
 * Not for: encoding, tables, I/O (core.c and below).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recorder.h"
#include "unwind.h"

struct mt_real mt_real;

/* Exported here, declared nowhere else in C. */
void cfree(void *p);
void *_Znwm(size_t n);
void *_Znam(size_t n);
void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt);
void *_ZnamRKSt9nothrow_t(size_t n, const void *nt);
void *_ZnwmSt11align_val_t(size_t n, size_t al);
void *_ZnamSt11align_val_t(size_t n, size_t al);
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt);
void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt);
void _ZdlPv(void *p);
void _ZdaPv(void *p);
void _ZdlPvm(void *p, size_t n);
void _ZdaPvm(void *p, size_t n);
void _ZdlPvRKSt9nothrow_t(void *p, const void *nt);
void _ZdaPvRKSt9nothrow_t(void *p, const void *nt);
void _ZdlPvSt11align_val_t(void *p, size_t al);
void _ZdaPvSt11align_val_t(void *p, size_t al);
void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al);
void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al);
void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt);
void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt);

/* ---- bootstrap arena -------------------------------------------------------- */

#define BOOT_SIZE (256 * 1024)
#define BOOT_HDR  16

static char boot_arena[BOOT_SIZE] __attribute__((aligned(64)));
static size_t boot_used;

static inline int in_boot(const void *p)
{
	return (const char *)p >= boot_arena && (const char *)p < boot_arena + BOOT_SIZE;
}

/* Static memory is zeroed and never reused, so this also serves calloc. */
static void *boot_alloc(size_t n)
{
	size_t need = (n + BOOT_HDR + 15) & ~(size_t)15;
	if (n > BOOT_SIZE)
		return NULL;
	size_t off = __atomic_fetch_add(&boot_used, need, __ATOMIC_RELAXED);
	if (off + need > BOOT_SIZE)
		return NULL;
	*(size_t *)(boot_arena + off) = n;
	return boot_arena + off + BOOT_HDR;
}

static size_t boot_size(const void *p)
{
	return *(const size_t *)((const char *)p - BOOT_HDR);
}

/*
 * What a vfork child may call (exec, _exit) is looked up at start, so that
 * such a child, which shares our memory, never runs dlsym.
 */
static void *real_execve, *real_execv, *real_execvp, *real_execvpe, *real_fexecve,
	*real_execveat, *real_exit, *real_Exit, *real_dl_iterate;

void mt_hooks_resolve(void)
{
	struct mt_real r;
	/* Fill a local copy, then publish: until then every hook still
	 * sees NULL and uses the arena, also for dlsym's own calloc. */
	r.malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	r.free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	r.calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	r.realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	r.reallocarray = (void *(*)(void *, size_t, size_t))dlsym(RTLD_NEXT, "reallocarray");
	r.memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
	r.posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
	r.aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
	r.valloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "valloc");
	r.pvalloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "pvalloc");
	r.malloc_usable_size = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
	real_execve = dlsym(RTLD_NEXT, "execve");
	real_execv = dlsym(RTLD_NEXT, "execv");
	real_execvp = dlsym(RTLD_NEXT, "execvp");
	real_execvpe = dlsym(RTLD_NEXT, "execvpe");
	real_fexecve = dlsym(RTLD_NEXT, "fexecve");
	real_execveat = dlsym(RTLD_NEXT, "execveat");
	real_exit = dlsym(RTLD_NEXT, "_exit");
	real_Exit = dlsym(RTLD_NEXT, "_Exit");
	real_dl_iterate = dlsym(RTLD_NEXT, "dl_iterate_phdr");
	mt_real = r;
}

/* ---- guard and capture --------------------------------------------------------- */

static inline void guard_leave(int *unused)
{
	(void)unused;
	mt_tls.guard--;
}

/* Holds the guard until the end of the block, also when an exception
 * passes through (the recorder is built with -fexceptions). */
#define GUARDED \
	int mt_guard_scope_ __attribute__((cleanup(guard_leave), unused)) = (mt_tls.guard++, 0)

/* Recording applies to this call? (Also starts the recorder on first use.) */
static inline int recording(void)
{
	if (MT_UNLIKELY(!mt_real.malloc))
		mt_rec_init();
	return MT_LIKELY(!mt_tls.guard && mt_rec_active);
}

/*
 * Captures the caller's stack (scratch: room for mt_rec_depth + 16
 * frames, for libunwind's walk) and hashes it for the stack table.
 * Always inlined: its frame pointer is the caller's, where the walk
 * begins (unwind.h).
 */
static inline __attribute__((always_inline)) void capture(struct mt_capture *c,
							 uint64_t *scratch, unsigned fn)
{
	unsigned m;
	uint64_t h;
	c->ips = mt_backtrace(__builtin_frame_address(0), mt_rec_depth, scratch, &m, &h);
	c->n = m;
	c->fn = fn;
	c->same = mt_tls.same_stack;
	c->keep = mt_tls.keep_frames;
	/* The walker hands the frames' hash over when it has it (it mixes
	 * in only the frames that changed since the thread's last stack);
	 * else it is computed here. The tag path is part of a stack's
	 * identity. */
	c->tag = mt_tagtls.cur;
	if (!h)
		h = mt_unwind_hash(c->ips, m);
	h ^= 0xC2B2AE3D27D4EB4Full * (fn + 1) + m + ((uint64_t)c->tag << 24);
	h *= 0x9E3779B97F4A7C15ull;
	c->hash = h ^ (h >> 32);
}

/*
 * Captures the stack and records an allocation. Out of line: its frame,
 * like the hook's, lies in our own text and is dropped with it.
 */
static __attribute__((noinline)) void record_drawn(void *p, size_t size, unsigned fn)
{
	uint64_t buf[MT_MAX_DEPTH + 16];
	struct mt_capture c;
	mt_sample_note(p);
	capture(&c, buf, fn);
	mt_rec_alloc(&c, p, size);
}

/* Sampling's check inline: an allocation that is not drawn costs no call
 * (the call and record_drawn's frame were most of a hook's cost then). */
static inline __attribute__((always_inline)) void record_alloc(void *p, size_t size, unsigned fn)
{
	if (mt_sample_take(size))
		record_drawn(p, size, fn);
}

/* The same for realloc, which tbuf.c performs between its two order keys. */
static __attribute__((noinline)) void *record_realloc(void *p, size_t nmemb, size_t n, unsigned fn)
{
	uint64_t buf[MT_MAX_DEPTH + 16];
	struct mt_capture c;
	/* sampling: the new half is drawn on its own size; an old half that
	 * was not recorded is nothing to the log, nor to core.c's lock */
	int take = nmemb && n && mt_sample_take(nmemb * n);
	if (!mt_sample_held(p)) {
		void *r = nmemb == 1 ? mt_real.realloc(p, n) : mt_real.reallocarray(p, nmemb, n);
		if (r && take) {
			int saved = errno;
			mt_sample_note(r);
			capture(&c, buf, fn);
			mt_rec_alloc(&c, r, nmemb * n);
			errno = saved;
		}
		return r;
	}
	if (!take)
		return mt_rec_realloc(NULL, p, nmemb, n);
	capture(&c, buf, fn);
	void *r = mt_rec_realloc(&c, p, nmemb, n);
	/* counted in before the program has it (see mt_sample_note) */
	if (r)
		mt_sample_note(r);
	return r;
}

/* ---- the C allocator ------------------------------------------------------------- */

MT_EXPORT void *malloc(size_t n)
{
	if (MT_UNLIKELY(!mt_real.malloc)) {
		mt_rec_init();
		if (!mt_real.malloc)
			return boot_alloc(n);
	}
	if (MT_UNLIKELY(mt_tls.guard || !mt_rec_active))
		return mt_real.malloc(n);
	/* Sampling: an allocation not drawn is the real allocator's alone,
	 * with no guard (glibc's malloc calls no hook of ours). Drawn before
	 * the allocation, the point of one that fails is spent: the process
	 * counts bytes asked for. */
	if (!mt_sample_take(n))
		return mt_real.malloc(n);
	mt_tls.guard++;
	void *p = mt_real.malloc(n);
	if (p)
		record_drawn(p, n, MT_FN_MALLOC);
	mt_tls.guard--;
	return p;
}

MT_EXPORT void free(void *p)
{
	if (!p || MT_UNLIKELY(in_boot(p)))
		return;
	if (MT_UNLIKELY(!mt_real.free)) {
		mt_rec_init();
		if (!mt_real.free)
			return;
	}
	/* sampling: a block not recorded is the real allocator's alone */
	if (MT_UNLIKELY(mt_tls.guard || !mt_rec_active) || !mt_sample_held(p)) {
		mt_real.free(p);
		return;
	}
	mt_tls.guard++;
	mt_rec_free(p);
	mt_real.free(p);
	mt_tls.guard--;
}

MT_EXPORT void cfree(void *p)
{
	free(p);
}

MT_EXPORT void *calloc(size_t nmemb, size_t size)
{
	if (MT_UNLIKELY(!mt_real.calloc)) {
		mt_rec_init();
		if (!mt_real.calloc) {
			if (size && nmemb > SIZE_MAX / size)
				return NULL;
			return boot_alloc(nmemb * size);
		}
	}
	if (MT_UNLIKELY(mt_tls.guard || !mt_rec_active))
		return mt_real.calloc(nmemb, size);
	mt_tls.guard++;
	void *p = mt_real.calloc(nmemb, size);
	if (p)
		record_alloc(p, nmemb * size, MT_FN_CALLOC);
	mt_tls.guard--;
	return p;
}

/* realloc of a bootstrap block: move it to the real heap (recorded). */
static void *boot_realloc(void *p, size_t n)
{
	if (n == 0)
		return NULL;
	void *q = malloc(n);
	if (q) {
		size_t old = boot_size(p);
		memcpy(q, p, old < n ? old : n);
	}
	return q;
}

MT_EXPORT void *realloc(void *p, size_t n)
{
	if (MT_UNLIKELY(!mt_real.realloc)) {
		mt_rec_init();
		if (!mt_real.realloc) {
			void *q = boot_alloc(n);
			if (q && p)
				memcpy(q, p, in_boot(p) && boot_size(p) < n ? boot_size(p) : n);
			return q;
		}
	}
	if (MT_UNLIKELY(p && in_boot(p)))
		return boot_realloc(p, n);
	if (MT_UNLIKELY(mt_tls.guard || !mt_rec_active))
		return mt_real.realloc(p, n);
	mt_tls.guard++;
	void *r;
	if (!p) {
		r = mt_real.realloc(NULL, n);
		if (r)
			record_alloc(r, n, MT_FN_REALLOC);
	} else {
		r = record_realloc(p, 1, n, MT_FN_REALLOC);
	}
	mt_tls.guard--;
	return r;
}

MT_EXPORT void *reallocarray(void *p, size_t nmemb, size_t size)
{
	if (!recording() || MT_UNLIKELY(!mt_real.reallocarray)) {
		if (!mt_real.reallocarray) {
			errno = ENOMEM;
			return NULL;
		}
		if (p && in_boot(p)) {
			if (size && nmemb > SIZE_MAX / size) {
				errno = ENOMEM;
				return NULL;
			}
			return boot_realloc(p, nmemb * size);
		}
		return mt_real.reallocarray(p, nmemb, size);
	}
	if (p && in_boot(p)) {
		if (size && nmemb > SIZE_MAX / size) {
			errno = ENOMEM;
			return NULL;
		}
		return boot_realloc(p, nmemb * size);
	}
	mt_tls.guard++;
	void *r;
	if (!p) {
		r = mt_real.reallocarray(NULL, nmemb, size);
		if (r)
			record_alloc(r, nmemb * size, MT_FN_REALLOCARRAY);
	} else if (nmemb == 1) {
		/* mt_rec_realloc reads nmemb == 1 as plain realloc: the same. */
		r = record_realloc(p, 1, size, MT_FN_REALLOCARRAY);
	} else {
		r = record_realloc(p, nmemb, size, MT_FN_REALLOCARRAY);
	}
	mt_tls.guard--;
	return r;
}

/* The aligned allocators share one shape. */
#define ALIGNED_HOOK(call, size, fn)                            \
	do {                                                    \
		if (!recording())                               \
			return call;                            \
		mt_tls.guard++;                                 \
		void *p_ = call;                                \
		if (p_)                                         \
			record_alloc(p_, size, fn);             \
		mt_tls.guard--;                                 \
		return p_;                                      \
	} while (0)

MT_EXPORT void *memalign(size_t align, size_t n)
{
	if (!recording() && !mt_real.memalign)
		return NULL;
	ALIGNED_HOOK(mt_real.memalign(align, n), n, MT_FN_MEMALIGN);
}

MT_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (!recording() && !mt_real.aligned_alloc)
		return NULL;
	ALIGNED_HOOK(mt_real.aligned_alloc(align, n), n, MT_FN_ALIGNED_ALLOC);
}

MT_EXPORT void *valloc(size_t n)
{
	if (!recording() && !mt_real.valloc)
		return NULL;
	ALIGNED_HOOK(mt_real.valloc(n), n, MT_FN_VALLOC);
}

MT_EXPORT void *pvalloc(size_t n)
{
	if (!recording() && !mt_real.pvalloc)
		return NULL;
	ALIGNED_HOOK(mt_real.pvalloc(n), n, MT_FN_PVALLOC);
}

MT_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (!recording()) {
		if (!mt_real.posix_memalign)
			return ENOMEM;
		return mt_real.posix_memalign(out, align, n);
	}
	mt_tls.guard++;
	int r = mt_real.posix_memalign(out, align, n);
	if (r == 0)
		record_alloc(*out, n, MT_FN_POSIX_MEMALIGN);
	mt_tls.guard--;
	return r;
}

MT_EXPORT size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (in_boot(p))
		return boot_size(p);
	if (MT_UNLIKELY(!mt_real.malloc_usable_size)) {
		mt_rec_init();
		if (!mt_real.malloc_usable_size)
			return 0;
	}
	return mt_real.malloc_usable_size(p);
}

/* ---- C++ operators ---------------------------------------------------------------- */

/* The next definition of a symbol, looked up once (guard held: dlsym allocates). */
static void *next_sym(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (MT_LIKELY(f != NULL))
		return f;
	mt_tls.guard++;
	f = dlsym(RTLD_NEXT, name);
	mt_tls.guard--;
	__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	return f;
}

#define NEXT(type, name) ({ static void *slot_; (type)next_sym(&slot_, name); })

/*
 * operator new variants. Without libstdc++ further down (nothing to call),
 * fall back on the C allocator; that cannot throw, so it returns NULL.
 */
#define NEW_HOOK(real, call, fallback, size, fn)                \
	do {                                                    \
		if (!recording()) {                             \
			if (real)                               \
				return call;                    \
			return fallback;                        \
		}                                               \
		GUARDED;                                        \
		void *p_ = real ? call : fallback;              \
		if (p_)                                         \
			record_alloc(p_, size, fn);             \
		return p_;                                      \
	} while (0)

typedef void *(*new1_t)(size_t);
typedef void *(*new2_t)(size_t, const void *);
typedef void *(*newa_t)(size_t, size_t);
typedef void *(*newa2_t)(size_t, size_t, const void *);

MT_EXPORT void *_Znwm(size_t n)
{
	new1_t real = NEXT(new1_t, "_Znwm");
	NEW_HOOK(real, real(n), mt_real.malloc(n), n, MT_FN_NEW);
}

MT_EXPORT void *_Znam(size_t n)
{
	new1_t real = NEXT(new1_t, "_Znam");
	NEW_HOOK(real, real(n), mt_real.malloc(n), n, MT_FN_NEW_ARRAY);
}

MT_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt)
{
	new2_t real = NEXT(new2_t, "_ZnwmRKSt9nothrow_t");
	NEW_HOOK(real, real(n, nt), mt_real.malloc(n), n, MT_FN_NEW);
}

MT_EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *nt)
{
	new2_t real = NEXT(new2_t, "_ZnamRKSt9nothrow_t");
	NEW_HOOK(real, real(n, nt), mt_real.malloc(n), n, MT_FN_NEW_ARRAY);
}

MT_EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t al)
{
	newa_t real = NEXT(newa_t, "_ZnwmSt11align_val_t");
	NEW_HOOK(real, real(n, al), mt_real.memalign(al, n), n, MT_FN_NEW_ALIGNED);
}

MT_EXPORT void *_ZnamSt11align_val_t(size_t n, size_t al)
{
	newa_t real = NEXT(newa_t, "_ZnamSt11align_val_t");
	NEW_HOOK(real, real(n, al), mt_real.memalign(al, n), n, MT_FN_NEW_ARRAY_ALIGNED);
}

MT_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt)
{
	newa2_t real = NEXT(newa2_t, "_ZnwmSt11align_val_tRKSt9nothrow_t");
	NEW_HOOK(real, real(n, al, nt), mt_real.memalign(al, n), n, MT_FN_NEW_ALIGNED);
}

MT_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *nt)
{
	newa2_t real = NEXT(newa2_t, "_ZnamSt11align_val_tRKSt9nothrow_t");
	NEW_HOOK(real, real(n, al, nt), mt_real.memalign(al, n), n, MT_FN_NEW_ARRAY_ALIGNED);
}

/* operator delete variants: record the free, then the real operator. */
#define DELETE_HOOK(real, call, p)                              \
	do {                                                    \
		if (!p)                                         \
			break;                                  \
		if (recording()) {                              \
			GUARDED;                                \
			if (mt_sample_held(p))                  \
				mt_rec_free(p);                 \
			if (real)                               \
				call;                           \
			else                                    \
				mt_real.free(p);                \
		} else if (real) {                              \
			call;                                   \
		} else if (mt_real.free) {                      \
			mt_real.free(p);                        \
		}                                               \
	} while (0)

typedef void (*del1_t)(void *);
typedef void (*del2_t)(void *, size_t);
typedef void (*delp_t)(void *, const void *);
typedef void (*del3_t)(void *, size_t, size_t);
typedef void (*dela2_t)(void *, size_t, const void *);

MT_EXPORT void _ZdlPv(void *p)
{
	del1_t real = NEXT(del1_t, "_ZdlPv");
	DELETE_HOOK(real, real(p), p);
}

MT_EXPORT void _ZdaPv(void *p)
{
	del1_t real = NEXT(del1_t, "_ZdaPv");
	DELETE_HOOK(real, real(p), p);
}

MT_EXPORT void _ZdlPvm(void *p, size_t n)
{
	del2_t real = NEXT(del2_t, "_ZdlPvm");
	DELETE_HOOK(real, real(p, n), p);
}

MT_EXPORT void _ZdaPvm(void *p, size_t n)
{
	del2_t real = NEXT(del2_t, "_ZdaPvm");
	DELETE_HOOK(real, real(p, n), p);
}

MT_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt)
{
	delp_t real = NEXT(delp_t, "_ZdlPvRKSt9nothrow_t");
	DELETE_HOOK(real, real(p, nt), p);
}

MT_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt)
{
	delp_t real = NEXT(delp_t, "_ZdaPvRKSt9nothrow_t");
	DELETE_HOOK(real, real(p, nt), p);
}

MT_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al)
{
	del2_t real = NEXT(del2_t, "_ZdlPvSt11align_val_t");
	DELETE_HOOK(real, real(p, al), p);
}

MT_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al)
{
	del2_t real = NEXT(del2_t, "_ZdaPvSt11align_val_t");
	DELETE_HOOK(real, real(p, al), p);
}

MT_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al)
{
	del3_t real = NEXT(del3_t, "_ZdlPvmSt11align_val_t");
	DELETE_HOOK(real, real(p, n, al), p);
}

MT_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al)
{
	del3_t real = NEXT(del3_t, "_ZdaPvmSt11align_val_t");
	DELETE_HOOK(real, real(p, n, al), p);
}

MT_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt)
{
	dela2_t real = NEXT(dela2_t, "_ZdlPvSt11align_val_tRKSt9nothrow_t");
	DELETE_HOOK(real, real(p, al, nt), p);
}

MT_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt)
{
	dela2_t real = NEXT(dela2_t, "_ZdaPvSt11align_val_tRKSt9nothrow_t");
	DELETE_HOOK(real, real(p, al, nt), p);
}

/* ---- exec family -------------------------------------------------------------------- */

/*
 * Each exec flushes the log and writes END(EXEC) first, holding the log lock
 * through the call. If the exec fails, the END chunk is cut off the file
 * again and recording goes on as before (core.c mt_rec_exec_failed).
 * When following children, the new program gets MEMTRAIL_IMAGE in its
 * environment (children.c): the calls without an environment become the
 * ones with environ, and env_ is a copy of it with that variable on the
 * stack. A vfork child execs untouched (it may not touch our state).
 */
typedef int (*execve_t)(const char *, char *const[], char *const[]);
typedef int (*execv_t)(const char *, char *const[]);
typedef int (*fexecve_t)(int, char *const[], char *const[]);
typedef int (*execveat_t)(int, const char *, char *const[], char *const[], int);

#define EXEC_HOOK(call, envp, what)                     \
	do {                                            \
		char *const *env_ = (envp);             \
		char **buf_ = NULL;                     \
		size_t slots_ = 0;                      \
		if (!real) {                            \
			errno = ENOSYS;                 \
			return -1;                      \
		}                                       \
		mt_rec_note_exec(what);                 \
		if (mt_rec_foreign())                   \
			return call;                    \
		if (mt_children_following()) {          \
			slots_ = mt_children_env_slots(env_); \
			buf_ = __builtin_alloca(slots_ * sizeof(char *)); \
		}                                       \
		mt_tls.guard++;                         \
		mt_rec_exec_begin();                    \
		if (buf_)                               \
			env_ = mt_children_env(env_, buf_, slots_); \
		int r_ = call;                          \
		int e_ = errno;                         \
		mt_rec_exec_failed();                   \
		mt_tls.guard--;                         \
		errno = e_;                             \
		return r_;                              \
	} while (0)

static int do_execve(const char *path, char *const argv[], char *const envp[])
{
	execve_t real = (execve_t)next_sym(&real_execve, "execve");
	EXEC_HOOK(real(path, argv, env_), envp, path);
}

static int do_execvpe(const char *file, char *const argv[], char *const envp[])
{
	execve_t real = (execve_t)next_sym(&real_execvpe, "execvpe");
	EXEC_HOOK(real(file, argv, env_), envp, file);
}

static int do_execv(const char *path, char *const argv[])
{
	execv_t real = (execv_t)next_sym(&real_execv, "execv");
	if (mt_children_following())
		return do_execve(path, argv, environ);
	EXEC_HOOK(real(path, argv), NULL, path);
}

static int do_execvp(const char *file, char *const argv[])
{
	execv_t real = (execv_t)next_sym(&real_execvp, "execvp");
	if (mt_children_following())
		return do_execvpe(file, argv, environ);
	EXEC_HOOK(real(file, argv), NULL, file);
}

MT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return do_execve(path, argv, envp);
}

MT_EXPORT int execv(const char *path, char *const argv[])
{
	return do_execv(path, argv);
}

MT_EXPORT int execvp(const char *file, char *const argv[])
{
	return do_execvp(file, argv);
}

MT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return do_execvpe(file, argv, envp);
}

MT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	fexecve_t real = (fexecve_t)next_sym(&real_fexecve, "fexecve");
	EXEC_HOOK(real(fd, argv, env_), envp, argv[0] ? argv[0] : "(fexecve)");
}

MT_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	execveat_t real = (execveat_t)next_sym(&real_execveat, "execveat");
	EXEC_HOOK(real(dirfd, path, argv, env_, flags), envp, path);
}

/* Counts the variadic arguments after arg0 up to the NULL. */
static size_t count_args(va_list ap)
{
	size_t n = 1;
	while (va_arg(ap, const char *))
		n++;
	return n;
}

/*
 * The execl family builds argv on the stack (alloca: no malloc), so this is
 * a macro: the array must live in the hook's own frame. It leaves `ap`
 * positioned after the arguments' terminating NULL; the caller ends it.
 */
#define EXECL_ARGV(argv, arg, ap) \
	size_t n_; \
	va_start(ap, arg); \
	n_ = count_args(ap); \
	va_end(ap); \
	char **argv = __builtin_alloca((n_ + 1) * sizeof(char *)); \
	argv[0] = (char *)(arg); \
	va_start(ap, arg); \
	for (size_t i_ = 1; i_ < n_; i_++) \
		argv[i_] = va_arg(ap, char *); \
	argv[n_] = NULL; \
	(void)va_arg(ap, char *)

MT_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	EXECL_ARGV(argv, arg, ap);
	va_end(ap);
	return do_execv(path, argv);
}

MT_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	EXECL_ARGV(argv, arg, ap);
	va_end(ap);
	return do_execvp(file, argv);
}

MT_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	EXECL_ARGV(argv, arg, ap);
	char **envp = va_arg(ap, char **);
	va_end(ap);
	return do_execve(path, argv, envp);
}

/* ---- signal dispositions ---------------------------------------------------------- */

/*
 * The recorder takes over fatal signals left at SIG_DFL (to flush the log
 * before dying) and the snapshot signal. A program asking for the current
 * disposition is told SIG_DFL, as it would be without memtrail; a program
 * installing its own handler replaces ours, as it should.
 */
typedef int (*sigaction_t)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*signal_t)(int, sighandler_t);

MT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	sigaction_t real = NEXT(sigaction_t, "sigaction");
	struct sigaction ours;
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	/* Back to the default: the recorder's handler, which ends the log and
	 * then takes the default action, stands in for it. */
	if (act && act->sa_handler == SIG_DFL && !(act->sa_flags & SA_SIGINFO) &&
	    !mt_tls.guard && mt_rec_fatal_action(sig, &ours))
		act = &ours;
	int r = real(sig, act, old);
	if (r == 0 && old && !(old->sa_flags & SA_SIGINFO) && mt_rec_handler_ours(old->sa_handler)) {
		old->sa_handler = SIG_DFL;
		old->sa_flags = 0;
		sigemptyset(&old->sa_mask);
	}
	return r;
}

MT_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	signal_t real = NEXT(signal_t, "signal");
	struct sigaction ours;
	if (!real) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	if (handler == SIG_DFL && !mt_tls.guard && mt_rec_fatal_action(sig, &ours))
		handler = ours.sa_handler;
	sighandler_t old = real(sig, handler);
	return old != SIG_ERR && mt_rec_handler_ours(old) ? SIG_DFL : old;
}

/* ---- the log's descriptor ------------------------------------------------------------ */

/*
 * Daemons and careful programs close every descriptor but 0-2 at start, or
 * dup2 onto numbers they pick: the log's descriptor (moved high, see
 * core.c) must survive both, and the program must see what it would see
 * without memtrail, where that number is not open. So close() of it fails
 * with EBADF, close_range and closefrom skip it, and dup2/dup3 onto it
 * first move the log to another number. (A raw system call that closes it
 * anyway is caught before the next write: core.c reopens the same file.)
 * Calls from inside memtrail (guard held) pass straight through.
 */
typedef int (*close_t)(int);
typedef int (*close_range_t)(unsigned, unsigned, int);
typedef int (*dup2_t)(int, int);
typedef int (*dup3_t)(int, int, int);

MT_EXPORT int close(int fd)
{
	close_t real = NEXT(close_t, "close");
	if (MT_UNLIKELY(mt_rec_is_log_fd(fd))) {
		errno = EBADF;
		return -1;
	}
	return real ? real(fd) : (int)syscall(SYS_close, fd);
}

/* close_range over [first, last] minus the log's descriptor. */
static int close_range_but_log(unsigned first, unsigned last, int flags)
{
	int log = mt_rec_log_fd();
	int r = 0;
	if (log < 0 || (unsigned)log < first || (unsigned)log > last)
		return (int)syscall(SYS_close_range, first, last, flags);
	if ((unsigned)log > first)
		r = (int)syscall(SYS_close_range, first, (unsigned)log - 1, flags);
	if (r == 0 && (unsigned)log < last)
		r = (int)syscall(SYS_close_range, (unsigned)log + 1, last, flags);
	return r;
}

MT_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (mt_tls.guard) {
		close_range_t real = NEXT(close_range_t, "close_range");
		return real ? real(first, last, flags) : (int)syscall(SYS_close_range, first, last, flags);
	}
	return close_range_but_log(first, last, flags);
}

MT_EXPORT void closefrom(int lowfd)
{
	unsigned low = lowfd < 0 ? 0 : (unsigned)lowfd;
	if (close_range_but_log(low, ~0u, 0) == 0)
		return;
	/* No close_range (a kernel before 5.9): one close per number. */
	struct rlimit rl;
	unsigned top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1u << 20 ?
		(unsigned)rl.rlim_cur : 1u << 20;
	for (unsigned fd = low; fd < top; fd++)
		close((int)fd);
}

MT_EXPORT int dup2(int oldfd, int newfd)
{
	dup2_t real = NEXT(dup2_t, "dup2");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (MT_LIKELY(!mt_rec_is_log_fd(newfd)) || oldfd == newfd)
		return real(oldfd, newfd);
	mt_rec_log_fd_vacate(newfd);
	int r = real(oldfd, newfd);
	if (r < 0) {
		int e = errno;
		mt_rec_log_fd_vacated(newfd);
		errno = e;
	}
	return r;
}

MT_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	dup3_t real = NEXT(dup3_t, "dup3");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (MT_LIKELY(!mt_rec_is_log_fd(newfd)) || oldfd == newfd)
		return real(oldfd, newfd, flags);
	mt_rec_log_fd_vacate(newfd);
	int r = real(oldfd, newfd, flags);
	if (r < 0) {
		int e = errno;
		mt_rec_log_fd_vacated(newfd);
		errno = e;
	}
	return r;
}

/* ---- _exit ------------------------------------------------------------------------ */

typedef void (*exit_t)(int);

MT_EXPORT void _exit(int status)
{
	exit_t real = (exit_t)next_sym(&real_exit, "_exit");
	if (!mt_tls.guard && !mt_rec_foreign())
		mt_rec_exit_now(status);
	if (real)
		real(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

MT_EXPORT void _Exit(int status)
{
	exit_t real = (exit_t)next_sym(&real_Exit, "_Exit");
	if (!mt_tls.guard && !mt_rec_foreign())
		mt_rec_exit_now(status);
	if (real)
		real(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

/* ---- dynamic loading ------------------------------------------------------------------ */

/*
 * dl_iterate_phdr passes through; when following children it holds
 * children.c's read lock, which a fork waits for (glibc does not reset the
 * loader's lock in a forked child, and libunwind calls this on every stack
 * it has not seen yet). glibc iterates over the link namespace of its
 * caller's return address: otherwise this is a tail call, so that is the
 * program's; when following, the caller seems to be this library (the
 * base namespace), which matters only for code loaded with dlmopen.
 */
typedef int (*dl_iterate_t)(int (*)(struct dl_phdr_info *, size_t, void *), void *);

MT_EXPORT int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	dl_iterate_t real = (dl_iterate_t)next_sym(&real_dl_iterate, "dl_iterate_phdr");
	if (!real)
		return 0;
	if (!mt_children_following())
		return real(cb, data);
	mt_children_dl_enter();
	int r = real(cb, data);
	mt_children_dl_leave();
	return r;
}

/*
 * dlopen is not hooked: glibc resolves a relative name with the RUNPATH
 * and $ORIGIN of dlopen's caller, found from the return address, which a
 * hook would make its own. New objects are noticed instead when a new stack
 * has a frame outside every known module (core.c). dlclose has no such
 * dependence: after it, the module table is checked for unloads.
 */
typedef int (*dlclose_t)(void *);

MT_EXPORT int dlclose(void *h)
{
	dlclose_t real = NEXT(dlclose_t, "dlclose");
	if (!real)
		return -1;
	if (!mt_tls.guard && mt_rec_active)
		mt_rec_modules_sync();  /* stacks in the object, named first */
	int r = real(h);
	if (r == 0)
		mt_unwind_forget();
	if (r == 0 && !mt_tls.guard && mt_rec_active)
		mt_rec_modules_changed(1);
	return r;
}
