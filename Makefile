# memtrail: hand-written Makefile.
#
#   make                 build lib/, the preload library, the memtrail program
#                        and the samples into build/
#   make check           install missing packages, build, run every test
#   make check-asan      the unit and CLI tests with ASan + UBSan (in build/asan/)
#   make check-tsan      the replay's and its readers' tests with
#                        ThreadSanitizer (the decoder runs on a thread of
#                        its own; in build/tsan/)
#   make demo            install missing packages, record a sample, print its report
#   make bench           benchmarks against native runs and heaptrack
#   make fuzz            libFuzzer on the log reader and replay
#   make install         PREFIX=/usr/local DESTDIR=
#   make clean           remove build/
#
# Sources are found by wildcard: a new lib/*.c, viewer/*.c, recorder/*.c,
# tests/test_*.c or samples/*.c(pp) needs no edit here.
#
# Everything generated goes under $(B), by default build/, never beside the
# sources (make clean removes build/):
#   build/memtrail            the program
#   build/libmemtrail.so      the preload library, beside the program, where
#                             `memtrail record` looks for it (viewer/cmd-record.c)
#   build/memtrail.pc         the pkg-config file that `make install` installs
#   build/obj/                objects, .d files and archives, in the source
#                             tree's shape (obj/lib/, obj/recorder/, obj/viewer/)
#   build/samples/            the sample programs
#   build/tests/              the unit-test programs; e2e/NAME.log, the output
#                             of each tests/e2e/NAME.sh
#   build/bench/, build/fuzz/ `make bench` and `make fuzz`: their programs,
#                             inputs and outputs (the fuzz corpus too)
#   build/asan/               the same layout again for the sanitizer build
#   build/tsan/               and for ThreadSanitizer's (the replay's tests only)

PREFIX     ?= /usr/local
DESTDIR    ?=
PKG_CONFIG ?= pkg-config
CC         ?= cc
CXX        ?= c++
VERSION    := 0.1.0

# B is the build directory (make B=DIR builds into DIR instead); the
# sanitizer build of `make check-asan` is $(B)asan/.
B ?= build/
override B := $(patsubst %//,%/,$(B)/)
ifeq ($(filter-out $(CURDIR) /,$(abspath $(B))),)
$(error B=$(B) must be a directory of its own, not the source tree: make clean removes it)
endif
ASAN_B := $(B)asan/
TSAN_B := $(B)tsan/

PKGS_LIB    := libzstd libdw
PKGS_REC    := libunwind libzstd
PKGS_VIEW   := ncursesw
PKGS_TEST   := cmocka

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wvla
ifeq ($(WERROR),1)
WARN += -Werror
endif

OPT      ?= -O2 -g
CFLAGS   ?= $(OPT)
CPPFLAGS += -Iinclude -Ilib -DMT_VERSION='"$(VERSION)"' -D_GNU_SOURCE
ALL_CFLAGS = -std=gnu11 -fPIC -MMD -MP $(WARN) $(CFLAGS) $(SAN)

ifeq ($(SANITIZE),1)
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
ifeq ($(SANITIZE),thread)
SAN := -fsanitize=thread -DTHREADED_FROM=0
endif

pc_cflags = $(shell $(PKG_CONFIG) --cflags $(1) 2>/dev/null)
pc_libs   = $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null)

LIB_SRCS  := $(wildcard lib/*.c)
REC_SRCS  := $(wildcard recorder/*.c)
VIEW_SRCS := $(wildcard viewer/*.c)
TEST_SRCS := $(wildcard tests/test_*.c)
SAMPLE_C  := $(wildcard samples/*.c)
SAMPLE_CXX:= $(wildcard samples/*.cpp)

O         := $(B)obj/
LIB_OBJS  := $(LIB_SRCS:%.c=$(O)%.o)
REC_OBJS  := $(REC_SRCS:%.c=$(O)%.o)
VIEW_OBJS := $(VIEW_SRCS:%.c=$(O)%.o)
LIBMT     := $(O)lib/libmt.a
RECORDER  := $(B)libmemtrail.so
MEMTRAIL  := $(B)memtrail
PCFILE    := $(B)memtrail.pc
TESTS     := $(TEST_SRCS:tests/%.c=$(B)tests/%)
SAMPLES   := $(SAMPLE_C:samples/%.c=$(B)samples/%) $(SAMPLE_CXX:samples/%.cpp=$(B)samples/%)

.PHONY: all deps deps-test check check-unit check-e2e check-asan check-tsan demo bench \
        install uninstall clean samples tests fuzz
.DEFAULT_GOAL := all

all: $(MEMTRAIL) $(RECORDER) samples

# ---- the engine -----------------------------------------------------------
$(O)lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(call pc_cflags,$(PKGS_LIB)) $(ALL_CFLAGS) -c -o $@ $<

$(LIBMT): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# ---- the preload library --------------------------------------------------
# Never sanitized: it runs inside other programs. lib/ objects it needs come
# from a PIC archive built without sanitizers; their symbols stay hidden.
REC_CFLAGS = -std=gnu11 -fPIC -MMD -MP $(WARN) -O2 -g -fvisibility=hidden \
             -fexceptions -ftls-model=initial-exec -fno-omit-frame-pointer
$(O)recorder/%.o: recorder/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(call pc_cflags,$(PKGS_REC)) $(REC_CFLAGS) -c -o $@ $<
$(O)recorder/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(call pc_cflags,$(PKGS_REC)) $(REC_CFLAGS) -c -o $@ $<
# Only the parts of lib/ the recorder uses, built with the recorder's flags.
REC_LIB_SRCS := $(wildcard lib/writer.c lib/error.c lib/outpath.c lib/livetab.c lib/fmt.c lib/ring.c)
$(O)recorder/libmt-rec.a: $(REC_LIB_SRCS:lib/%.c=$(O)recorder/lib/%.o)
	rm -f $@ && ar rcs $@ $^

# Not linked with -lunwind: libunwind exports backtrace() and the _Unwind_*
# set, which would then bind a program's C++ exceptions to it. The recorder
# dlopens it privately (RTLD_LOCAL) instead; see recorder/core.c.
# -z now: the GOT is bound at load and read-only (RELRO), so none of it is
# among the writable pages core.c remaps to share them with the drainer.
$(RECORDER): $(REC_OBJS) $(O)recorder/libmt-rec.a
	$(CC) -shared -o $@ $(REC_OBJS) $(O)recorder/libmt-rec.a \
	    -Wl,--exclude-libs,ALL -Wl,-z,nodelete -Wl,-z,now -Wl,-z,relro \
	    $(call pc_libs,libzstd) -ldl -lpthread

# ---- the memtrail program -------------------------------------------------
$(O)viewer/%.o: viewer/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(call pc_cflags,$(PKGS_VIEW) $(PKGS_LIB)) $(ALL_CFLAGS) -c -o $@ $<

$(MEMTRAIL): $(VIEW_OBJS) $(LIBMT)
	$(CC) $(SAN) -o $@ $(VIEW_OBJS) $(LIBMT) \
	    $(call pc_libs,$(PKGS_VIEW) $(PKGS_LIB)) -lstdc++ -lm

# ---- samples: small programs with exactly known heap behaviour ------------
# -O0 keeps every call visible in stacks; a sample named *_O2.c gets -O2.
SAMPLE_FLAGS = -g -fno-omit-frame-pointer -pthread -Iinclude
samples: $(SAMPLES)
$(B)samples/%: samples/%.c include/memtrail.h
	@mkdir -p $(@D)
	$(CC) $(SAMPLE_FLAGS) $(if $(findstring _O2,$*),-O2,-O0) -o $@ $<
$(B)samples/%: samples/%.cpp include/memtrail.h
	@mkdir -p $(@D)
	$(CXX) $(SAMPLE_FLAGS) -O0 -o $@ $<

# ---- tests ----------------------------------------------------------------
tests: $(TESTS)
$(B)tests/test_%: tests/test_%.c $(LIBMT)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(call pc_cflags,$(PKGS_TEST) $(PKGS_LIB)) $(ALL_CFLAGS) \
	    -o $@ $< $(LIBMT) $(call pc_libs,$(PKGS_TEST) $(PKGS_LIB) $(PKGS_VIEW)) -lstdc++ -lm \
	    $(TEST_LDFLAGS_$*)
# the live table's growth fails on demand (the test's own wrapper)
TEST_LDFLAGS_replay_nomem := -Wl,--wrap=mt_livetab_grow

deps:
	@sh tests/install-deps.sh
deps-test:
	@sh tests/install-deps.sh --test

# Unit tests (cmocka) then end-to-end tests (tests/e2e/*.sh).
check: deps-test
	$(MAKE) all tests
	$(MAKE) check-unit check-e2e
	$(MAKE) check-asan
	$(MAKE) check-tsan

check-unit: all tests
	@sh tests/run-unit.sh $(B)

check-e2e: all
	@sh tests/run-e2e.sh $(B)

# The recorder and the samples are never sanitized (see above), but the
# sanitizer build has its own, so that its tests find everything in one
# directory.
check-asan: deps-test
	$(MAKE) B=$(ASAN_B) SANITIZE=1 all tests
	$(MAKE) B=$(ASAN_B) SANITIZE=1 check-unit
	MT_SANITIZED=1 sh tests/run-e2e.sh $(ASAN_B) cli

# The replay decodes on a thread of its own while the caller applies; this
# build does so for every log, however small, and runs the tests of the
# replay and of its readers (the session's pass, reports) under
# ThreadSanitizer. test_hostile replays its damaged logs so too; it records
# its log with the build's recorder (MT_BUILD). Reports write no debug
# cache (MEMTRAIL_DEBUG_CACHE) outside the build. Then memtrail itself
# reports real logs, a bounded one too (tests/tsan-reports.sh).
TSAN_TESTS := test_replay test_replay_nomem test_session test_report test_writer test_hostile
check-tsan: deps-test all
	$(MAKE) B=$(TSAN_B) SANITIZE=thread $(TSAN_TESTS:%=$(TSAN_B)tests/%)
	for t in $(TSAN_TESTS); do \
		MT_BUILD=$(abspath $(B)) MT_TOP=$(CURDIR) MEMTRAIL_DEBUG_CACHE=off \
		TSAN_OPTIONS=halt_on_error=1 $(TSAN_B)tests/$$t || exit 1; done
	$(MAKE) B=$(TSAN_B) SANITIZE=thread $(TSAN_B)memtrail
	sh tests/tsan-reports.sh $(abspath $(B)) $(abspath $(TSAN_B))

demo: deps
	$(MAKE) all
	@sh tests/demo.sh $(B)

bench: deps
	@sh tests/install-deps.sh --bench
	$(MAKE) all
	@MT_BUILD=$(B) sh tests/bench/run.sh

fuzz: all
	@MT_BUILD=$(B) sh tests/fuzz/run.sh

# ---- install ---------------------------------------------------------------
$(PCFILE): Makefile
	@mkdir -p $(@D)
	printf 'prefix=%s\nincludedir=$${prefix}/include\n\nName: memtrail\nDescription: memtrail in-program API (header only)\nVersion: %s\nCflags: -I$${includedir}\n' \
	    '$(PREFIX)' '$(VERSION)' > $@

install: $(MEMTRAIL) $(RECORDER) $(PCFILE)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/memtrail \
	    $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	    $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man3 \
	    $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 755 $(MEMTRAIL) $(DESTDIR)$(PREFIX)/bin/memtrail
	install -m 755 $(RECORDER) $(DESTDIR)$(PREFIX)/lib/memtrail/libmemtrail.so
	install -m 644 include/memtrail.h $(DESTDIR)$(PREFIX)/include/memtrail.h
	install -m 644 $(PCFILE) $(DESTDIR)$(PREFIX)/lib/pkgconfig/memtrail.pc
	install -m 644 man/memtrail.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/memtrail_snapshot.3 $(DESTDIR)$(PREFIX)/share/man/man3/
	install -m 644 man/memtrail-format.5 $(DESTDIR)$(PREFIX)/share/man/man5/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/memtrail \
	    $(DESTDIR)$(PREFIX)/lib/memtrail/libmemtrail.so \
	    $(DESTDIR)$(PREFIX)/include/memtrail.h \
	    $(DESTDIR)$(PREFIX)/lib/pkgconfig/memtrail.pc \
	    $(DESTDIR)$(PREFIX)/share/man/man1/memtrail.1 \
	    $(DESTDIR)$(PREFIX)/share/man/man3/memtrail_snapshot.3 \
	    $(DESTDIR)$(PREFIX)/share/man/man5/memtrail-format.5

clean:
	rm -rf $(B)

-include $(wildcard $(O)lib/*.d $(O)recorder/*.d $(O)recorder/lib/*.d $(O)viewer/*.d $(B)tests/*.d)
