/*
 * test_symbols.c - unit tests of lib/symbols.c (offline symbolization).
 *
 * The fixtures are real shared libraries built at run time from
 * tests/symbols_fixture*.c(pp) with cc/c++ into a scratch directory, loaded
 * with dlopen, and described to the symbolizer the way the recorder would
 * (path, load bias, build-id, executable segments, from dl_iterate_phdr).
 * Expected lines come from MARK comments in the fixture sources; expected
 * names from the fixture sources, c++filt and binutils addr2line, which do
 * not share code with libdw.
 *
 * Not here: reading logs, aggregation, report output.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "testcmd.c"

#include "error.h"
#include "replay.h"
#include "symbols.h"

#define MAXSEG 8

/* A module of this process, as a MODULE record would describe it. */
struct self_module {
	char path[1024];
	uint64_t base;
	uint8_t build_id[64];
	size_t build_id_len;
	struct mt_segment segs[MAXSEG];
	size_t nseg;
	struct mt_module m;
};

static char tmpdir[256];
static char srcdir[1024];
static int have_cc;
static void *captured_ra;
static void *main_ra;      /* main's return address, inside libc */

static __attribute__((noinline)) void capture(void)
{
	captured_ra = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

/* The line number of the line holding "MARK:name" in a fixture source. */
static unsigned marker_line(const char *file, const char *name)
{
	char path[1200], line[512], mark[128];
	unsigned n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", srcdir, file);
	snprintf(mark, sizeof(mark), "MARK:%s ", name);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, mark)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("no marker %s in %s", name, file);
	return 0;
}

struct find_ctx {
	const char *suffix;
	struct self_module *out;
	int found;
};

static void read_build_id(struct dl_phdr_info *info, const ElfW(Phdr) *ph,
			  struct self_module *sm)
{
	const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
	const char *end = p + ph->p_memsz;

	while (p + sizeof(ElfW(Nhdr)) <= end) {
		const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
		const char *name = p + sizeof(*nh);
		const char *desc = name + ((nh->n_namesz + 3) & ~3u);

		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= sizeof(sm->build_id)) {
			memcpy(sm->build_id, desc, nh->n_descsz);
			sm->build_id_len = nh->n_descsz;
			return;
		}
		p = desc + ((nh->n_descsz + 3) & ~3u);
	}
}

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_ctx *c = data;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	size_t ln = strlen(name), ls = strlen(c->suffix);
	struct self_module *sm = c->out;
	int i;

	(void)size;
	if (c->found || ln < ls || strcmp(name + ln - ls, c->suffix) != 0)
		return 0;
	memset(sm, 0, sizeof(*sm));
	snprintf(sm->path, sizeof(sm->path), "%s", name);
	sm->base = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && sm->nseg < MAXSEG) {
			sm->segs[sm->nseg].start = info->dlpi_addr + ph->p_vaddr;
			sm->segs[sm->nseg].size = ph->p_memsz;
			sm->nseg++;
		} else if (ph->p_type == PT_NOTE && !sm->build_id_len) {
			read_build_id(info, ph, sm);
		}
	}
	sm->m.base = sm->base;
	sm->m.path = sm->path;
	sm->m.build_id = sm->build_id;
	sm->m.build_id_len = sm->build_id_len;
	sm->m.nseg = sm->nseg;
	sm->m.segs = sm->segs;
	c->found = 1;
	return 1;
}

/* Describes the loaded module whose path ends with suffix; 0 if found. */
static int self_module(const char *suffix, struct self_module *out)
{
	struct find_ctx c = { suffix, out, 0 };

	dl_iterate_phdr(find_cb, &c);
	return c.found ? 0 : -1;
}

static void *load(const char *name)
{
	char path[1200];
	void *h;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		fail_msg("dlopen %s: %s", path, dlerror());
	return h;
}

/*
 * Loads the fixture library at path (relative to the scratch directory),
 * calls its function sym(capture) so that captured_ra is a return address
 * inside it, and describes the loaded module in *sm. Returns the handle.
 */
static void *call_fixture(const char *path, const char *sym, struct self_module *sm)
{
	void (*fn)(void (*)(void));
	const char *base = strrchr(path, '/');
	char suffix[256];
	void *h = load(path);

	snprintf(suffix, sizeof(suffix), "/%s", base ? base + 1 : path);
	*(void **)&fn = dlsym(h, sym);
	assert_non_null(fn);
	fn(capture);
	assert_int_equal(self_module(suffix, sm), 0);
	return h;
}

static void build_id_hex(const struct self_module *sm, char *hex)
{
	size_t i;

	for (i = 0; i < sm->build_id_len; i++)
		sprintf(hex + 2 * i, "%02x", sm->build_id[i]);
	hex[2 * sm->build_id_len] = '\0';
}

/* ---- fixtures ------------------------------------------------------------ */

static int group_setup(void **state)
{
	const char *top = getenv("MT_TOP");
	const char *slash;

	(void)state;
	if (top && *top) {
		snprintf(srcdir, sizeof(srcdir), "%s/tests", top);
	} else {
		/* __FILE__ is tests/test_symbols.c, relative to the top directory */
		slash = strrchr(__FILE__, '/');
		if (slash)
			snprintf(srcdir, sizeof(srcdir), "%.*s", (int)(slash - __FILE__), __FILE__);
		else
			snprintf(srcdir, sizeof(srcdir), ".");
	}
	if (srcdir[0] != '/') {
		char *abs = realpath(srcdir, NULL);

		if (!abs || strlen(abs) >= sizeof(srcdir)) {
			free(abs);
			return -1;
		}
		strcpy(srcdir, abs);
		free(abs);
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s/mt-symtest.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	have_cc = run("command -v cc >/dev/null && command -v c++ >/dev/null && "
		      "command -v objcopy >/dev/null") == 0;
	if (!have_cc)
		return 0;
	/*
	 * Sources are copied under src/ and compiled from tmpdir, so DWARF
	 * holds "src/..." relative to the compilation directory.
	 */
	if (run("cd '%s' && mkdir -p src link/.debug dbg && "
		"cp '%s'/symbols_fixture_lib.c '%s'/symbols_fixture_inline.c "
		"'%s'/symbols_fixture_vec.cpp src/ && "
		"cc -g -O0 -shared -fPIC -Wl,--build-id -o libfx_plain.so src/symbols_fixture_lib.c && "
		"cc -g -O2 -shared -fPIC -Wl,--build-id -o libfx_inline.so src/symbols_fixture_inline.c && "
		"c++ -g -O0 -shared -fPIC -Wl,--build-id -o libfx_vec.so src/symbols_fixture_vec.cpp && "
		"cc -g -O0 -shared -fPIC -Wl,--build-id -o libfx_split.so src/symbols_fixture_lib.c && "
		"objcopy --only-keep-debug libfx_split.so libfx_split.debug && "
		"objcopy --strip-all libfx_split.so && "
		"cc -g -O0 -shared -fPIC -Wl,--build-id=none -o link/libfx_link.so src/symbols_fixture_lib.c && "
		"objcopy --only-keep-debug link/libfx_link.so link/.debug/libfx_link.so.debug && "
		"objcopy --strip-all --add-gnu-debuglink=link/.debug/libfx_link.so.debug link/libfx_link.so",
		tmpdir, srcdir, srcdir, srcdir) != 0)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (tmpdir[0] && !getenv("MT_KEEP_TMP"))
		run("rm -rf '%s'", tmpdir);
	return 0;
}

static int setup(void **state)
{
	struct mt_symbols *s;

	if (!have_cc)
		return 0;
	s = mt_symbols_new();
	if (!s)
		return -1;
	/* the tests choose their debug path; the user's must not interfere */
	mt_symbols_set_debuginfo_path(s, NULL);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	mt_symbols_free(*state);
	*state = NULL;
	return 0;
}

#define NEED_CC() do { if (!have_cc) skip(); } while (0)

/* ---- tests ------------------------------------------------------------------ */

static void test_plain_function(void **state)
{
	struct mt_symbols *s = *state;
	static struct self_module sm;
	const struct mt_frame *f, *f2;
	char buf[512], want[512];
	size_t n, n2, need;
	void *h;

	NEED_CC();
	h = call_fixture("libfx_plain.so", "fx_plain", &sm);
	assert_true(sm.build_id_len > 0);
	assert_int_equal(mt_symbols_add_module(s, &sm.m), 0);
	assert_int_equal(mt_symbols_resolve(s, (uintptr_t)captured_ra, &f, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "fx_plain");
	assert_string_equal(f[0].file, "src/symbols_fixture_lib.c");
	assert_int_equal(f[0].line, marker_line("symbols_fixture_lib.c", "plain_call"));
	assert_string_equal(f[0].module, sm.path);
	assert_int_equal(f[0].offset, (uintptr_t)captured_ra - sm.base);
	assert_int_equal(f[0].inlined, 0);

	snprintf(want, sizeof(want), "fx_plain [src/symbols_fixture_lib.c:%u]",
		 marker_line("symbols_fixture_lib.c", "plain_call"));
	need = mt_frame_format(&f[0], buf, sizeof(buf));
	assert_string_equal(buf, want);
	assert_int_equal(need, strlen(want));
	/* truncation: the needed length, a NUL-terminated prefix */
	assert_int_equal(mt_frame_format(&f[0], buf, 5), strlen(want));
	assert_string_equal(buf, "fx_p");

	/* (7) the cache: the same ip gives the very same frames */
	assert_int_equal(mt_symbols_resolve(s, (uintptr_t)captured_ra, &f2, &n2), 0);
	assert_ptr_equal(f, f2);
	assert_int_equal(n2, n);
	assert_int_equal(mt_symbols_warnings(s, NULL), 0);
	dlclose(h);
}

static void test_inline_chain(void **state)
{
	struct mt_symbols *s = *state;
	static struct self_module sm;
	const struct mt_frame *f;
	char buf[512], want[512];
	size_t n;
	void *h;

	NEED_CC();
	h = call_fixture("libfx_inline.so", "fx_inline_outer", &sm);
	assert_int_equal(mt_symbols_add_module(s, &sm.m), 0);
	assert_int_equal(mt_symbols_resolve(s, (uintptr_t)captured_ra, &f, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(f[0].function, "fx_helper");
	assert_string_equal(f[0].file, "src/symbols_fixture_inline.c");
	assert_int_equal(f[0].line, marker_line("symbols_fixture_inline.c", "helper_call"));
	assert_int_equal(f[0].inlined, 1);
	assert_string_equal(f[1].function, "fx_inline_outer");
	assert_string_equal(f[1].file, "src/symbols_fixture_inline.c");
	assert_int_equal(f[1].line, marker_line("symbols_fixture_inline.c", "outer_call"));
	assert_int_equal(f[1].inlined, 0);
	assert_int_equal(f[0].offset, (uintptr_t)captured_ra - sm.base);
	assert_int_equal(f[1].offset, f[0].offset);
	snprintf(want, sizeof(want), "fx_inline_outer [src/symbols_fixture_inline.c:%u]",
		 marker_line("symbols_fixture_inline.c", "outer_call"));
	mt_frame_format(&f[1], buf, sizeof(buf));
	assert_string_equal(buf, want);
	dlclose(h);
}

#define REALLOC_INSERT \
	"_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_iteratorIPiS1_EEDpOT_"

static void test_cxx_demangled(void **state)
{
	struct mt_symbols *s = *state;
	static struct self_module sm;
	const struct mt_frame *f;
	char want[1024], line[1024], func[1024];
	uint64_t ip;
	size_t n;
	void *h, *sym;

	NEED_CC();
	h = load("libfx_vec.so");
	sym = dlsym(h, REALLOC_INSERT);
	assert_non_null(sym);
	assert_int_equal(self_module("/libfx_vec.so", &sm), 0);
	assert_int_equal(mt_symbols_add_module(s, &sm.m), 0);
	/* a return address a few bytes into the function (after its prologue) */
	ip = (uintptr_t)sym + 9;
	assert_int_equal(mt_symbols_resolve(s, ip, &f, &n), 0);
	assert_true(n >= 1);
	assert_non_null(f[n - 1].function);
	assert_int_equal(f[n - 1].inlined, 0);
	/*
	 * binutils' demangler is the independent truth: the full text with
	 * the return type ("void ...") ends with our name, which starts with
	 * the qualified name alone (c++filt -p).
	 */
	assert_int_equal(run_line(want, sizeof(want), "c++filt '%s'", REALLOC_INSERT), 0);
	assert_int_equal(run_line(func, sizeof(func), "c++filt -p '%s'", REALLOC_INSERT), 0);
	assert_true(strlen(want) > strlen(f[n - 1].function));
	assert_string_equal(want + strlen(want) - strlen(f[n - 1].function), f[n - 1].function);
	assert_true(strncmp(f[n - 1].function, func, strlen(func)) == 0);
	assert_int_equal(f[n - 1].function[strlen(func)], '(');
	assert_true(strncmp(f[n - 1].function,
			    "std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(",
			    strlen("std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(")) == 0);
	/* the line: binutils addr2line on the same address */
	assert_int_equal(run_line(func, sizeof(func), "addr2line -f -C -e '%s' 0x%llx",
				  sm.path, (unsigned long long)(ip - 1 - sm.base)), 0);
	assert_string_equal(func, want); /* the same function, with return type */
	assert_int_equal(run_line(line, sizeof(line),
				  "addr2line -e '%s' 0x%llx | sed 's/.*://; s/ .*//'",
				  sm.path, (unsigned long long)(ip - 1 - sm.base)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].line, strtoul(line, NULL, 10));
	assert_non_null(f[0].file);
	assert_non_null(strstr(f[0].file, "bits/vector.tcc"));
	dlclose(h);
}

/* A static C++ function: its parameters come from the ELF symbol. */
static void test_cxx_static(void **state)
{
	struct mt_symbols *s = *state;
	static struct self_module sm;
	const struct mt_frame *f;
	char want[1024];
	size_t n;
	void *h;

	NEED_CC();
	h = call_fixture("libfx_vec.so", "fx_cxx_static", &sm);
	assert_int_equal(mt_symbols_add_module(s, &sm.m), 0);
	assert_int_equal(mt_symbols_resolve(s, (uintptr_t)captured_ra, &f, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(run_line(want, sizeof(want),
				  "nm '%s' | awk '$3 ~ /fx_static/ { print $3 }' | c++filt",
				  sm.path), 0);
	assert_non_null(strchr(want, '('));
	assert_string_equal(f[0].function, want);
	assert_string_equal(f[0].file, "src/symbols_fixture_vec.cpp");
	assert_int_equal(f[0].line, marker_line("symbols_fixture_vec.cpp", "static_call"));
	dlclose(h);
}

static void test_buildid_mismatch(void **state)
{
	struct mt_symbols *s = *state;
	static struct self_module sm;
	const struct mt_frame *f;
	const char *const *w;
	char buf[512], want[1200];
	void (*fn)(void (*)(void));
	size_t n;
	void *h;

	NEED_CC();
	h = load("libfx_plain.so");
	*(void **)&fn = dlsym(h, "fx_plain");
	fn(capture);
	assert_int_equal(self_module("/libfx_plain.so", &sm), 0);
	assert_true(sm.build_id_len > 0);
	sm.build_id[0] ^= 0xff;
	assert_int_equal(mt_symbols_add_module(s, &sm.m), 0);
	assert_int_equal(mt_symbols_resolve(s, (uintptr_t)captured_ra, &f, &n), 0);
	assert_int_equal(n, 1);
	assert_null(f[0].function);
	assert_null(f[0].file);
	assert_string_equal(f[0].module, sm.path);
	assert_int_equal(f[0].offset, (uintptr_t)captured_ra - sm.base);
	snprintf(want, sizeof(want), "libfx_plain.so+0x%llx",
		 (unsigned long long)((uintptr_t)captured_ra - sm.base));
	mt_frame_format(&f[0], buf, sizeof(buf));
	assert_string_equal(buf, want);
	/* another address of the same module: still one warning */
	assert_int_equal(mt_symbols_resolve(s, (uintptr_t)fn + 1, &f, &n), 0);
	assert_null(f[0].function);
	assert_int_equal(mt_symbols_warnings(s, &w), 1);
	snprintf(want, sizeof(want),
		 "%s: build-id differs from the recording; its frames are shown as libfx_plain.so+0xOFF",
		 sm.path);
	assert_string_equal(w[0], want);
	dlclose(h);
}

static void test_separate_debug_buildid(void **state)
{
	struct mt_symbols *s = *state, *s2;
	static struct self_module sm;
	const struct mt_frame *f;
	char hex[140], dbg[1200];
	size_t n;
	void *h;

	NEED_CC();
	h = call_fixture("libfx_split.so", "fx_plain", &sm);
	assert_true(sm.build_id_len > 1);
	build_id_hex(&sm, hex);
	assert_int_equal(run("cd '%s' && mkdir -p dbg/.build-id/%.2s && "
			     "cp libfx_split.debug dbg/.build-id/%.2s/%s.debug",
			     tmpdir, hex, hex, hex + 2), 0);

	/* control: without the debug directory, the stripped file has no lines */
	s2 = mt_symbols_new();
	assert_non_null(s2);
	snprintf(dbg, sizeof(dbg), "%s/nonexistent", tmpdir);
	assert_int_equal(mt_symbols_set_debuginfo_path(s2, dbg), 0);
	assert_int_equal(mt_symbols_add_module(s2, &sm.m), 0);
	assert_int_equal(mt_symbols_resolve(s2, (uintptr_t)captured_ra, &f, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "fx_plain");   /* from .dynsym */
	assert_null(f[0].file);
	assert_int_equal(f[0].line, 0);
	mt_symbols_free(s2);

	snprintf(dbg, sizeof(dbg), "%s/dbg", tmpdir);
	assert_int_equal(mt_symbols_set_debuginfo_path(s, dbg), 0);
	assert_int_equal(mt_symbols_add_module(s, &sm.m), 0);
	assert_int_equal(mt_symbols_resolve(s, (uintptr_t)captured_ra, &f, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "fx_plain");
	assert_string_equal(f[0].file, "src/symbols_fixture_lib.c");
	assert_int_equal(f[0].line, marker_line("symbols_fixture_lib.c", "plain_call"));
	assert_int_equal(mt_symbols_warnings(s, NULL), 0);
	dlclose(h);
}

static void test_separate_debug_env(void **state)
{
	static struct self_module sm;
	const struct mt_frame *f;
	struct mt_symbols *s;
	char dbg[1200];
	size_t n;
	void *h;

	(void)state;
	NEED_CC();
	/* test_separate_debug_buildid placed the .debug file under dbg/ */
	h = call_fixture("libfx_split.so", "fx_plain", &sm);
	snprintf(dbg, sizeof(dbg), "%s/dbg", tmpdir);
	setenv("MEMTRAIL_DEBUGINFO_PATH", dbg, 1);
	s = mt_symbols_new();
	unsetenv("MEMTRAIL_DEBUGINFO_PATH");
	assert_non_null(s);
	assert_int_equal(mt_symbols_add_module(s, &sm.m), 0);
	assert_int_equal(mt_symbols_resolve(s, (uintptr_t)captured_ra, &f, &n), 0);
	assert_string_equal(f[0].file, "src/symbols_fixture_lib.c");
	assert_int_equal(f[0].line, marker_line("symbols_fixture_lib.c", "plain_call"));
	mt_symbols_free(s);
	dlclose(h);
}

/*
 * With DEBUGINFOD_URLS set, one line per module that debuginfod was asked
 * about (the e2e symbols_debuginfod.sh asks a real server): an answer
 * cached as "the servers have none" (an empty file, as libdebuginfod leaves
 * it) is said as such; with nothing cached, a server that refuses the
 * connection (nothing listens on port 1) is said to be out of reach, with
 * the timeout, or, where libdwfl has not loaded libdebuginfod, that.
 */
static void test_debuginfod_lines(void **state)
{
	static struct self_module sm;
	const char *const *lines;
	const struct mt_frame *f;
	struct mt_symbols *s;
	char hex[140], cache[1200], want[2600];
	size_t n;
	void *h, *lib;

	(void)state;
	NEED_CC();
	if (getenv("DEBUGINFOD_URLS"))
		skip();   /* libdwfl would ask the user's servers */
	h = call_fixture("libfx_split.so", "fx_plain", &sm);
	build_id_hex(&sm, hex);
	snprintf(cache, sizeof(cache), "%s/dcache", tmpdir);
	assert_int_equal(run("mkdir -p '%s/%s' && : >'%s/%s/debuginfo'", cache, hex, cache, hex), 0);
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	s = mt_symbols_new();
	assert_non_null(s);
	mt_symbols_set_debuginfo_path(s, NULL);
	assert_int_equal(mt_symbols_add_module(s, &sm.m), 0);
	assert_int_equal(mt_symbols_resolve(s, (uintptr_t)captured_ra, &f, &n), 0);
	assert_null(f[0].file);
	assert_int_equal(mt_symbols_resolve(s, (uintptr_t)captured_ra + 1, &f, &n), 0);
	assert_int_equal(mt_symbols_warnings(s, &lines), 1);   /* once per module */
	snprintf(want, sizeof(want), "%s: no debug info for build-id %s on the debuginfod "
		 "servers (http://127.0.0.1:1)", sm.m.path, hex);
	assert_string_equal(lines[0], want);
	mt_symbols_free(s);

	/* nothing cached: libdebuginfod asks 127.0.0.1:1, refused */
	assert_int_equal(run("rm -f '%s/%s/debuginfo'", cache, hex), 0);
	setenv("DEBUGINFOD_TIMEOUT", "3", 1);
	s = mt_symbols_new();
	assert_non_null(s);
	mt_symbols_set_debuginfo_path(s, NULL);
	assert_int_equal(mt_symbols_add_module(s, &sm.m), 0);
	assert_int_equal(mt_symbols_resolve(s, (uintptr_t)captured_ra, &f, &n), 0);
	assert_int_equal(mt_symbols_warnings(s, &lines), 1);
	lib = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (lib) {
		dlclose(lib);
		snprintf(want, sizeof(want), "%s: no debug info from debuginfod "
			 "(http://127.0.0.1:1): no server could be reached or answered within "
			 "DEBUGINFOD_TIMEOUT (3 s)", sm.m.path);
	} else {
		snprintf(want, sizeof(want), "%s: no debug info: DEBUGINFOD_URLS is set but "
			 "libdebuginfod.so.1 (elfutils) is not loaded (not installed?)", sm.m.path);
	}
	assert_string_equal(lines[0], want);
	mt_symbols_free(s);
	unsetenv("DEBUGINFOD_TIMEOUT");
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
	dlclose(h);
}

static void test_separate_debug_debuglink(void **state)
{
	struct mt_symbols *s = *state;
	static struct self_module sm;
	const struct mt_frame *f;
	size_t n;
	void *h;

	NEED_CC();
	h = call_fixture("link/libfx_link.so", "fx_plain", &sm);
	/* built without a build-id: only .gnu_debuglink can find .debug/ */
	assert_int_equal(sm.build_id_len, 0);
	assert_int_equal(mt_symbols_add_module(s, &sm.m), 0);
	assert_int_equal(mt_symbols_resolve(s, (uintptr_t)captured_ra, &f, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "fx_plain");
	assert_string_equal(f[0].file, "src/symbols_fixture_lib.c");
	assert_int_equal(f[0].line, marker_line("symbols_fixture_lib.c", "plain_call"));
	dlclose(h);
}

static void test_missing_file(void **state)
{
	struct mt_symbols *s = *state;
	static const uint8_t bid[] = { 1, 2, 3, 4 };
	static const struct mt_segment seg = { 0x10001000, 0x2000 };
	struct mt_module m = {
		.base = 0x10000000, .path = "/nonexistent/dir/libgone.so.1",
		.build_id = bid, .build_id_len = sizeof(bid), .nseg = 1, .segs = &seg,
	};
	const struct mt_frame *f;
	const char *const *w;
	char buf[256];
	size_t n;

	NEED_CC();
	assert_int_equal(mt_symbols_add_module(s, &m), 0);
	assert_int_equal(mt_symbols_resolve(s, 0x10001234, &f, &n), 0);
	assert_int_equal(n, 1);
	assert_null(f[0].function);
	assert_string_equal(f[0].module, m.path);
	assert_int_equal(f[0].offset, 0x1234);
	mt_frame_format(&f[0], buf, sizeof(buf));
	assert_string_equal(buf, "libgone.so.1+0x1234");
	assert_int_equal(mt_symbols_resolve(s, 0x10002ff0, &f, &n), 0);
	mt_frame_format(&f[0], buf, sizeof(buf));
	assert_string_equal(buf, "libgone.so.1+0x2ff0");
	assert_int_equal(mt_symbols_warnings(s, &w), 1);
	assert_non_null(strstr(w[0], "/nonexistent/dir/libgone.so.1: cannot be read"));
	assert_non_null(strstr(w[0], "its frames are shown as libgone.so.1+0xOFF"));

	/* outside every segment: no module, the bare address */
	assert_int_equal(mt_symbols_resolve(s, 0x10003000, &f, &n), 0);
	assert_int_equal(n, 1);
	assert_null(f[0].module);
	assert_null(f[0].function);
	mt_frame_format(&f[0], buf, sizeof(buf));
	assert_string_equal(buf, "0x10003000");
	assert_int_equal(mt_symbols_warnings(s, NULL), 1);
}

/*
 * A hostile log can describe a module with no segments, as its first module:
 * the symbolizer then has no segment at all to sort or search (the fuzzer
 * found qsort handed a null array), and every address is bare.
 */
static void test_module_without_segments(void **state)
{
	struct mt_symbols *s = mt_symbols_new();
	struct mt_module m = { .base = 0x10000000, .path = "/nonexistent/libnone.so" };
	const struct mt_frame *f;
	char buf[64];
	size_t n;

	(void)state;
	assert_non_null(s);
	mt_symbols_set_debuginfo_path(s, NULL);
	assert_int_equal(mt_symbols_add_module(s, &m), 0);
	assert_int_equal(mt_symbols_prefetch(s, (const uint64_t[]){ 0x10000010 }, 1), 0);
	assert_int_equal(mt_symbols_resolve(s, 0x10000010, &f, &n), 0);
	assert_int_equal(n, 1);
	assert_null(f[0].module);
	mt_frame_format(&f[0], buf, sizeof(buf));
	assert_string_equal(buf, "0x10000010");
	mt_symbols_free(s);
}

static void test_overlap_later_wins(void **state)
{
	struct mt_symbols *s = *state;
	static const struct mt_segment seg1 = { 0x20001000, 0x4000 };
	static const struct mt_segment seg2 = { 0x20003000, 0x1000 };
	struct mt_module m1 = { .base = 0x20000000, .path = "/nonexistent/liba.so",
				.nseg = 1, .segs = &seg1 };
	struct mt_module m2 = { .base = 0x20002000, .path = "/nonexistent/libb.so",
				.nseg = 1, .segs = &seg2 };
	const struct mt_frame *f;
	size_t n;

	NEED_CC();
	assert_int_equal(mt_symbols_add_module(s, &m1), 0);
	assert_int_equal(mt_symbols_add_module(s, &m2), 0);
	assert_int_equal(mt_symbols_resolve(s, 0x20003010, &f, &n), 0);
	assert_string_equal(f[0].module, "/nonexistent/libb.so");
	assert_int_equal(f[0].offset, 0x1010);
	assert_int_equal(mt_symbols_resolve(s, 0x20004010, &f, &n), 0);
	assert_string_equal(f[0].module, "/nonexistent/liba.so");
	assert_int_equal(f[0].offset, 0x4010);
	assert_int_equal(mt_symbols_resolve(s, 0x20001010, &f, &n), 0);
	assert_string_equal(f[0].module, "/nonexistent/liba.so");
	assert_int_equal(mt_symbols_warnings(s, NULL), 2);
}

/* ---- libc, against binutils addr2line ------------------------------------- */

struct fsym { uint64_t addr, size; };

static int cmp_ptr(const void *a, const void *b)
{
	captured_ra = __builtin_return_address(0);
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* libc's defined function symbols (.dynsym) with a non-zero size. */
static size_t libc_functions(const char *path, struct fsym **out)
{
	char cmd[1200], line[512];
	struct fsym *v = NULL;
	size_t n = 0, cap = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -D -S --defined-only '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a, sz;
		char t;

		if (sscanf(line, "%llx %llx %c", &a, &sz, &t) != 3 || !sz ||
		    (t != 'T' && t != 't' && t != 'W' && t != 'i'))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			v = realloc(v, cap * sizeof(*v));
			assert_non_null(v);
		}
		v[n].addr = a;
		v[n].size = sz;
		n++;
	}
	pclose(p);
	*out = v;
	return n;
}

static int libc_has_debuginfo(const struct self_module *sm)
{
	char hex[140], path[256];

	build_id_hex(sm, hex);
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	return sm->build_id_len > 1 && access(path, R_OK) == 0;
}

/*
 * Addresses in the middle of libc's functions, resolved by us and by
 * binutils addr2line -i: the same chain of function names and line numbers
 * (binutils' file names are not compared: it joins DWARF 5 directories
 * differently).
 */
static void test_libc_against_addr2line(void **state)
{
	struct mt_symbols *s = *state;
	static struct self_module sm;
	struct fsym *fs = NULL;
	const struct mt_frame *f;
	char cmd[1200], line[1024], *listfile;
	size_t nf, i, n, k, step, checked = 0, inl = 0, bad = 0;
	int v[4] = { 4, 2, 3, 1 };
	FILE *p, *lf;

	NEED_CC();
	assert_int_equal(self_module("/libc.so.6", &sm), 0);
	if (!libc_has_debuginfo(&sm) || run("command -v addr2line >/dev/null") != 0)
		skip();
	assert_int_equal(mt_symbols_add_module(s, &sm.m), 0);

	/*
	 * A real return address inside libc: qsort calling back. Its file is
	 * normalized and relative (no "./", "../" or leading "/"), with the
	 * same base name as binutils gives.
	 */
	qsort(v, 4, sizeof(int), cmp_ptr);
	assert_int_equal(mt_symbols_resolve(s, (uintptr_t)captured_ra, &f, &n), 0);
	assert_non_null(f[n - 1].function);
	assert_non_null(f[0].file);
	assert_true(f[0].line > 0);
	assert_true(f[0].file[0] != '/' && f[0].file[0] != '.');
	assert_null(strstr(f[0].file, "/./"));
	assert_null(strstr(f[0].file, "../"));
	assert_int_equal(run_line(line, sizeof(line), "addr2line -e '%s' 0x%llx | sed 's/:[0-9].*//'",
				  sm.path, (unsigned long long)((uintptr_t)captured_ra - 1 - sm.base)), 0);
	assert_string_equal(strrchr(line, '/') ? strrchr(line, '/') + 1 : line,
			    strrchr(f[0].file, '/') ? strrchr(f[0].file, '/') + 1 : f[0].file);

	/*
	 * main's return address: the frame the spec shows as
	 * "__libc_start_call_main [sysdeps/nptl/libc_start_call_main.h:LINE]"
	 * (glibc's file from a relative "./csu" compilation directory), the
	 * line from binutils.
	 */
	assert_int_equal(mt_symbols_resolve(s, (uintptr_t)main_ra, &f, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "__libc_start_call_main");
	assert_string_equal(f[0].file, "sysdeps/nptl/libc_start_call_main.h");
	assert_int_equal(run_line(line, sizeof(line), "addr2line -e '%s' 0x%llx | sed 's/.*://; s/ .*//'",
				  sm.path, (unsigned long long)((uintptr_t)main_ra - 1 - sm.base)), 0);
	assert_int_equal(f[0].line, strtoul(line, NULL, 10));

	nf = libc_functions(sm.path, &fs);
	assert_true(nf > 1000);
	step = nf / 300 + 1;
	listfile = malloc(1200);
	assert_non_null(listfile);
	snprintf(listfile, 1200, "%s/libc-addrs", tmpdir);
	lf = fopen(listfile, "w");
	assert_non_null(lf);
	for (i = 0; i < nf; i += step)
		fprintf(lf, "0x%llx\n", (unsigned long long)(fs[i].addr + fs[i].size / 2));
	fclose(lf);
	snprintf(cmd, sizeof(cmd), "addr2line -a -f -i -e '%s' < '%s'", sm.path, listfile);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (!fgets(line, sizeof(line), p))
		fail_msg("no output from addr2line");
	for (i = 0; i < nf; i += step) {
		uint64_t pc = fs[i].addr + fs[i].size / 2;
		char names[16][256];
		unsigned lines[16];
		size_t m = 0;

		/* line is this address's "0x..." header; read pairs to the next */
		assert_int_equal(strtoull(line, NULL, 16), pc);
		while (fgets(line, sizeof(line), p) && strncmp(line, "0x", 2) != 0) {
			char fl[1024];
			const char *colon;

			if (!fgets(fl, sizeof(fl), p))
				break;
			if (m < 16) {
				line[strcspn(line, "\n")] = '\0';
				snprintf(names[m], sizeof(names[m]), "%.255s", line);
				colon = strrchr(fl, ':');
				lines[m] = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
				m++;
			}
		}
		if (m == 0 || strcmp(names[0], "??") == 0 || lines[0] == 0)
			continue;
		assert_int_equal(mt_symbols_resolve(s, sm.base + pc + 1, &f, &n), 0);
		if (n != m) {
			print_message("libc+0x%llx: %zu frames, addr2line %zu (%s)\n",
				 (unsigned long long)pc, n, m, names[0]);
			bad++;
			continue;
		}
		for (k = 0; k < n; k++) {
			if (!f[k].function || strcmp(f[k].function, names[k]) != 0 ||
			    f[k].line != lines[k]) {
				print_message("libc+0x%llx frame %zu: %s:%u, addr2line %s:%u\n",
					 (unsigned long long)pc, k,
					 f[k].function ? f[k].function : "(null)",
					 f[k].line, names[k], lines[k]);
				bad++;
			}
			assert_int_equal(f[k].inlined, k + 1 < n);
		}
		inl += n > 1;
		checked++;
	}
	pclose(p);
	print_message("libc: %zu addresses agree with addr2line (%zu with inlines)\n",
		      checked, inl);
	assert_int_equal(bad, 0);
	assert_true(checked > 100);
	assert_true(inl > 10);
	free(listfile);
	free(fs);
}

/*
 * Opening modules ahead (mt_symbols_prefetch) changes when the work is
 * done, not what comes out: libc addresses (every 64th function), a missing
 * module and the bare address outside every module resolve to the same
 * frames, and the same warning, as in a symbolizer that opens them as it
 * goes; a module added and a symbolizer freed while the thread may still
 * run wait for it.
 */
static void test_prefetch_same(void **state)
{
	struct mt_symbols *s = *state, *ahead, *idle;
	static struct self_module sm;
	static const uint8_t bid[] = { 1, 2, 3, 4 };
	static const struct mt_segment seg = { 0x10001000, 0x2000 };
	struct mt_module gone = {
		.base = 0x10000000, .path = "/nonexistent/dir/libgone.so.1",
		.build_id = bid, .build_id_len = sizeof(bid), .nseg = 1, .segs = &seg,
	};
	struct fsym *fs = NULL;
	const struct mt_frame *f, *g;
	const char *const *w1, *const *w2;
	uint64_t *ips;
	size_t nf, n, m, k = 0;

	NEED_CC();
	assert_int_equal(self_module("/libc.so.6", &sm), 0);
	nf = libc_functions(sm.path, &fs);
	assert_true(nf > 1000);
	ahead = mt_symbols_new();
	assert_non_null(ahead);
	ips = calloc(nf / 64 + 3, sizeof(*ips));
	assert_non_null(ips);
	for (size_t i = 0; i < nf; i += 64)
		ips[k++] = sm.base + fs[i].addr + fs[i].size / 2 + 1;
	ips[k++] = 0x10001234;
	ips[k++] = 0x10003000;
	assert_int_equal(mt_symbols_add_module(s, &sm.m), 0);
	assert_int_equal(mt_symbols_add_module(s, &gone), 0);
	assert_int_equal(mt_symbols_add_module(ahead, &sm.m), 0);
	assert_int_equal(mt_symbols_add_module(ahead, &gone), 0);
	assert_int_equal(mt_symbols_prefetch(ahead, ips, k), 0);
	for (size_t i = 0; i < k; i++) {
		assert_int_equal(mt_symbols_resolve(ahead, ips[i], &f, &n), 0);
		assert_int_equal(mt_symbols_resolve(s, ips[i], &g, &m), 0);
		assert_int_equal(n, m);
		for (size_t j = 0; j < n; j++) {
			assert_true((f[j].function == NULL) == (g[j].function == NULL));
			if (f[j].function)
				assert_string_equal(f[j].function, g[j].function);
			assert_true((f[j].file == NULL) == (g[j].file == NULL));
			if (f[j].file)
				assert_string_equal(f[j].file, g[j].file);
			assert_int_equal(f[j].line, g[j].line);
			assert_int_equal(f[j].offset, g[j].offset);
			assert_int_equal(f[j].inlined, g[j].inlined);
		}
	}
	assert_int_equal(mt_symbols_warnings(ahead, &w1), 1);
	assert_int_equal(mt_symbols_warnings(s, &w2), 1);
	assert_string_equal(w1[0], w2[0]);
	mt_symbols_free(ahead);

	/* added to and freed while the thread may still run */
	idle = mt_symbols_new();
	assert_non_null(idle);
	assert_int_equal(mt_symbols_add_module(idle, &sm.m), 0);
	assert_int_equal(mt_symbols_prefetch(idle, ips, k), 0);
	assert_int_equal(mt_symbols_add_module(idle, &gone), 0);
	assert_int_equal(mt_symbols_prefetch(idle, ips, k), 0);
	mt_symbols_free(idle);
	free(ips);
	free(fs);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Cost per distinct address: every 16th byte of every libc function (tens of
 * thousands of ips), then all of them again from the cache, in CPU time
 * (the machine is shared). Printed, not asserted: the machine's speed is
 * not the code's property.
 */
static void test_libc_timing(void **state)
{
	struct mt_symbols *s = *state;
	static struct self_module sm;
	struct fsym *fs = NULL;
	const struct mt_frame *f;
	size_t nf, i, n, count = 0, named = 0;
	uint64_t off;
	double t0, t1, t2;

	NEED_CC();
	assert_int_equal(self_module("/libc.so.6", &sm), 0);
	if (!libc_has_debuginfo(&sm))
		skip();
	assert_int_equal(mt_symbols_add_module(s, &sm.m), 0);
	nf = libc_functions(sm.path, &fs);
	assert_true(nf > 1000);
	t0 = now();
	for (i = 0; i < nf; i++)
		for (off = 1; off <= fs[i].size; off += 16) {
			assert_int_equal(mt_symbols_resolve(s, sm.base + fs[i].addr + off,
							    &f, &n), 0);
			named += f[n - 1].function != NULL;
			count++;
		}
	t1 = now();
	for (i = 0; i < nf; i++)
		for (off = 1; off <= fs[i].size; off += 16)
			assert_int_equal(mt_symbols_resolve(s, sm.base + fs[i].addr + off,
							    &f, &n), 0);
	t2 = now();
	print_message("libc: %zu functions, %zu addresses (%zu named): "
		      "%.2f us per new address, %.3f us per cached one\n",
		      nf, count, named, (t1 - t0) * 1e6 / count, (t2 - t1) * 1e6 / count);
	/* every address lies inside a function of libc's .dynsym */
	assert_int_equal(named, count);
	free(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_plain_function, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inline_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cxx_demangled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cxx_static, setup, teardown),
		cmocka_unit_test_setup_teardown(test_buildid_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_separate_debug_buildid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_separate_debug_env, setup, teardown),
		cmocka_unit_test_setup_teardown(test_separate_debug_debuglink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_debuginfod_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
		cmocka_unit_test(test_module_without_segments),
		cmocka_unit_test_setup_teardown(test_overlap_later_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_libc_against_addr2line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_libc_timing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prefetch_same, setup, teardown),
	};

	main_ra = __builtin_return_address(0);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
