/*
 * leak_kinds.c - a sample whose live blocks at exit fall into each of
 * memcheck's four kinds, each for a reason worked out below; one thread,
 * no stdio stream (stdio mallocs a buffer on first use), so every heap
 * block is one the program asks for itself.
 *
 * For: tests/e2e/leak_memcheck.sh (memtrail's classification equals
 * valgrind memcheck --leak-check=full's, block for block and byte for
 * byte) and report's leak figures. Not for: threads (leak_thread.c).
 *
 *   overwritten() malloc 1,000 B into the global `keep`, then malloc 10 B
 *                 into the same global: the 1,000 B block has no pointer
 *                 left anywhere: definitely lost; the 10 B block is
 *                 reachable (from `keep`, in the program's bss).
 *   lost_list()   a list of 3 nodes of 48 B (a next pointer and 40 B),
 *                 built from the head, whose only pointer (a local) dies
 *                 with the function: the head is definitely lost (nothing
 *                 points to it), the two nodes after it are indirectly
 *                 lost (pointed to only from lost blocks): 48 B definite,
 *                 96 B in 2 blocks indirect.
 *   interior()    malloc 200 B, keep only `mid`, a pointer 64 B into it:
 *                 possibly lost (its first word is 0, so none of
 *                 memcheck's heuristics for interior pointers applies).
 *   in_mmap()     mmap an anonymous page, store a malloc'ed 400 B
 *                 block's address in it (and the page's in a global):
 *                 reachable, from a mapping the program made.
 *   in_tls()      malloc 500 B into a __thread variable: reachable, from
 *                 the main thread's TLS.
 *
 *   definitely lost  1,048 B in 2 blocks (1,000 + 48)
 *   indirectly lost     96 B in 2 blocks
 *   possibly lost      200 B in 1 block
 *   still reachable    910 B in 3 blocks (10 + 400 + 500)
 *   leaked (live at exit) 2,254 B in 8 blocks; allocations 8, frees 0.
 *
 * The lost pointers must not linger where a scan would find them: each
 * allocation happens in a function of its own (noinline), and
 * wipe_stack() writes zeros over the stack below main's frame before it
 * returns, as the frames of the exit path would not reach every slot.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct node {
	struct node *next;
	char pad[40];
};

void *volatile keep;
char *volatile mid;
void **volatile page;
static __thread void *volatile tls_block;

__attribute__((noinline)) static void overwritten(void)
{
	keep = malloc(1000);
	keep = malloc(10);
}

__attribute__((noinline)) static void lost_list(void)
{
	struct node *head = NULL;
	for (int i = 0; i < 3; i++) {
		struct node *n = calloc(1, sizeof(*n));
		n->next = head;
		head = n;
	}
	head = NULL;
}

__attribute__((noinline)) static void interior(void)
{
	char *b = calloc(1, 200);
	mid = b + 64;
}

__attribute__((noinline)) static void in_mmap(void)
{
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		exit(1);
	page[3] = malloc(400);
}

__attribute__((noinline)) static void in_tls(void)
{
	tls_block = malloc(500);
}

__attribute__((noinline)) static void wipe_stack(void)
{
	volatile char junk[16384];
	memset((char *)junk, 0, sizeof(junk));
}

int main(void)
{
	overwritten();
	lost_list();
	interior();
	in_mmap();
	in_tls();
	wipe_stack();
	return 0;
}
