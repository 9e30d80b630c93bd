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
