/*
 * memtrail.h - the in-program API of memtrail, the heap profiler.
 *
 *   #include <memtrail.h>
 *   ...
 *   memtrail_snapshot();                 // snapshot 0, 1, 2... in order
 *   memtrail_snapshot_named("loaded");   // the same, with a label
 *   memtrail_tag_push("parser");         // allocations from here on, on
 *   ...                                  // this thread, are tagged "parser"
 *   memtrail_tag_pop();                  // (nested: "parser/lexer")
 *   { memtrail::tag_scope t("parser"); ... }   // C++: pops at scope end
 *   memtrail_leak_check();               // a snapshot that also classifies
 *   memtrail_leak_check_named("warm");   // what is live, as memcheck's
 *                                        // VALGRIND_DO_LEAK_CHECK
 *
 * Header only: a program that includes it needs no link flag, and when it
 * runs without memtrail (no libmemtrail.so preloaded) the calls do nothing.
 * Under `memtrail record` each call appends a numbered snapshot marker to the
 * log and prints `memtrail: snapshot N: LIVE bytes (+DELTA)` on stderr; a
 * leak check also scans the process for which live blocks are still
 * reachable (definitely, indirectly, possibly lost, still reachable) and
 * prints `memtrail: leak check N: LIVE bytes live: D definitely lost, ...`.
 *
 * Tags: each thread has a stack of scopes; every allocation carries the
 * path of the scopes open on its thread when it was made ("parser/lexer"),
 * and `memtrail report --by-tag` / `--tag PATH` group and filter by it.
 * Push and pop pair up per thread; the name is copied. Cheap enough to stay
 * in production code: without memtrail a call is one test of a NULL
 * pointer; under memtrail a push of a scope the thread entered recently and
 * every pop take no lock, and an allocation pays nothing more for its tag.
 *
 * How: the preloaded library exports memtrail_snapshot_impl(). This header
 * declares it as a weak symbol, which the dynamic linker binds at load time
 * when libmemtrail.so is preloaded and leaves NULL otherwise; no dlsym call
 * (which allocates when the symbol is missing) and no link flag. See
 * memtrail_snapshot(3).
 *
 * The library also exports memtrail_snapshot() and
 * memtrail_snapshot_named() themselves, for programs without this header
 * (the original memtrail's header looks "memtrail_snapshot" up with
 * dlsym; others declare it weak). The functions below are static, so a
 * program that includes this header calls its own copies and never clashes
 * with those.
 */
#ifndef MEMTRAIL_H
#define MEMTRAIL_H

#ifdef __cplusplus
extern "C" {
#endif

extern void memtrail_snapshot_impl(const char *label) __attribute__((weak));
extern void memtrail_tag_push_impl(const char *name) __attribute__((weak));
extern void memtrail_tag_pop_impl(void) __attribute__((weak));

/* Appends a snapshot marker to the recording; a no-op without memtrail. */
static inline void memtrail_snapshot_named(const char *label)
{
	if (memtrail_snapshot_impl)
		memtrail_snapshot_impl(label ? label : "");
}

static inline void memtrail_snapshot(void)
{
	memtrail_snapshot_named("");
}

/*
 * Opens a tag scope named name (not empty; a name with "/" in it reads as
 * nested scopes in reports) on the calling thread, inside the scopes it
 * already has open; a no-op without memtrail.
 */
static inline void memtrail_tag_push(const char *name)
{
	if (memtrail_tag_push_impl)
		memtrail_tag_push_impl(name);
}

/* Closes the calling thread's innermost tag scope; a no-op without memtrail. */
static inline void memtrail_tag_pop(void)
{
	if (memtrail_tag_pop_impl)
		memtrail_tag_pop_impl();
}

extern void memtrail_leak_check_impl(const char *label) __attribute__((weak));

/* A snapshot whose live blocks are classified; a no-op without memtrail. */
static inline void memtrail_leak_check_named(const char *label)
{
	if (memtrail_leak_check_impl)
		memtrail_leak_check_impl(label ? label : "");
}

static inline void memtrail_leak_check(void)
{
	memtrail_leak_check_named("");
}

#ifdef __cplusplus
}

namespace memtrail {
/* A tag scope for the lifetime of the object: pushed when made, popped
 * when destroyed (also by an exception unwinding through it). */
class tag_scope {
public:
	explicit tag_scope(const char *name) { memtrail_tag_push(name); }
	~tag_scope() { memtrail_tag_pop(); }
	tag_scope(const tag_scope &) = delete;
	tag_scope &operator=(const tag_scope &) = delete;
};
}
#endif

#endif
