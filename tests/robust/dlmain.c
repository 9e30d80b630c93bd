/*
 * dlmain.c - loads the library named by argv[1] (dlmod.c) with dlopen()
 * after start, runs dlmod_work() between two named snapshots and prints
 * what it returned. For tests/e2e/robust_realprogs.sh.
 *
 * Figures derived from the code: between snapshot 0 "loaded" and snapshot 1
 * "worked" only dlmod_work() runs: live heap grows by exactly 4,000 B in 2
 * blocks (dlmod.c); those 2 blocks are leaked at the end, with the stack
 * dlmod_keep <- dlmod_work <- main. dlopen's own allocations happen before
 * snapshot 0 and belong to ld.so. Prints "kept 2", exits 0.
 *
 * Not for: anything but that test.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "memtrail.h"

int main(int argc, char **argv)
{
	void *h;
	int (*work)(void);
	int kept;

	if (argc != 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlmain: %s\n", dlerror());
		return 1;
	}
	*(void **)&work = dlsym(h, "dlmod_work");
	if (!work)
		return 1;
	memtrail_snapshot_named("loaded");
	kept = work();
	memtrail_snapshot_named("worked");
	printf("kept %d\n", kept);
	return 0;
}
