/*
 * rec_unwind_plugin.c - a library for rec_unwind.c's reload mode, built
 * twice with other frame sizes and another function first (-DFRAME,
 * -DPAD), so that the two copies, loaded one after the other at the same
 * address, have other unwind rules at the same addresses.
 *
 *   void *plug_alloc(int n, size_t size)   malloc(size) n frames down
 */
#include <stdlib.h>

#define NOIPA __attribute__((noipa))

#if PAD
NOIPA long plug_pad(long x);
NOIPA long plug_pad(long x)
{
	volatile char buf[PAD];
	buf[0] = (char)x;
	return buf[0] + x;
}
#endif

NOIPA static void *deep(int n, size_t size)
{
	volatile char frame[FRAME];
	frame[0] = (char)n;
	void *p = n ? deep(n - 1, size) : malloc(size);
	frame[FRAME - 1] = 1;
	return p;
}

void *plug_alloc(int n, size_t size);
void *plug_alloc(int n, size_t size)
{
	return deep(n, size);
}
