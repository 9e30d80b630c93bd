/*
 * cxx_throw.cpp - C++ exceptions thrown and caught across frames that hold
 * heap memory, for tests/e2e/robust_realprogs.sh: the frames' blocks must
 * be freed by unwinding and recorded as freed.
 *
 * Figures derived from the code. Each of the 10 rounds calls level(0..3):
 * every level holds a new char[100 * (d + 1)] (unique_ptr) and a 40 + d
 * character std::string (heap: longer than the 15-byte inline buffer);
 * level 3 stores a new long[8] (64 B) in kept[] and throws; the exception
 * is caught in main. Unwinding frees the 4 arrays and 4 strings of the
 * round, the catch frees the exception object. So between snapshot 0
 * "before" and snapshot 1 "after", the live heap grows by exactly
 * 10 x 64 = 640 B in 10 blocks; main then deletes them, so none of this
 * program's blocks with cxx_throw.cpp frames is leaked. Prints
 * "caught 10 depth-sum 30", exits 0.
 *
 * Not for: anything but that test.
 */
#include <cstdio>
#include <memory>
#include <string>

#include "memtrail.h"

struct boom {
	int depth;
};

static long *kept[10];

static __attribute__((noinline)) int level(int d, int round)
{
	std::unique_ptr<char[]> buf(new char[100 * (d + 1)]);
	std::string s(40 + d, 'x');

	buf[0] = s[0];
	if (d == 3) {
		kept[round] = new long[8];
		throw boom{d};
	}
	return level(d + 1, round) + buf[0];
}

int main()
{
	int caught = 0, sum = 0;

	/* the first throw may set up the unwinder: not between the snapshots */
	try {
		throw boom{-1};
	} catch (const boom &) {
	}
	memtrail_snapshot_named("before");
	for (int i = 0; i < 10; i++) {
		try {
			level(0, i);
		} catch (const boom &b) {
			caught++;
			sum += b.depth;
		}
	}
	memtrail_snapshot_named("after");
	for (int i = 0; i < 10; i++)
		delete[] kept[i];
	std::printf("caught %d depth-sum %d\n", caught, sum);
	return 0;
}
