/*
 * threads.c - four threads hand heap blocks to each other through a queue:
 * two producers allocate messages, two consumers free them, some leak.
 *
 * For: the accuracy tests (cross-thread frees must replay in true order and
 * count exactly) and the thread column of the reports. Not for: measuring
 * lock contention or recorder overhead under threads (see the benchmarks).
 *
 * Every figure below is independent of scheduling: which consumer frees
 * which message varies from run to run, but the set of blocks does not, and
 * the peak is taken at a moment when all threads have been joined.
 *
 * The threads:
 *   producer 0  200 messages of 64 B  (12,800 B)  seq 0..199
 *   producer 1  200 messages of 128 B (25,600 B)  seq 0..199
 *   consumer 0, consumer 1: each first allocates its 32 B stats block, then
 *               pops messages, frees them, except those with seq % 50 == 49
 *               (4 per producer: 4 x 64 + 4 x 128 = 768 B in 8 blocks), whose
 *               pointer it drops: leaked. The stats block is returned through
 *               pthread_join and freed by main (another cross-thread free).
 * The C runtime: pthread_create allocates each new thread's DTV (dynamic
 * thread vector) with calloc(D, 16) in ld.so (_dl_allocate_tls). D =
 * (number of loaded modules with TLS) + 16 (DTV_SURPLUS 14, plus 2 header
 * slots). Natively and under memcheck only libc has TLS here: D = 17,
 * 272 B per thread, 4 x 272 = 1,088 B in 4 blocks. The thread stacks
 * (256 KiB each, set explicitly so the total stays under glibc's 40 MiB
 * stack cache whatever `ulimit -s` says) are kept in that cache after the
 * join, and with them their DTVs, until glibc's __libc_freeres() empties
 * the cache at exit (memcheck calls it by default, and so does memtrail:
 * the 4 blocks are freed; with memtrail's --keep-runtime or memcheck's
 * --run-libc-freeres=no they are still live at exit).
 * Under a preloaded profiler the process has more TLS modules (the profiler
 * and, e.g., libunwind), so each DTV is 16 B larger per extra module; the
 * `dtv 4` line below tells the test to add 4 x 16 x (extra TLS modules) to
 * bytes_allocated, peak_bytes and every snapshot's live_bytes (all of them
 * come after the threads are created), `dtv_leaked` as much for each DTV
 * still live at exit to leaked_bytes.
 *
 * Main, after joining all four threads:
 *   snapshot 0 "joined": DTVs 1,088 + leaked messages 768 + 2 stats 64
 *                        = 1,920 B in 4 + 8 + 2 = 14 blocks
 *   a 65,536 B summary buffer: live 67,456 B in 15 blocks = the peak (while
 *   the threads run, live is at most 1,088 + 64 + 768 + 12 messages in
 *   flight x 128 = 3,456 B), then freed; then both stats blocks freed.
 *   snapshot 1 "done": 1,088 + 768 = 1,856 B in 12 blocks
 * At exit: the 4 DTVs freed with the stack cache: 768 B in 8 blocks.
 *
 * Totals:
 *   allocations  4 DTV + 400 messages + 2 stats + 1 summary = 407
 *   frees        392 messages + 2 stats + 1 summary + 4 DTV = 399
 *   bytes        1,088 + 12,800 + 25,600 + 64 + 65,536 = 105,088
 *   peak         67,456 B, 15 blocks
 *   leaked       768 B in 8 blocks (407 - 399 = 8)
 *   with the runtime's memory kept at exit: 395 frees, 1,856 B leaked in
 *   12 blocks, the 4 DTVs among them
 *
 * memtrail-expect:
 *   allocations 407
 *   frees 399
 *   bytes_allocated 105088
 *   peak_bytes 67456
 *   peak_blocks 15
 *   leaked_bytes 768
 *   leaked_blocks 8
 *   dtv 4
 *   keep-runtime frees 395
 *   keep-runtime leaked_bytes 1856
 *   keep-runtime leaked_blocks 12
 *   keep-runtime dtv_leaked 4
 *   snapshot 0 label joined live_bytes 1920 live_blocks 14
 *   snapshot 1 label done live_bytes 1856 live_blocks 12
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrail.h>

#define NMSG		200
#define QCAP		8
#define SUMMARY_SIZE	65536

struct msg {
	int producer;
	int seq;
	unsigned char payload[];
};

struct stats {
	unsigned long popped;
	unsigned long kept;
	unsigned long sum;
	unsigned long pad;
};

/* A bounded queue of message pointers; NULL means "stop". */
static struct msg *queue[QCAP];
static int qhead, qlen;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qnotempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t qnotfull = PTHREAD_COND_INITIALIZER;

static void push(struct msg *m)
{
	pthread_mutex_lock(&qlock);
	while (qlen == QCAP)
		pthread_cond_wait(&qnotfull, &qlock);
	queue[(qhead + qlen) % QCAP] = m;
	qlen++;
	pthread_cond_signal(&qnotempty);
	pthread_mutex_unlock(&qlock);
}

static struct msg *pop(void)
{
	struct msg *m;

	pthread_mutex_lock(&qlock);
	while (qlen == 0)
		pthread_cond_wait(&qnotempty, &qlock);
	m = queue[qhead];
	qhead = (qhead + 1) % QCAP;
	qlen--;
	pthread_cond_signal(&qnotfull);
	pthread_mutex_unlock(&qlock);
	return m;
}

static size_t msg_size(int producer)
{
	return producer == 0 ? 64 : 128;
}

static void *produce(void *arg)
{
	int p = (int)(long)arg;
	int i;

	for (i = 0; i < NMSG; i++) {
		size_t size = msg_size(p);
		struct msg *m = malloc(size);

		if (!m)
			_exit(4);
		m->producer = p;
		m->seq = i;
		memset(m->payload, i & 0xff, size - sizeof(*m));
		push(m);
	}
	return NULL;
}

static void *consume(void *arg)
{
	struct stats *st = calloc(1, sizeof(*st));
	struct msg *m;

	(void)arg;
	if (!st)
		_exit(4);
	while ((m = pop()) != NULL) {
		st->popped++;
		st->sum += m->payload[0] + (unsigned long)m->producer;
		if (m->seq % 50 == 49)
			st->kept++;	/* the pointer is dropped: a leak */
		else
			free(m);
	}
	return st;
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(3);
}

int main(void)
{
	pthread_t prod[2], cons[2];
	pthread_attr_t attr;
	struct stats *st[2];
	unsigned long popped = 0, kept = 0, sum = 0;
	char line[128];
	char *summary;
	int i;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (i = 0; i < 2; i++)
		if (pthread_create(&cons[i], &attr, consume, NULL))
			_exit(5);
	for (i = 0; i < 2; i++)
		if (pthread_create(&prod[i], &attr, produce, (void *)(long)i))
			_exit(5);
	pthread_attr_destroy(&attr);

	for (i = 0; i < 2; i++)
		pthread_join(prod[i], NULL);
	push(NULL);
	push(NULL);
	for (i = 0; i < 2; i++) {
		void *ret;

		pthread_join(cons[i], &ret);
		st[i] = ret;
		popped += st[i]->popped;
		kept += st[i]->kept;
		sum += st[i]->sum;
	}
	memtrail_snapshot_named("joined");

	summary = malloc(SUMMARY_SIZE);
	if (!summary)
		_exit(4);
	snprintf(summary, SUMMARY_SIZE, "consumed %lu messages, kept %lu, checksum %lu\n",
		 popped, kept, sum);
	snprintf(line, sizeof(line), "%s", summary);
	free(summary);
	for (i = 0; i < 2; i++)
		free(st[i]);
	memtrail_snapshot_named("done");
	say(line);
	return 0;
}
