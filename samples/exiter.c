/*
 * exiter.c - ends with exit(3) from a nested function; an atexit handler
 * and an ELF destructor free blocks after main has stopped running.
 *
 * For: the accuracy tests of the end of a recording: frees made by atexit
 * handlers and by destructors (which run from ld.so's _dl_fini, after the
 * atexit handlers) happen before the process really ends, memcheck counts
 * them, and so must memtrail; and the exit status (3) must come through
 * `memtrail record` unchanged. Not for: abnormal ends (samples/aborter.c).
 *
 * In order (live bytes / blocks after each):
 *   1  constructor: ctor_block = malloc(512)            512 B  1 blk
 *   2  main: handler_block = malloc(1024)              1,536 B  2
 *   3  main: atexit(release_handler_block) (no heap block)
 *   4  main: kept = malloc(2048)                      3,584 B  3  <- peak
 *      snapshot 0 "running": 3,584 B in 3 blocks
 *   5  finish(): free(kept), writes a line, exit(3)   1,536 B  2
 *   6  atexit handler: free(handler_block)              512 B  1
 *   7  destructor: free(ctor_block)                        0 B  0
 * Totals: 3 allocations, 512 + 1,024 + 2,048 = 3,584 B, 3 frees, peak
 * 3,584 B in 3 blocks, nothing leaked; exit status 3.
 *
 * memtrail-expect:
 *   allocations 3
 *   frees 3
 *   bytes_allocated 3584
 *   peak_bytes 3584
 *   peak_blocks 3
 *   leaked_bytes 0
 *   leaked_blocks 0
 *   exit 3
 *   snapshot 0 label running live_bytes 3584 live_blocks 3
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrail.h>

static char *ctor_block, *handler_block;

__attribute__((constructor)) static void make_ctor_block(void)
{
	ctor_block = malloc(512);
	if (!ctor_block)
		_exit(4);
	memset(ctor_block, 'c', 512);
}

__attribute__((destructor)) static void release_ctor_block(void)
{
	free(ctor_block);
}

static void release_handler_block(void)
{
	free(handler_block);
}

static void finish(char *kept)
{
	static const char msg[] = "exiter: exit(3) with an atexit handler pending\n";

	free(kept);
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(5);
	exit(3);
}

int main(void)
{
	char *kept;

	handler_block = malloc(1024);
	if (!handler_block || atexit(release_handler_block) != 0)
		return 4;
	kept = malloc(2048);
	if (!kept)
		return 4;
	memset(kept, 'k', 2048);
	memtrail_snapshot_named("running");
	finish(kept);
	return 0;
}
