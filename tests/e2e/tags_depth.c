/*
 * tags_depth.c - the edges of memtrail_tag_push / memtrail_tag_pop, for
 * report_tags.sh. Every block is leaked on purpose, so the leaks per tag
 * path show where each allocation was counted:
 *   70 nested scopes d0 .. d69: the recorder keeps 64 (the format's
 *   depth), so 11 B count under d0/d1/.../d63, and memtrail says once on
 *   stderr that deeper scopes are not recorded; the 70 pops then close all
 *   of them, and a 71st pop is ignored: 13 B untagged.
 *   "a", then an empty name (which pushes "a" again, so that pops stay
 *   paired): 17 B and, after one pop, 19 B under "a".
 *   "x" then "y" from the same buffer: 23 B under x, 29 B under y (the
 *   name is copied at the push, whatever the buffer holds later).
 * Not for: anything but that test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memtrail.h>

static void *volatile sink;

static __attribute__((noinline)) void take(size_t n)
{
	sink = malloc(n);
}

int main(void)
{
	char name[16];
	int i;

	for (i = 0; i < 70; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		memtrail_tag_push(name);
	}
	take(11);
	for (i = 0; i < 70; i++)
		memtrail_tag_pop();
	memtrail_tag_pop();
	take(13);

	memtrail_tag_push("a");
	memtrail_tag_push("");
	take(17);
	memtrail_tag_pop();
	take(19);
	memtrail_tag_pop();

	strcpy(name, "x");
	memtrail_tag_push(name);
	take(23);
	memtrail_tag_pop();
	strcpy(name, "y");
	memtrail_tag_push(name);
	take(29);
	memtrail_tag_pop();
	puts("tags_depth: done");
	return 0;
}
