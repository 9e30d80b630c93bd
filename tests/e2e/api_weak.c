/*
 * api_weak.c - a program that declares the snapshot functions weak itself,
 * without memtrail.h, for tests/e2e/rec_api_names.sh. It is linked with
 * api_header.c, which includes memtrail.h: the header's static inline
 * functions of the same names and these weak references live side by side
 * in one program.
 *
 * Heap, with live bytes at each snapshot (stdout's buffer comes after the
 * last one, at the printf):
 *   malloc(500)                          snapshot 0 ""        500 B  1 block
 *                                        snapshot 1 "weak"    500 B  1 block
 *   api_header_part: malloc(300)         snapshot 2 "header"  800 B  2 blocks
 *   free the 500 B                       snapshot 3 ""        300 B  1 block
 *   free the 300 B, print "done"
 *
 * Not for: anything but that test; not a sample.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void memtrail_snapshot(void) __attribute__((weak));
void memtrail_snapshot_named(const char *label) __attribute__((weak));

/* api_header.c */
char *api_header_part(void);

int main(void)
{
	char *a, *b;

	a = malloc(500);
	if (!a)
		return 1;
	memset(a, 'a', 500);
	if (memtrail_snapshot)
		memtrail_snapshot();
	if (memtrail_snapshot_named)
		memtrail_snapshot_named("weak");
	b = api_header_part();
	if (!b)
		return 1;
	free(a);
	if (memtrail_snapshot)
		memtrail_snapshot();
	free(b);
	printf("done\n");
	return 0;
}
