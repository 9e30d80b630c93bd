/*
 * symbols_fixture_inline.c - a shared library for tests/test_symbols.c,
 * built at run time with -O2 -g: an always_inline helper inlined into an
 * exported function. The calls sit on lines with MARK comments that the test
 * reads. Not part of memtrail itself.
 */
static volatile int fx_sink;

static inline __attribute__((always_inline)) void fx_helper(void (*cb)(void))
{
	cb(); /* MARK:helper_call */
	fx_sink++;
}

__attribute__((noinline)) void fx_inline_outer(void (*cb)(void));
__attribute__((noinline)) void fx_inline_outer(void (*cb)(void))
{
	fx_helper(cb); /* MARK:outer_call */
	fx_sink++;
}
