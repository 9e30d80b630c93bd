/*
 * children.c - following children (MEMTRAIL_FOLLOW_CHILDREN=1, `memtrail
 * record --follow-children`): which file each process of the recorded
 * tree writes, what the recorder tells the programs it execs, and the lock
 * that keeps a fork from copying the loader's lock taken.
 *
 * Files. FILE is the root's resolved output path. The root (the process
 * whose pid is MEMTRAIL_ROOT_PID, or the first recorded process when the
 * variable is unset) writes FILE; every other process writes FILE.<pid>.
 * A process that execs keeps its pid: the new image is image k (1, 2...)
 * of that pid and writes FILE.<pid>.<k>, so it never overwrites the file
 * its earlier image wrote (which ends with END how=exec). The exec hooks
 * pass MEMTRAIL_IMAGE=<pid>.<k> in the new program's environment for that;
 * any other process ignores a value that does not carry its own pid.
 *
 * Environment. When following, the root publishes MEMTRAIL_ROOT_PID and
 * its resolved path in MEMTRAIL_OUTPUT (placeholders already expanded and
 * '%' doubled) for its descendants, and LD_PRELOAD is left as it is. A
 * program that execs with an environment of its own making without those
 * variables is not followed further.
 *
 * Fork safety. libunwind finds unwind tables with dl_iterate_phdr, which
 * holds the loader's lock; a fork while another thread is inside copies
 * that lock taken, and the recording child would wait for it forever on
 * its first new stack. When following, every dl_iterate_phdr call (hooked
 * in hooks.c) holds a read lock here, and the fork prepare handler takes it
 * for writing: a fork waits until no thread is inside.
 *
 * Nothing here allocates except putenv's array (with the guard held, so it
 * is not the program's).
 *
 * Not for: the session itself (core.c), the launcher (viewer/cmd-record.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder.h"

extern char **environ;

static struct {
	int follow;
	int root;             /* this image writes FILE */
	unsigned image;       /* 0: the first image of this pid */
	char file[4096];      /* FILE: the root's resolved path */
} C;

static char env_root[64];             /* MEMTRAIL_ROOT_PID=... */
static char env_output[16 + 2 * 4096 + 1];   /* MEMTRAIL_OUTPUT=... */
static char env_image[64];            /* MEMTRAIL_IMAGE=... (for an exec) */

static pthread_rwlock_t dl_lock = PTHREAD_RWLOCK_INITIALIZER;
static __thread int dl_depth __attribute__((tls_model("initial-exec")));

/* A decimal number taking all of s (up to end, or to the NUL); -1 if not. */
static long long parse_dec(const char *s, const char *end)
{
	long long v = 0;
	if (s == end || !*s)
		return -1;
	for (; end ? s < end : *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || v > 100000000000ll)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

static void put(char *out, size_t len, size_t *pos, const char *s, int *over)
{
	size_t n = strlen(s);
	if (*pos + n >= len) {
		*over = 1;
		return;
	}
	memcpy(out + *pos, s, n + 1);
	*pos += n;
}

/* This image's file into out: FILE, FILE.<pid> or FILE.<pid>.<k>. */
static int own_path(char *out, size_t len)
{
	char num[24];
	size_t pos = 0;
	int over = 0;
	out[0] = '\0';
	put(out, len, &pos, C.file, &over);
	if (C.root && C.image == 0)
		return over ? -1 : 0;
	put(out, len, &pos, ".", &over);
	put(out, len, &pos, mt_fmt_i64(num, getpid()), &over);
	if (C.image) {
		put(out, len, &pos, ".", &over);
		put(out, len, &pos, mt_fmt_i64(num, C.image), &over);
	}
	return over ? -1 : 0;
}

void mt_children_config(struct mt_config *cfg)
{
	const char *s;
	pid_t pid = getpid();

	s = mt_env("MEMTRAIL_FOLLOW_CHILDREN");
	C.follow = s && *s && strcmp(s, "0") != 0;
	cfg->follow = C.follow;
	if (!C.follow || !cfg->output[0])
		return;
	/* Image k of this pid, if an exec we followed started us. */
	C.image = 0;
	if ((s = mt_env("MEMTRAIL_IMAGE"))) {
		const char *dot = strchr(s, '.');
		long long p = dot ? parse_dec(s, dot) : -1;
		long long k = dot ? parse_dec(dot + 1, NULL) : -1;
		if (p == pid && k > 0 && k < 1000000)
			C.image = (unsigned)k;
	}
	s = mt_env("MEMTRAIL_ROOT_PID");
	C.root = !s || !*s || parse_dec(s, NULL) == pid;
	memcpy(C.file, cfg->output, sizeof(C.file));
	C.file[sizeof(C.file) - 1] = '\0';
	if (own_path(cfg->output, sizeof(cfg->output)) < 0)
		cfg->output[0] = '\0';
}

int mt_children_following(void)
{
	return C.follow;
}

void mt_children_publish(void)
{
	char num[24];
	const char *s;
	size_t pos;

	if (!C.follow || !environ)
		return;
	if (!mt_env("MEMTRAIL_ROOT_PID")) {
		memcpy(env_root, "MEMTRAIL_ROOT_PID=", 18);
		strcpy(env_root + 18, mt_fmt_i64(num, getpid()));
		putenv(env_root);
	}
	if (!C.root || C.image)
		return;
	/* FILE with '%' doubled: a descendant expands it back to FILE. */
	memcpy(env_output, "MEMTRAIL_OUTPUT=", 16);
	pos = 16;
	for (const char *p = C.file; *p; p++) {
		env_output[pos++] = *p;
		if (*p == '%')
			env_output[pos++] = '%';
	}
	env_output[pos] = '\0';
	s = mt_env("MEMTRAIL_OUTPUT");
	if (!s || strcmp(s, env_output + 16) != 0)
		putenv(env_output);
}

int mt_children_fork_output(char *out, size_t len)
{
	C.root = 0;
	C.image = 0;
	return own_path(out, len);
}

/* ---- the environment of an exec ------------------------------------------ */

size_t mt_children_env_slots(char *const envp[])
{
	size_t n = 0;
	if (envp)
		while (envp[n])
			n++;
	return n + 2;
}

char **mt_children_env(char *const envp[], char **buf, size_t slots)
{
	char num[24];
	size_t n = 0;

	memcpy(env_image, "MEMTRAIL_IMAGE=", 15);
	strcpy(env_image + 15, mt_fmt_i64(num, getpid()));
	strcat(env_image, ".");
	strcat(env_image, mt_fmt_i64(num, (int64_t)C.image + 1));
	/* slots - 2: room for ours and the NULL, even if another thread
	 * added to environ since the slots were counted. */
	for (size_t i = 0; envp && envp[i] && n < slots - 2; i++)
		if (strncmp(envp[i], "MEMTRAIL_IMAGE=", 15) != 0)
			buf[n++] = envp[i];
	buf[n++] = env_image;
	buf[n] = NULL;
	return buf;
}

/* ---- dl_iterate_phdr and fork ---------------------------------------------- */

void mt_children_dl_enter(void)
{
	if (C.follow && dl_depth++ == 0)
		pthread_rwlock_rdlock(&dl_lock);
}

void mt_children_dl_leave(void)
{
	if (C.follow && --dl_depth == 0)
		pthread_rwlock_unlock(&dl_lock);
}

/* A fork from inside a dl_iterate_phdr callback holds the read lock: the
 * loader's lock is ours then, and the wait would never end. */
static int fork_locked;

void mt_children_fork_prepare(void)
{
	fork_locked = C.follow && dl_depth == 0;
	if (fork_locked)
		pthread_rwlock_wrlock(&dl_lock);
}

void mt_children_fork_parent(void)
{
	if (fork_locked)
		pthread_rwlock_unlock(&dl_lock);
}

void mt_children_fork_child(void)
{
	pthread_rwlock_t fresh = PTHREAD_RWLOCK_INITIALIZER;
	if (fork_locked)
		dl_lock = fresh;
}

