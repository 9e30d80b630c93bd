/*
 * api_dlsym.c - a program written against the original memtrail's header,
 * for tests/e2e/rec_api_names.sh: there, memtrail_snapshot is a static
 * function pointer that starts out at a resolver, which on the first call
 * looks "memtrail_snapshot" up with dlsym(RTLD_DEFAULT) and falls back to
 * a no-op when the library is not preloaded. The labelled variant is
 * looked up the same way.
 *
 * Heap, with live bytes at each snapshot (stdout's buffer comes after the
 * last one, at the printf):
 *   malloc(1000)                        snapshot 0 ""     1,000 B  1 block
 *   malloc(24)                          snapshot 1 "two"  1,024 B  2 blocks
 *   free the 1,000 B                    snapshot 2 ""        24 B  1 block
 *   free the 24 B, print "done"
 *
 * Not for: anything but that test; not a sample.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*snapshot_fn)(void);
typedef void (*snapshot_named_fn)(const char *);

static void snapshot_resolve(void);
static void snapshot_noop(void)
{
}

static snapshot_fn memtrail_snapshot = snapshot_resolve;

static void snapshot_resolve(void)
{
	snapshot_fn f = (snapshot_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "memtrail_snapshot");

	memtrail_snapshot = f ? f : snapshot_noop;
	memtrail_snapshot();
}

int main(void)
{
	snapshot_named_fn named;
	char *a, *b;

	a = malloc(1000);
	if (!a)
		return 1;
	memset(a, 'a', 1000);
	memtrail_snapshot();
	b = malloc(24);
	if (!b)
		return 1;
	memset(b, 'b', 24);
	named = (snapshot_named_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "memtrail_snapshot_named");
	if (named)
		named("two");
	free(a);
	memtrail_snapshot();
	free(b);
	printf("done\n");
	return 0;
}
