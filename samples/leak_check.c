/*
 * leak_check.c - a leak check in the middle of a run (memtrail_leak_check,
 * memcheck's VALGRIND_DO_LEAK_CHECK at the same point) and another at
 * exit, each with kinds worked out by hand. No stdio stream, so every
 * heap block is one the program asks for itself.
 *
 * For: tests/e2e/leak_memcheck.sh (the check's kinds, in the summary's
 * snapshot, equal memcheck's first LEAK SUMMARY; those at exit its last).
 * Not for: the kinds' reasons in detail (leak_kinds.c).
 *
 *   lose()        malloc 1,000 B into the global `keep`, then 10 B into
 *                 it: the 1,000 B block is definitely lost.
 *   lose_list()   3 nodes of 48 B linked from a head only a local points
 *                 to: 48 B definitely lost, 96 B in 2 blocks indirectly.
 *   check "mid"   definitely lost 1,048 B in 2 blocks, indirectly 96 B in
 *                 2, possibly 0, still reachable 10 B in 1 (`keep`).
 *   then          free(keep), keep = NULL.
 *   at exit       definitely lost 1,048 B in 2, indirectly 96 B in 2,
 *                 possibly 0, still reachable 0.
 *
 * wipe_stack() zeroes the stack below main's frame before each check, so
 * that no slot left by a deeper call still holds a lost block's address.
 */
#include <stdlib.h>
#include <string.h>

#include <memtrail.h>
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif

struct node {
	struct node *next;
	char pad[40];
};

void *volatile keep;

__attribute__((noinline)) static void lose(void)
{
	keep = malloc(1000);
	keep = malloc(10);
}

__attribute__((noinline)) static void lose_list(void)
{
	struct node *head = NULL;
	for (int i = 0; i < 3; i++) {
		struct node *n = calloc(1, sizeof(*n));
		n->next = head;
		head = n;
	}
	head = NULL;
}

__attribute__((noinline)) static void wipe_stack(void)
{
	volatile char junk[16384];
	memset((char *)junk, 0, sizeof(junk));
}

__attribute__((noinline)) static void check(void)
{
	memtrail_leak_check_named("mid");
#ifdef VALGRIND_DO_LEAK_CHECK
	VALGRIND_DO_LEAK_CHECK;
#endif
}

int main(void)
{
	lose();
	lose_list();
	wipe_stack();
	check();
	free(keep);
	keep = NULL;
	wipe_stack();
	return 0;
}
