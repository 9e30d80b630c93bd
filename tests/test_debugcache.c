/*
 * test_debugcache.c - unit tests of lib/debugcache.c (uncompressed copies
 * of compressed debug files, by build-id).
 *
 * The fixtures are debug files made at run time: a small program built
 * with cc -g, split with objcopy --only-keep-debug, its DWARF compressed
 * the two ways toolchains do it (SHF_COMPRESSED zlib; the older .zdebug_*
 * sections), and left uncompressed. What a copy must hold is checked with
 * binutils readelf, which shares no code with libelf: the same DWARF
 * (--debug-dump without following links, file names aside) and no
 * compressed section.
 *
 * Not here: symbolization through the copies and report output
 * (tests/e2e/symbols_debugcache.sh).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "testcmd.c"

#include "debugcache.h"

static char tmpdir[256];
static char build_id[2][160];     /* prog's and prog2's, in hex */
static int have_tools;

static int group_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/mt-test-debugcache.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	if (run("command -v cc objcopy readelf >/dev/null") != 0)
		return 0;
	/* two programs (two build-ids), a few functions' worth of DWARF */
	if (run("cd '%s' && printf '%%s\\n' '#include <stdio.h>' "
		"'struct point { int x, y; };' "
		"'static int sum(struct point p) { return p.x + p.y; }' "
		"'int main(int argc, char **argv) { struct point p = { argc, 2 };' "
		"'  printf(\"%%d %%s\\\\n\", sum(p), argv[0]); return 0; }' >prog.c && "
		"cc -g -O1 -o prog prog.c && cc -g -O0 -DOTHER -o prog2 prog.c && "
		"objcopy --only-keep-debug prog prog.plain && "
		"objcopy --only-keep-debug prog2 prog2.plain && "
		"objcopy --compress-debug-sections=zlib prog.plain prog.z && "
		"objcopy --compress-debug-sections=zlib-gnu prog.plain prog.zgnu && "
		"objcopy --compress-debug-sections=zlib prog2.plain prog2.z", tmpdir) != 0)
		return 0;
	if (run_line(build_id[0], sizeof(build_id[0]), "readelf -n '%s/prog' | "
		     "sed -n 's/.*Build ID: //p'", tmpdir) != 0 ||
	    run_line(build_id[1], sizeof(build_id[1]), "readelf -n '%s/prog2' | "
		     "sed -n 's/.*Build ID: //p'", tmpdir) != 0 ||
	    !build_id[0][0] || !build_id[1][0] || strcmp(build_id[0], build_id[1]) == 0)
		return 0;
	/* the fixtures are what they claim: compressed the two ways, or not */
	if (run("cd '%s' && readelf -S -W prog.z 2>/dev/null | grep -q ' \\.debug_info .* [A-Z]*C[A-Z]* ' && "
		"readelf -S -W prog.zgnu 2>/dev/null | grep -q ' \\.zdebug_info ' && "
		"! readelf -S -W prog.plain 2>/dev/null | grep -q -e ' \\.zdebug' "
		"-e ' \\.debug_info .* [A-Z]*C[A-Z]* '", tmpdir) != 0)
		return 0;
	have_tools = 1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (tmpdir[0])
		run("rm -rf '%s'", tmpdir);
	return 0;
}

#define NEED_TOOLS() do { if (!have_tools) skip(); } while (0)

static int open_fixture(const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

/* The cache file of build-id `which` (0: prog, 1: prog2) in dir. */
static void cache_path(char *buf, size_t size, const char *dir, int which)
{
	snprintf(buf, size, "%s/%s.debug", dir, build_id[which]);
}

/* mt_debugcache_swap with the build-id of `which` (0: prog, 1: prog2). */
static int swap(const char *dir, int fd, int which)
{
	unsigned char id[80];
	size_t n = strlen(build_id[which]) / 2;

	for (size_t i = 0; i < n; i++)
		sscanf(build_id[which] + 2 * i, "%2hhx", &id[i]);
	return mt_debugcache_swap(dir, fd, id, n);
}

/* fd is still open: the swap kept it. */
static int is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

/*
 * The copy at path holds the DWARF of fixture `orig` (readelf's dumps
 * equal, the file names cut) and no compressed section.
 */
static void assert_copy_of(const char *path, const char *orig)
{
	assert_int_equal(run("cd '%s' && ! readelf -S -W '%s' 2>/dev/null | "
			     "grep -q -e ' \\.zdebug' -e '^  \\[.* [A-Z]*C[A-Z]* '",
			     tmpdir, path), 0);
	assert_int_equal(run("cd '%s' && "
			     "readelf -wN --debug-dump=info,abbrev,line,str,aranges,Ranges,loc '%s' "
			     "2>&1 | sed 's|%s|F|g' >copy.dump && "
			     "readelf -wN --debug-dump=info,abbrev,line,str,aranges,Ranges,loc '%s' "
			     "2>&1 | sed 's|%s|F|g' >orig.dump && "
			     "grep -q DW_TAG_compile_unit copy.dump && cmp -s copy.dump orig.dump",
			     tmpdir, path, path, orig, orig), 0);
	/* the ELF symbol table too */
	assert_int_equal(run("cd '%s' && readelf -s -W '%s' >copy.syms 2>&1 && "
			     "readelf -s -W '%s' >orig.syms 2>&1 && cmp -s copy.syms orig.syms",
			     tmpdir, path, orig), 0);
}

static void test_dir_from_env(void **state)
{
	const char *h = getenv("HOME");
	char buf[256], home[256];

	(void)state;
	snprintf(home, sizeof(home), "%s", h ? h : "");
	setenv("MEMTRAIL_DEBUG_CACHE", "/x/cache", 1);
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	setenv("HOME", "/home/u", 1);
	assert_int_equal(mt_debugcache_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/x/cache");
	/* off, by word or by being empty */
	setenv("MEMTRAIL_DEBUG_CACHE", "off", 1);
	assert_int_equal(mt_debugcache_dir(buf, sizeof(buf)), -1);
	setenv("MEMTRAIL_DEBUG_CACHE", "", 1);
	assert_int_equal(mt_debugcache_dir(buf, sizeof(buf)), -1);
	unsetenv("MEMTRAIL_DEBUG_CACHE");
	assert_int_equal(mt_debugcache_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/xdg/memtrail/debug");
	/* a relative XDG_CACHE_HOME is ignored, as the XDG spec says */
	setenv("XDG_CACHE_HOME", "rel", 1);
	assert_int_equal(mt_debugcache_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/home/u/.cache/memtrail/debug");
	unsetenv("XDG_CACHE_HOME");
	assert_int_equal(mt_debugcache_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/home/u/.cache/memtrail/debug");
	/* too long for the buffer: none rather than a cut path */
	assert_int_equal(mt_debugcache_dir(buf, 10), -1);
	unsetenv("HOME");
	assert_int_equal(mt_debugcache_dir(buf, sizeof(buf)), -1);
	if (h)
		setenv("HOME", home, 1);
}

/* Written once, then reused as it is: same inode, same time. */
static void test_zlib_written_then_reused(void **state)
{
	char dir[300], path[600];
	struct stat st1, st2;
	int fd, r;

	(void)state;
	NEED_TOOLS();
	snprintf(dir, sizeof(dir), "%s/c1/nested", tmpdir);
	fd = open_fixture("prog.z");
	r = swap(dir, fd, 0);
	assert_true(r >= 0 && r != fd);
	assert_false(is_open(fd));
	close(r);
	cache_path(path, sizeof(path), dir, 0);
	assert_int_equal(stat(path, &st1), 0);
	/* the new directories are private, as XDG wants of a cache */
	assert_int_equal(run("test \"$(stat -c %%a '%s/c1')\" = 700 && "
			     "test \"$(stat -c %%a '%s')\" = 700", tmpdir, dir), 0);
	assert_copy_of(path, "prog.plain");
	/* no temporary file left behind */
	assert_int_equal(run("test \"$(ls '%s' | wc -l)\" = 1", dir), 0);

	sleep(1);   /* a rewrite would show in the modification time */
	fd = open_fixture("prog.z");
	r = swap(dir, fd, 0);
	assert_true(r >= 0 && r != fd);
	assert_false(is_open(fd));
	close(r);
	assert_int_equal(stat(path, &st2), 0);
	assert_true(st1.st_ino == st2.st_ino);
	assert_true(st1.st_mtim.tv_sec == st2.st_mtim.tv_sec &&
		    st1.st_mtim.tv_nsec == st2.st_mtim.tv_nsec);
}

/* .zdebug_* sections: inflated and named .debug_* in the copy. */
static void test_gnu_zdebug(void **state)
{
	char dir[300], path[600];
	int fd, r;

	(void)state;
	NEED_TOOLS();
	snprintf(dir, sizeof(dir), "%s/c2", tmpdir);
	fd = open_fixture("prog.zgnu");
	r = swap(dir, fd, 0);
	assert_true(r >= 0 && r != fd);
	close(r);
	cache_path(path, sizeof(path), dir, 0);
	assert_copy_of(path, "prog.plain");
	assert_int_equal(run("readelf -S -W '%s' 2>/dev/null | grep -q ' \\.debug_info '", path), 0);
}

/* A copy that is truncated, compressed or of another build-id is replaced. */
static void test_bad_copies_replaced(void **state)
{
	static const char *const bad[] = {
		"head -c 3000 prog.plain",   /* truncated */
		"cat prog.z",                /* the right build-id, compressed */
		"cat prog2.plain",           /* a valid ELF, another build-id */
		"printf 'not an ELF file'",
	};
	char dir[300], path[600];
	int fd, r;

	(void)state;
	NEED_TOOLS();
	snprintf(dir, sizeof(dir), "%s/c3", tmpdir);
	cache_path(path, sizeof(path), dir, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(run("cd '%s' && mkdir -p '%s' && %s >'%s'", tmpdir, dir,
				     bad[i], path), 0);
		fd = open_fixture("prog.z");
		r = swap(dir, fd, 0);
		assert_true(r >= 0 && r != fd);
		close(r);
		assert_copy_of(path, "prog.plain");
	}
	/* prog2's own copy sits beside it, each under its build-id */
	fd = open_fixture("prog2.z");
	r = swap(dir, fd, 1);
	assert_true(r >= 0 && r != fd);
	close(r);
	cache_path(path, sizeof(path), dir, 1);
	assert_copy_of(path, "prog2.plain");
}

/* Nothing to gain or no way to write: the file handed in comes back. */
static void test_kept(void **state)
{
	char dir[300];
	int fd;

	(void)state;
	NEED_TOOLS();
	/* not compressed: read as it is, nothing written */
	snprintf(dir, sizeof(dir), "%s/c4", tmpdir);
	fd = open_fixture("prog.plain");
	assert_int_equal(swap(dir, fd, 0), fd);
	close(fd);
	assert_int_equal(access(dir, F_OK), -1);
	/* no cache */
	fd = open_fixture("prog.z");
	assert_int_equal(swap(NULL, fd, 0), fd);
	/* not the build-id expected */
	snprintf(dir, sizeof(dir), "%s/c4", tmpdir);
	assert_int_equal(swap(dir, fd, 1), fd);
	assert_int_equal(access(dir, F_OK), -1);
	/* a cache directory that cannot be made (a file is in the way; root
	 * would write through permission bits) */
	snprintf(dir, sizeof(dir), "%s/prog.c/cache", tmpdir);
	assert_int_equal(swap(dir, fd, 0), fd);
	assert_true(is_open(fd));
	close(fd);
	/* not ELF */
	fd = open_fixture("prog.c");
	snprintf(dir, sizeof(dir), "%s/c4", tmpdir);
	assert_int_equal(swap(dir, fd, 0), fd);
	close(fd);
	assert_int_equal(swap(dir, -1, 0), -1);
	assert_int_equal(access(dir, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dir_from_env),
		cmocka_unit_test(test_zlib_written_then_reused),
		cmocka_unit_test(test_gnu_zdebug),
		cmocka_unit_test(test_bad_copies_replaced),
		cmocka_unit_test(test_kept),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
