/*
 * freeres.c - the C and C++ runtimes' own memory at a normal exit: glibc's
 * __libc_freeres() and libstdc++'s __gnu_cxx::__freeres() release what the
 * runtimes keep for the whole life of a process (libstdc++'s emergency
 * exception pool, 72,704 B with GCC 12; stdio buffers, locale data, the
 * cache of thread stacks and their DTVs, the loader's error strings...).
 * valgrind memcheck calls both at exit by default, heaptrack too, so that
 * what is still live afterwards is the program's own: memtrail does the
 * same, so that its "leaked" is memcheck's "in use at exit".
 *
 * Who calls it when (core.c): exit()'s on_exit handler, after the
 * program's atexit handlers, its static destructors and every ELF
 * destructor, before END, with the guard at 0 so that the frees are
 * recorded as the program's. Never on the other ends, where it is unsafe
 * or changes what the program does: _exit() and _Exit() (a forked child
 * that _exits shares stdio buffers with its parent, and __libc_freeres
 * flushes them: the parent's output would come out twice; _exit promises
 * no cleanup at all, memcheck's freeres there notwithstanding), a fatal
 * signal (the handler may have interrupted malloc itself), exec (the
 * image goes away whole), a vfork child (it would free its parent's
 * memory), a recording that stopped, and MEMTRAIL_FREERES=0.
 *
 * Not for: deciding on the exit path (core.c), the hooks (hooks.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recorder.h"

/* From /proc/PID/stat's flags (include/linux/sched.h): the task is in
 * do_exit, past every line of user code it will ever run. */
#define MT_PF_EXITING 0x00000004u

/* The stat file of thread tid of this process: is it on its way out? 1
 * yes, 0 no, -1 gone already, -2 cannot tell (out of descriptors...). */
static int thread_exiting(long tid)
{
	char path[64], buf[1024], num[24];
	ssize_t n;
	int fd;

	memcpy(path, "/proc/self/task/", 16);
	mt_fmt_i64(num, tid);
	strcpy(path + 16, num);
	strcat(path, "/stat");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -1 : -2;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0 && errno != ESRCH)
		n = -2;
	close(fd);
	if (n <= 0)
		return n == -2 ? -2 : -1;
	buf[n] = '\0';
	/* "tid (comm) state ppid ...": comm may hold spaces and parentheses,
	 * so fields are counted from the last ')'; flags is field 9. */
	char *p = strrchr(buf, ')');
	if (!p)
		return -2;
	for (int field = 2; field < 9; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -2;
	}
	unsigned long flags = 0;
	for (p++; *p >= '0' && *p <= '9'; p++)
		flags = flags * 10 + (unsigned long)(*p - '0');
	return (flags & MT_PF_EXITING) != 0;
}

static int task_running(void *ctx, long tid)
{
	(void)ctx;
	/* -1: gone between the listing and the open. */
	int e = thread_exiting(tid);
	return e == 0 || e == -2;
}

/*
 * Does any thread of the process other than this one and the recorder's
 * helper (helper_tid, 0 if none) still run user code? 1 also when it cannot
 * tell (no /proc): only system calls, no allocation. A thread the program
 * joined can linger for a moment in the kernel after pthread_join returned
 * (the join wakes on the tid cleared in do_exit, before the task is
 * released), so exiting tasks do not count: their user code is over.
 */
static int others_running(long self, long helper_tid)
{
	return mt_each_task(self, helper_tid, task_running, NULL) != 0;
}

int mt_freeres_safe(long helper_tid)
{
	return !others_running((long)syscall(SYS_gettid), helper_tid);
}

void mt_freeres_run(void)
{
	void (*cxx)(void), (*libc)(void);
	void *h;

	/* dlsym and dlopen may allocate (an error string): not the
	 * program's, so under the guard. */
	mt_tls.guard++;
	cxx = (void (*)(void))dlsym(RTLD_DEFAULT, "_ZN9__gnu_cxx9__freeresEv");
	/* libstdc++ loaded only in a local scope (a C++ plugin dlopen'ed
	 * RTLD_LOCAL, a Python extension): found by name; the reference
	 * NOLOAD takes is never given back, the process is ending. */
	if (!cxx && (h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD)))
		cxx = (void (*)(void))dlsym(h, "_ZN9__gnu_cxx9__freeresEv");
	libc = (void (*)(void))dlsym(RTLD_DEFAULT, "__libc_freeres");
	mt_tls.guard--;
	/* memcheck's order: the C++ runtime first, as it may still use the
	 * C one. __libc_freeres runs once however often it is called. */
	if (cxx)
		cxx();
	if (libc)
		libc();
}
