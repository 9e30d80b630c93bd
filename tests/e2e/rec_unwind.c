/*
 * rec_unwind.c - a program that leaves frames without returning, for
 * rec_unwind.sh: the incremental unwinder (recorder/unwind.c) must give
 * every stack exactly as the full one does around each of these.
 *
 *   rec_unwind longjmp    allocates in deep frames, longjmp/siglongjmp/
 *                         _longjmp out of them (also out of a signal
 *                         handler), allocates again at other depths
 *   rec_unwind context    two coroutines (swapcontext) allocating in turn,
 *                         each switching away from inside deep frames
 *   rec_unwind signal     a handler that allocates, raised from deep
 *                         allocating frames, and a handler that raises
 *                         another signal whose handler allocates
 *   rec_unwind threads    threads that allocate and end by returning or
 *                         by pthread_exit from deep frames, one after the
 *                         other and four at once
 *   rec_unwind alternate  recursion 40 deep whose every level calls down
 *                         from one of two call sites, the pattern changing
 *                         at every other level and between allocations:
 *                         each walk keeps many short runs of the last one
 *                         (more than the walker's table of runs holds)
 *   rec_unwind follow     allocations in turn from sibling call chains
 *                         under one caller: each stack shares its outer
 *                         frames with the one before and differs from the
 *                         next one on (the recorder finds such a stack
 *                         again by its inner frames alone: tbuf.c,
 *                         local_stack)
 *   rec_unwind reload A B dlopens A and B in turn, allocating in their
 *                         deep frames, and dlcloses each: B's code lands
 *                         where A's was, with other frame layouts, so a
 *                         rule kept for A's addresses is wrong for B's
 *                         (rec_unwind_plugin.c built twice)
 *
 * Every block is freed; the program prints how many allocations it made
 * (its own count), the same under any profiler. Not a sample: its figures
 * are not worked out, only compared between unwinders.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#define NOIPA __attribute__((noipa))

static unsigned long allocs;

NOIPA static void alloc_here(size_t n)
{
	void *p = malloc(n);
	if (!p)
		exit(2);
	__atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
	free(p);
}

/* Allocates on the way down, depth frames deep, then calls at_bottom. */
NOIPA static void down(int depth, void (*at_bottom)(int), int arg)
{
	alloc_here(16 + (size_t)depth);
	if (depth > 0)
		down(depth - 1, at_bottom, arg);
	else if (at_bottom)
		at_bottom(arg);
	alloc_here(8);
}

/* ---- longjmp ---------------------------------------------------------------- */

static jmp_buf jb;
static sigjmp_buf sjb;

NOIPA static void jump_out(int how)
{
	alloc_here(100);
	if (how == 0)
		longjmp(jb, 1);
	if (how == 1)
		_longjmp(jb, 1);
	siglongjmp(sjb, 1);
}

static void on_usr2(int sig)
{
	(void)sig;
	alloc_here(200);
	siglongjmp(sjb, 1);
}

NOIPA static void raise_usr2(int arg)
{
	(void)arg;
	raise(SIGUSR2);
}

NOIPA static void run_longjmp(void)
{
	signal(SIGUSR2, on_usr2);
	for (int i = 0; i < 60; i++) {
		int how = i % 3;
		if (how < 2) {
			if (setjmp(jb) == 0)
				down(5 + i % 7, jump_out, how);
		} else if (sigsetjmp(sjb, 1) == 0) {
			down(3 + i % 5, i % 2 ? jump_out : raise_usr2, 2);
		}
		down(i % 4, NULL, 0);
	}
}

/* ---- swapcontext ------------------------------------------------------------ */

static ucontext_t main_ctx, co_ctx[2];
static int co_turns[2];

NOIPA static void co_yield_to(int self)
{
	alloc_here(64);
	swapcontext(&co_ctx[self], &main_ctx);
	alloc_here(72);
}

static void co_body(int self)
{
	for (int i = 0; i < 40; i++) {
		down(2 + (i * 3 + self) % 6, co_yield_to, self);
		co_turns[self]++;
	}
}

static void co_entry(void)
{
	/* makecontext passes ints: which coroutine this is comes from a global. */
	static int next;
	co_body(next++);
}

NOIPA static void run_context(void)
{
	static char stacks[2][256 * 1024];
	for (int k = 0; k < 2; k++) {
		getcontext(&co_ctx[k]);
		co_ctx[k].uc_stack.ss_sp = stacks[k];
		co_ctx[k].uc_stack.ss_size = sizeof(stacks[k]);
		co_ctx[k].uc_link = &main_ctx;
		makecontext(&co_ctx[k], co_entry, 0);
	}
	/* Each yields back to main from deep frames; main resumes them in
	 * turn until both have ended (uc_link brings an ended one back). */
	int done[2] = { 0, 0 };
	while (!done[0] || !done[1]) {
		for (int k = 0; k < 2; k++) {
			if (done[k])
				continue;
			down(1 + k, NULL, 0);
			swapcontext(&main_ctx, &co_ctx[k]);
			done[k] = co_turns[k] == 40;
		}
	}
}

/* ---- signal handlers -------------------------------------------------------- */

static void on_usr1(int sig)
{
	(void)sig;
	down(3, NULL, 0);
	raise(SIGALRM);
	alloc_here(33);
}

static void on_alrm(int sig)
{
	(void)sig;
	down(2, NULL, 0);
}

NOIPA static void raise_usr1(int arg)
{
	(void)arg;
	raise(SIGUSR1);
}

NOIPA static void run_signal(void)
{
	signal(SIGUSR1, on_usr1);
	signal(SIGALRM, on_alrm);
	for (int i = 0; i < 50; i++)
		down(i % 9, raise_usr1, 0);
}

/* ---- threads ---------------------------------------------------------------- */

NOIPA static void thread_exit_here(int arg)
{
	alloc_here(48);
	if (arg & 1)
		pthread_exit(NULL);
}

static void *thread_main(void *arg)
{
	long k = (long)arg;
	for (int i = 0; i < 20; i++)
		down((int)(k + i) % 5, NULL, 0);
	down(4 + (int)(k % 3), thread_exit_here, (int)k);
	return NULL;
}

NOIPA static void run_threads(void)
{
	pthread_t t[4];
	for (long k = 0; k < 6; k++) {
		pthread_create(&t[0], NULL, thread_main, (void *)k);
		pthread_join(t[0], NULL);
		down((int)k, NULL, 0);
	}
	for (long k = 0; k < 4; k++)
		pthread_create(&t[k], NULL, thread_main, (void *)k);
	for (long k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	down(3, NULL, 0);
}

NOIPA static int run_reload(const char *a, const char *b)
{
	for (int i = 0; i < 20; i++) {
		void *h = dlopen(i & 1 ? b : a, RTLD_NOW | RTLD_LOCAL);
		void *(*fn)(int, size_t) = h ? (void *(*)(int, size_t))dlsym(h, "plug_alloc") : NULL;
		if (!fn) {
			fprintf(stderr, "rec_unwind: %s\n", dlerror());
			return -1;
		}
		for (int k = 0; k < 50; k++) {
			free(fn(k % 7, 16 + (size_t)k));
			allocs++;
		}
		dlclose(h);
	}
	return 0;
}

/* ---- alternate ---------------------------------------------------------------- */

/* The leaves: two allocating functions with frames of other sizes, so
 * that the innermost frames are new at every allocation. */
NOIPA static int leaf_a(void)
{
	alloc_here(8);
	return 0;
}

NOIPA static int leaf_b(void)
{
	volatile char pad[96];
	pad[0] = 0;
	alloc_here(9);
	return pad[0];
}

/* d levels down to a leaf (leaf_b if which); bit i of pat picks level i's
 * call site. */
NOIPA static int level(int d, unsigned long pat, int which)
{
	int x;
	if (d == 0) {
		if (which) {
			x = leaf_b();
			return x + 1;
		}
		x = leaf_a();
		return x + 2;
	}
	if (pat & 1) {
		x = level(d - 1, pat >> 1, which);
		return x + 1;
	}
	x = level(d - 1, pat >> 1, which);
	return x * 3 + 1;
}

/* ---- follow ------------------------------------------------------------------ */

NOIPA static void tip_a(int i)
{
	alloc_here(24 + (size_t)(i & 7));
}

NOIPA static void tip_b(int i)
{
	alloc_here(40 + (size_t)(i & 1));
}

NOIPA static void fork_a(int i)
{
	tip_a(i);
	tip_b(i);
}

NOIPA static void fork_b(int i)
{
	tip_b(i);
	tip_a(i);
	if (i & 4)
		fork_a(i);
}

static void run_follow(void)
{
	for (int i = 0; i < 20000; i++) {
		if (i % 3)
			fork_a(i);
		else
			fork_b(i);
		down(i % 5, NULL, 0);
	}
}

static void run_alternate(void)
{
	unsigned long s = 0;
	for (int i = 0; i < 1000; i++)
		s += (unsigned long)level(40, (i & 1) ? 0x5555555555555555ul : 0, i & 1);
	if (!s)
		exit(3);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "longjmp") == 0)
		run_longjmp();
	else if (strcmp(mode, "context") == 0)
		run_context();
	else if (strcmp(mode, "signal") == 0)
		run_signal();
	else if (strcmp(mode, "threads") == 0)
		run_threads();
	else if (strcmp(mode, "alternate") == 0)
		run_alternate();
	else if (strcmp(mode, "follow") == 0)
		run_follow();
	else if (strcmp(mode, "reload") == 0 && argc == 4) {
		if (run_reload(argv[2], argv[3]) < 0)
			return 1;
	} else {
		fprintf(stderr, "usage: rec_unwind longjmp|context|signal|threads|alternate|follow|reload A B\n");
		return 2;
	}
	printf("%s: %lu allocations\n", mode, allocs);
	return 0;
}
