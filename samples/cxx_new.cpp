/*
 * cxx_new.cpp - the C++ allocation entry points: new, new[], nothrow new
 * and new[], aligned new (alignas type and explicit align_val_t), sized
 * delete and delete[], aligned delete, a growing std::vector, and a leak.
 *
 * For: the accuracy tests (each block counted once whichever operator made
 * it, requested sizes, operator new's own call to malloc not counted twice)
 * and demangled names in the trees. Not for: throwing or failing new: a
 * failing nothrow new is implemented in libstdc++ by catching bad_alloc,
 * whose exception object is malloc'ed, and memcheck replaces the whole
 * operator, so the two tools would legitimately see different blocks.
 *
 * The C++ runtime: at start-up, before main, libstdc++ (GCC 12) allocates
 * its emergency exception-handling pool with malloc(72,704) (the pool in
 * libsupc++/eh_alloc.cc; the size is fixed in this libstdc++ build, 73,728
 * in some other builds). The program never frees it: libstdc++'s
 * __gnu_cxx::__freeres() does, which memcheck calls at exit by default, and
 * so does memtrail, after the program's destructors and before the end
 * (not with --keep-runtime, or memcheck's --run-cxx-freeres=no: then it is
 * still live at exit).
 *
 * Calls in order, with live bytes / blocks after each:
 *    0  malloc(72704)                 runtime pool   72,704 B  1 blk
 *    1  new Widget                    new(40)          72,744  2
 *    2  new int[25]                   new[](100)       72,844  3
 *    3  new (nothrow) Widget          new(40, nothrow) 72,884  4
 *    4  new Line (alignas(64), 192 B) new(192, al 64)  73,076  5
 *    5  operator new(1000, al 128)                     74,076  6
 *    6  new Tracked[4]: Tracked has a destructor, so new[] adds an 8 B
 *       array cookie: new[](4 x 16 + 8 = 72)           74,148  7
 *    7  new (nothrow) char[300]       new[](300, nothrow) 74,448  8
 *       snapshot 0 "objects": 74,448 B in 8 blocks
 *    8  std::vector<int>, 10 push_backs: capacity 1, 2, 4, 8, 16, each
 *       growth allocating the new array before freeing the old one:
 *       new(4) 74,452 9; new(8) 74,460 10, delete 74,456 9;
 *       new(16) 74,472 10, delete 74,464 9; new(32) 74,496 10,
 *       delete 74,480 9; new(64) 74,544 10  <- peak, delete 74,512 9;
 *       the vector's destructor deletes the last array: 74,448 8
 *    9  delete Widget (sized delete), delete[] int[25], delete the
 *       nothrow Widget, delete Line (sized aligned delete), operator
 *       delete(raw, al 128), delete[] Tracked[4] (sized delete[]),
 *       delete[] char[300]: 7 frees                    72,704  1
 *   10  make_orphan(): new Node (24 B), never deleted  72,728  2
 *       snapshot 1 "end": 72,728 B in 2 blocks
 *   11  at exit, the runtime frees its pool                   24  1
 *
 * Totals:
 *   allocations  1 + 7 + 5 + 1 = 14
 *   frees        4 + 1 (vector) + 7 + 1 (the pool) = 13
 *   bytes        72,704 + (40 + 100 + 40 + 192 + 1,000 + 72 + 300 = 1,744)
 *                + (4 + 8 + 16 + 32 + 64 = 124) + 24 = 74,596
 *   peak         74,544 B, 10 blocks (the vector's 64 B array, while its
 *                32 B predecessor is still live)
 *   leaked       24 B in 1 block (the Node; definitely lost: only main held it)
 *   with the runtime's memory kept at exit: 12 frees, 72,704 + 24 =
 *   72,728 B leaked in 2 blocks
 *
 * memtrail-expect:
 *   allocations 14
 *   frees 13
 *   bytes_allocated 74596
 *   peak_bytes 74544
 *   peak_blocks 10
 *   leaked_bytes 24
 *   leaked_blocks 1
 *   keep-runtime frees 12
 *   keep-runtime leaked_bytes 72728
 *   keep-runtime leaked_blocks 2
 *   snapshot 0 label objects live_bytes 74448 live_blocks 8
 *   snapshot 1 label end live_bytes 72728 live_blocks 2
 */
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include <unistd.h>

#include <memtrail.h>

struct Widget {
	char data[40];
};

struct alignas(64) Line {
	char bytes[192];
};

struct Tracked {
	char payload[16];
	~Tracked() { payload[0] = 0; }
};

struct Node {
	Node *next;
	long key;
	long value;
};

static Node *make_orphan(long key)
{
	Node *n = new Node;

	n->next = nullptr;
	n->key = key;
	n->value = key * 2;
	return n;
}

static long grow_vector(void)
{
	std::vector<int> v;
	long sum = 0;

	for (int i = 0; i < 10; i++)
		v.push_back(i);
	for (int x : v)
		sum += x;
	return sum;
}

int main()
{
	Widget *w = new Widget;
	int *arr = new int[25];
	Widget *nt = new (std::nothrow) Widget;
	Line *line = new Line;
	void *raw = ::operator new(1000, std::align_val_t(128));
	Tracked *tr = new Tracked[4];
	char *buf = new (std::nothrow) char[300];
	static const char msg[] = "cxx_new: 14 allocations, 12 frees\n";
	long sum;

	if (!nt || !buf || (reinterpret_cast<std::uintptr_t>(line) & 63) ||
	    (reinterpret_cast<std::uintptr_t>(raw) & 127))
		return 1;
	std::memset(w->data, 1, sizeof(w->data));
	std::memset(arr, 0, 25 * sizeof(*arr));
	std::memset(buf, 2, 300);
	memtrail_snapshot_named("objects");

	sum = grow_vector();

	delete w;
	delete[] arr;
	delete nt;
	delete line;
	::operator delete(raw, std::align_val_t(128));
	delete[] tr;
	delete[] buf;

	Node *orphan = make_orphan(sum);
	memtrail_snapshot_named("end");
	(void)orphan;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		return 3;
	return 0;
}
