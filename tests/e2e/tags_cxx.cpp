/*
 * tags_cxx.cpp - memtrail::tag_scope (memtrail.h's RAII helper) in a C++
 * program, for report_tags.sh: scopes pushed and popped by constructors
 * and destructors, one of them by an exception unwinding through it.
 *
 * What is leaked, by tag path (every block below but the exception object
 * is leaked on purpose; the runtimes' own memory is freed at exit):
 *   vec            50 B  (operator new[])
 *   parser         100 B (and, not leaked, the exception object that
 *                  `throw 42` allocates while "parser" is open)
 *   parser/lexer   2 x 10 B
 *   (no tag)       7 B, allocated after the catch: the throw popped
 *                  "parser" on its way out
 * Not for: anything but that test.
 */
#include <cstdio>
#include <cstdlib>

#include <memtrail.h>

static void *volatile sink;

static __attribute__((noinline)) void *take(std::size_t n)
{
	void *p = std::malloc(n);

	sink = p;
	return p;
}

static __attribute__((noinline)) void parse(bool fail)
{
	memtrail::tag_scope t("parser");

	take(100);
	{
		memtrail::tag_scope l("lexer");

		take(10);
		take(10);
	}
	if (fail)
		throw 42;
}

int main()
{
	{
		memtrail::tag_scope v("vec");
		char *a = new char[50];

		sink = a;
	}
	try {
		parse(true);
	} catch (int) {
	}
	take(7);
	std::puts("tags_cxx: done");
	return 0;
}
