/*
 * api_header.c - the half of tests/e2e/api_weak.c's program that uses
 * memtrail.h (see there): allocates 300 B and takes snapshot "header"
 * through the header's inline function.
 *
 * Not for: anything but that test.
 */
#include <stdlib.h>
#include <string.h>

#include <memtrail.h>

char *api_header_part(void);

char *api_header_part(void)
{
	char *p = malloc(300);

	if (p)
		memset(p, 'h', 300);
	memtrail_snapshot_named("header");
	return p;
}
