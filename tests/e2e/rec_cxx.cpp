/*
 * rec_cxx.cpp - the C++ test program of tests/e2e/rec_memcheck.sh: every
 * operator new/new[]/delete/delete[] variant (plain, nothrow, sized,
 * align_val_t, align_val_t + nothrow, sized + aligned), an exception that
 * passes through operator new's frame (new_handler throwing), static
 * destructors and atexit handlers that free. Prints, with write(2), its own
 * count "expect allocs=A frees=F bytes=B".
 */
#include <cstdlib>
#include <cstring>
#include <new>
#include <unistd.h>

static long allocs, frees, bytes;

struct alignas(64) Big { char c[64]; };
struct Holder {
	char *p;
	Holder() : p(new char[77]) {}
	~Holder() { delete[] p; }
};
static Holder holder;    /* 1 alloc at start, 1 free in the static dtor */
static void *at_exit_block;
static void at_exit_free(void) { free(at_exit_block); }

static void say(long a, long f, long b)
{
	char buf[128];
	char *q = buf;
	const char *parts[] = { "expect allocs=", " frees=", " bytes=" };
	long v[] = { a, f, b };
	for (int i = 0; i < 3; i++) {
		q = stpcpy(q, parts[i]);
		char d[24];
		int n = 0;
		long x = v[i];
		do { d[n++] = (char)('0' + x % 10); x /= 10; } while (x);
		while (n) *q++ = d[--n];
	}
	*q++ = '\n';
	ssize_t r = write(1, buf, (size_t)(q - buf));
	(void)r;
}

static bool handler_called;
static void throwing_handler() { handler_called = true; throw std::bad_alloc(); }

int main()
{
	allocs = 1; bytes = 77;                 /* holder */
	int *a = new int;                       allocs++; bytes += sizeof(int);
	delete a;                               frees++;
	int *b = new int[10];                   allocs++; bytes += 40;
	delete[] b;                             frees++;
	int *c = new (std::nothrow) int;        allocs++; bytes += 4;
	::operator delete(c, std::nothrow);     frees++;
	int *d = new (std::nothrow) int[3];     allocs++; bytes += 12;
	::operator delete[](d, std::nothrow);   frees++;
	void *e = ::operator new(24);           allocs++; bytes += 24;
	::operator delete(e, (size_t)24);       frees++;
	void *f = ::operator new[](48);         allocs++; bytes += 48;
	::operator delete[](f, (size_t)48);     frees++;
	Big *g = new Big;                       allocs++; bytes += 64;
	delete g;                               frees++;   /* sized + aligned */
	Big *h = new Big[2];                    allocs++; bytes += 128;
	delete[] h;                             frees++;
	void *i = ::operator new(100, std::align_val_t(128));      allocs++; bytes += 100;
	::operator delete(i, std::align_val_t(128));               frees++;
	void *j = ::operator new[](100, std::align_val_t(256));    allocs++; bytes += 100;
	::operator delete[](j, std::align_val_t(256));             frees++;
	void *k = ::operator new(10, std::align_val_t(64), std::nothrow);   allocs++; bytes += 10;
	::operator delete(k, std::align_val_t(64), std::nothrow);           frees++;
	void *l = ::operator new[](10, std::align_val_t(64), std::nothrow); allocs++; bytes += 10;
	::operator delete[](l, std::align_val_t(64), std::nothrow);         frees++;
	void *m = ::operator new[](20, std::align_val_t(32));      allocs++; bytes += 20;
	::operator delete[](m, (size_t)20, std::align_val_t(32));  frees++;

	/* An exception out of operator new: the handler throws bad_alloc,
	 * which the runtime allocates (1 block, freed when caught). */
	std::set_new_handler(throwing_handler);
	try {
		void *huge = ::operator new((size_t)1 << 62);
		(void)huge;
	} catch (const std::bad_alloc &) {
	}
	std::set_new_handler(nullptr);
	/* After the exception the recorder still works (its guard was reset). */
	char *after = new char[5];              allocs++; bytes += 5;
	delete[] after;                         frees++;

	at_exit_block = malloc(33);             allocs++; bytes += 33;
	atexit(at_exit_free);                   frees++;   /* at exit */
	frees++;                                /* holder, at exit */
	say(allocs, frees, bytes);
	return handler_called ? 0 : 1;
}
