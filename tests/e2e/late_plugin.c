/*
 * late_plugin.c - the library samples/late_leak.c dlopens after its peak
 * (tests/e2e/report_late.sh builds it with cc -shared -fPIC -g): one
 * function that allocates 8,192 B from inside the library and hands the
 * block back, which the program keeps to the end (a leak whose stack has
 * frames in a module loaded after the peak).
 *
 * Not for: anything else; the figures are worked out in samples/late_leak.c.
 */
#include <stdlib.h>
#include <string.h>

void *plugin_leak(void);

void *plugin_leak(void)
{
	void *p = malloc(8192);

	if (p)
		memset(p, 'p', 8192);
	return p;
}
