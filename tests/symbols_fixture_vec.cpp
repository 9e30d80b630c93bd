/*
 * symbols_fixture_vec.cpp - a shared library for tests/test_symbols.c: an
 * explicit instantiation of std::vector<int>::_M_realloc_insert, so the test
 * can resolve an address inside it and check the demangled name. Not part of
 * memtrail itself.
 */
#include <vector>

template void std::vector<int>::_M_realloc_insert<const int &>(
	std::vector<int>::iterator, const int &);

extern "C" void fx_vec_push(std::vector<int> *v, int x);
extern "C" void fx_vec_push(std::vector<int> *v, int x)
{
	v->push_back(x);
}

/* internal linkage: DWARF has no linkage name, the ELF symbol has one */
static __attribute__((noinline)) void fx_static(void (*cb)(), long n)
{
	cb(); /* MARK:static_call */
	(void)n;
}

extern "C" void fx_cxx_static(void (*cb)());
extern "C" void fx_cxx_static(void (*cb)())
{
	fx_static(cb, 1);
}
