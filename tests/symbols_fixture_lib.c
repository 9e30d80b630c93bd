/*
 * symbols_fixture_lib.c - a shared library for tests/test_symbols.c, built at
 * run time by the test (-O0 -g; also stripped with separate debug info).
 * Each call into the callback sits on a line with a MARK comment: the test
 * reads the line numbers from this file. Not part of memtrail itself.
 */
void fx_plain(void (*cb)(void));
void fx_plain(void (*cb)(void))
{
	cb(); /* MARK:plain_call */
}
