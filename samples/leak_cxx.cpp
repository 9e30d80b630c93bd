/*
 * leak_cxx.cpp - a C++ sample whose live blocks at exit are kept by the
 * interior pointers C++ makes, each kind worked out below: memcheck's
 * leak-check heuristics (its default, --leak-check-heuristics=all) count
 * such a block reachable when the pointer is one of four shapes, and
 * possibly lost otherwise.
 *
 * For: tests/e2e/leak_memcheck.sh (memtrail's kinds equal memcheck's,
 * heuristics included). Not for: the allocation entry points (cxx_new.cpp).
 *
 * The copy-on-write std::string (libstdc++'s pre-C++11 ABI, still in
 * libstdc++.so and chosen here for this file) keeps one pointer, to its
 * characters, 24 B into its block: the rep's length, capacity and
 * refcount come first; the block is 24 + capacity + 1 B.
 *
 *   kept_string()  new std::string(100, 'x') into the global `str`: the
 *                  string object (8 B) is reachable (str points to its
 *                  start); its rep, 24 + 100 + 1 = 125 B, is pointed to
 *                  only from the object, 24 B in, with capacity 100 and
 *                  length 100: reachable by "stdstring".
 *   lost_string()  new std::string(50, 'y'), its pointer dropped: the
 *                  object (8 B) is definitely lost; its rep (24 + 50 + 1
 *                  = 75 B) is reached only from it: indirectly lost (a
 *                  lost block's interior pointers count in full).
 *   kept_array()   new Elem[5] into the global `arr`: Elem (8 B) has a
 *                  destructor, so new[] allocates an 8 B count first,
 *                  8 + 5 x 8 = 48 B, and returns the block's address + 8:
 *                  the first word is 5, which divides 48 - 8: reachable
 *                  by "newarray".
 *   kept_len64()   malloc(72) whose first word is 64, the bytes after it,
 *                  the global `len64` pointing 8 B in (sqlite's
 *                  allocator does this): reachable by "length64".
 *   kept_derived() new Derived, kept as a pointer to its Second base in
 *                  the global `second`: Derived is First (a vtable
 *                  pointer and a long, 16 B), then Second (the same), then
 *                  a long: 40 B; `second` points 16 B in, at Second's
 *                  vtable pointer, and the block starts with First's: two
 *                  vtables (each starts with the destructors' addresses,
 *                  in the program's text): reachable by
 *                  "multipleinheritance".
 *   middle()       new Elem[4] (8 + 32 = 40 B) kept only by a pointer to
 *                  its second element, 16 B in, into the global `elem`:
 *                  no heuristic applies (the word there is 1, no vtable;
 *                  not 8 or 24 B in): possibly lost.
 *   boxed()        malloc(16) `box`: a zero word, then the Elem * that
 *                  new Elem[3] (8 + 24 = 32 B) returns, 8 B into its
 *                  block; the global `in_box` points 8 B into the box.
 *                  The box: 8 B in, but its first word is 0 (neither
 *                  newarray nor length64), the word there is a heap
 *                  address, no vtable: possibly lost. The array: the
 *                  newarray shape (count 3 divides 24), but pointed to
 *                  only from a possibly lost block: possibly lost too, as
 *                  memcheck lets a heuristic stand for a pointer to the
 *                  start only where the pointer is itself reachable.
 *
 *   definitely lost    8 B in 1 block
 *   indirectly lost   75 B in 1 block
 *   possibly lost     88 B in 3 blocks (40 + 16 + 32)
 *   still reachable  293 B in 5 blocks (8 + 125 + 48 + 72 + 40)
 *   leaked (live at exit) 464 B in 10 blocks.
 *
 * (memcheck's "of which reachable via heuristic" lines count the boxed
 * array under newarray too, 80 B in 2 blocks: it notes the shape matched
 * even where the block stays possibly lost; its four figures are the
 * ones above.)
 *
 * Besides, libstdc++ allocates its emergency exception pool at start-up,
 * which its __freeres frees at exit under both tools (cxx_new.cpp). The
 * lost pointers must not linger on the stack: each allocation happens in
 * a function of its own (noinline), and wipe_stack() zeros the stack
 * below main's frame before it returns.
 */
#define _GLIBCXX_USE_CXX11_ABI 0
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

struct Elem {
	long v;
	~Elem() { v = 0; }
};

struct First {
	virtual ~First() {}
	long a = 1;
};

struct Second {
	virtual ~Second() {}
	long b = 2;
};

struct Derived : First, Second {
	long c = 3;
};

static_assert(sizeof(std::string) == 8, "the copy-on-write string: one pointer");
static_assert(sizeof(Elem) == 8 && sizeof(Derived) == 40, "the sizes worked out above");

std::string *volatile str;
Elem *volatile arr;
uint64_t *volatile len64;
Second *volatile second;
Elem *volatile elem;
void *volatile in_box;

__attribute__((noinline)) static void kept_string()
{
	str = new std::string(100, 'x');
}

__attribute__((noinline)) static void lost_string()
{
	std::string *volatile s = new std::string(50, 'y');
	s = nullptr;
}

__attribute__((noinline)) static void fill(Elem *e, long n)
{
	for (long i = 0; i < n; i++)
		e[i].v = i;
}

__attribute__((noinline)) static void kept_array()
{
	arr = new Elem[5];
	fill(arr, 5);
}

__attribute__((noinline)) static void kept_len64()
{
	uint64_t *p = static_cast<uint64_t *>(calloc(1, 72));
	p[0] = 64;
	len64 = p + 1;
}

__attribute__((noinline)) static void kept_derived()
{
	second = new Derived;
}

__attribute__((noinline)) static void middle()
{
	Elem *a = new Elem[4];
	fill(a, 4);
	elem = &a[1];
}

__attribute__((noinline)) static void boxed()
{
	Elem **box = static_cast<Elem **>(calloc(1, 16));
	box[1] = new Elem[3];
	fill(box[1], 3);
	in_box = &box[1];
}

__attribute__((noinline)) static void wipe_stack()
{
	volatile char junk[16384];
	memset(const_cast<char *>(junk), 0, sizeof(junk));
}

int main()
{
	kept_string();
	lost_string();
	kept_array();
	kept_len64();
	kept_derived();
	middle();
	boxed();
	wipe_stack();
	return 0;
}
