/*
 * rec_unwind_cxx.cpp - C++ exceptions through allocating frames, for
 * rec_unwind.sh: thrown from deep frames that allocate, caught at several
 * depths, rethrown (throw; and std::rethrow_exception), with destructors
 * that allocate while the exception passes (cleanups, _Unwind_Resume), and
 * a catch block that allocates before rethrowing. The incremental unwinder
 * must give every stack exactly as the full one does, and the program must
 * behave as without a profiler.
 *
 * Prints how many exceptions were caught and how many allocations the
 * program made itself; not a sample (its figures are only compared
 * between unwinders).
 */
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#define NOIPA __attribute__((noipa))

static unsigned long allocs, caught;

NOIPA static void alloc_here(std::size_t n)
{
	char *p = new char[n];
	p[0] = 1;
	allocs++;
	delete[] p;
}

struct Guard {
	int depth;
	explicit Guard(int d) : depth(d) {}
	/* Allocates while an exception unwinds through its frame. */
	~Guard() { alloc_here(24 + (std::size_t)depth); }
};

NOIPA static void thrower(int depth, int catch_at, int kind)
{
	Guard g(depth);
	alloc_here(16 + (std::size_t)depth);
	if (depth == 0) {
		if (kind == 0)
			throw std::runtime_error(std::string(40, 'x'));  /* allocates too */
		throw depth + 7;
	}
	if (depth == catch_at) {
		try {
			thrower(depth - 1, -1, kind);
		} catch (...) {
			caught++;
			alloc_here(50);
			if (kind == 1)
				throw;          /* rethrow from a catch block */
			std::exception_ptr e = std::current_exception();
			alloc_here(51);
			std::rethrow_exception(e);
		}
	} else {
		thrower(depth - 1, catch_at, kind);
	}
	alloc_here(8);
}

NOIPA static void level(int depth, int catch_at, int kind)
{
	std::vector<int> v((std::size_t)depth + 1);   /* freed by the unwinding */
	allocs++;
	try {
		thrower(depth, catch_at, kind);
	} catch (const std::exception &e) {
		caught++;
		alloc_here(e.what()[0] == 'x' ? 60 : 61);
	} catch (int i) {
		caught++;
		alloc_here(62 + (std::size_t)(i & 1));
	}
	alloc_here(9);
}

int main()
{
	for (int i = 0; i < 60; i++) {
		int depth = 4 + i % 9;
		level(depth, i % 3 ? depth / 2 : -1, i % 2);
		alloc_here(10);
	}
	std::printf("%lu caught, %lu allocations\n", caught, allocs);
	return 0;
}
