/*
 * test_series.c - unit tests of lib/series (live heap over time), driven by
 * synthetic events through the aggregator's replay callbacks, the series
 * noting the aggregator's live figures after each: no log file is read.
 *
 * The main scenario replays the event sequence that samples/phases.c
 * documents in its header comment (the same blocks, in the same order), so
 * the expected figures are the sample's own: 67,712 B at snapshot 0, a peak
 * of 362,624 B in 23 blocks, 9,216 B in 3 blocks leaked. The run's figures
 * (peak, snapshots, totals, live bytes) are the aggregator's (lib/agg.h),
 * which the series notes after each event, as lib/session.c does. Not
 * here: the reader itself (test_replay), trees (test_view_model).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agg.h"
#include "error.h"
#include "replay.h"
#include "series.h"


struct fixture {
	struct mt_series *s;
	struct mt_agg *a;         /* the run's figures, from the same events */
	struct mt_replay_ops aops;
	uint64_t seq, time;
	/* the synthetic heap: address -> size of the block */
	uint64_t size[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->s = mt_series_new();
	f->a = mt_agg_new();
	if (!f->s || !f->a || mt_agg_request(f->a, NULL, 0, 0) < 0) {
		mt_series_free(f->s);
		mt_agg_free(f->a);
		free(f);
		return -1;
	}
	mt_agg_ops(&f->aops);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	mt_series_free(f->s);
	mt_agg_free(f->a);
	free(f);
	return 0;
}

/* The series notes the heap the aggregator counted after event seq. */
static void note(struct fixture *f, uint64_t seq)
{
	int64_t bytes, blocks;

	mt_agg_live(f->a, &bytes, &blocks);
	mt_series_note(f->s, f->time, bytes, bytes, bytes, blocks, seq + 1);
}

/* An allocation of n bytes into slot a, 1 µs after the previous event. */
static void alloc_(struct fixture *f, unsigned a, uint64_t n)
{
	struct mt_event ev = { .count = 1 };

	f->time += 1000;
	ev.seq = f->seq++;
	ev.time_ns = f->time;
	ev.addr = 0x1000 + a;
	ev.size = ev.asked = n;
	f->size[a] = n;
	assert_int_equal(f->aops.on_alloc(f->a, &ev), 0);
	note(f, ev.seq);
}

static void free_(struct fixture *f, unsigned a)
{
	struct mt_event ev = { .count = 1 };

	f->time += 1000;
	ev.seq = f->seq++;
	ev.time_ns = f->time;
	ev.addr = 0x1000 + a;
	ev.size = ev.asked = f->size[a];
	assert_int_equal(f->aops.on_free(f->a, &ev), 0);
	note(f, ev.seq);
}

/* realloc: one seq number, the free half then the alloc half. */
static void realloc_(struct fixture *f, unsigned a, uint64_t n)
{
	struct mt_event ev = { .count = 1 };

	f->time += 1000;
	ev.seq = f->seq++;
	ev.time_ns = f->time;
	ev.addr = 0x1000 + a;
	ev.size = ev.asked = f->size[a];
	ev.realloc = 1;
	assert_int_equal(f->aops.on_free(f->a, &ev), 0);
	note(f, ev.seq);
	ev.size = ev.asked = n;
	f->size[a] = n;
	assert_int_equal(f->aops.on_alloc(f->a, &ev), 0);
	note(f, ev.seq);
}

static void snapshot_(struct fixture *f, uint32_t index, const char *label)
{
	struct mt_snapshot sn = { .index = index, .label = label };

	f->time += 1000;
	sn.seq = f->seq++;
	sn.time_ns = f->time;
	assert_int_equal(f->aops.on_snapshot(f->a, &sn), 0);
	note(f, sn.seq);
}

static void end_(struct fixture *f)
{
	struct mt_end e = { .clean = 1 };

	f->time += 1000;
	e.time_ns = f->time;
	e.events = f->seq;
	f->aops.on_end(f->a, &e);
	mt_series_end(f->s, e.time_ns);
}

/*
 * The phases sample: slots 0 config, 1-4 entries, 5 row table, 6-21 rows,
 * 22 scratch.
 */
static void play_phases(struct fixture *f)
{
	int i;

	alloc_(f, 0, 1024);
	for (i = 1; i <= 4; i++)
		alloc_(f, i, 256);
	alloc_(f, 5, 128);
	for (i = 0; i < 16; i++)
		alloc_(f, 6 + i, 4096);
	snapshot_(f, 0, "loaded");
	for (i = 0; i < 8; i++)
		realloc_(f, 6 + i, 8192);
	alloc_(f, 22, 262144);
	free_(f, 22);
	for (i = 8; i < 12; i++) {
		free_(f, 6 + i);
		alloc_(f, 6 + i, 2048);
	}
	snapshot_(f, 1, "grown");
	for (i = 1; i <= 4; i++)
		free_(f, i);
	for (i = 0; i < 14; i++)
		free_(f, 6 + i);
	free_(f, 5);
	snapshot_(f, 2, "freed");
	end_(f);
}

static void test_phases_totals(void **state)
{
	struct fixture *f = *state;
	const struct mt_agg_stats *st = mt_agg_stats(f->a);

	play_phases(f);
	assert_int_equal(mt_agg_error(f->a), 0);
	assert_int_equal(st->peak_bytes, 362624);
	assert_int_equal(st->peak_blocks, 23);
	assert_int_equal(st->end_bytes, 9216);
	assert_int_equal(st->end_blocks, 3);
	assert_int_equal(st->allocations, 35);
	assert_int_equal(st->frees, 32);
	assert_int_equal(st->bytes_allocated, 403584);
	assert_int_equal(st->end_time_ns, f->time);
	assert_int_equal(st->events, f->seq);
}

static void test_phases_snapshots(void **state)
{
	struct fixture *f = *state;
	const struct mt_agg_stats *st = mt_agg_stats(f->a);
	static const struct { const char *label; uint64_t bytes, blocks; } want[3] = {
		{ "loaded", 67712, 22 }, { "grown", 92288, 22 }, { "freed", 9216, 3 },
	};

	play_phases(f);
	assert_int_equal(st->nsnapshots, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct mt_agg_snapshot *sn = &st->snapshots[i];

		assert_int_equal(sn->index, i);
		assert_string_equal(sn->label, want[i].label);
		assert_int_equal(sn->live_bytes, want[i].bytes);
		assert_int_equal(sn->live_blocks, want[i].blocks);
	}
}

/* The peak is the event after which the scratch buffer was live. */
static void test_peak_position(void **state)
{
	struct fixture *f = *state;
	const struct mt_agg_stats *st = mt_agg_stats(f->a);

	play_phases(f);
	/* 22 allocations, snapshot 0, 8 reallocs: the scratch is event 31 */
	assert_int_equal(st->peak_seq, 22 + 1 + 8);
	assert_int_equal(st->peak_time_ns, (22 + 1 + 8 + 1) * 1000);
}

/*
 * Resampled into any number of columns, the maximum over the columns is the
 * peak, exactly one column has the peak flag and holds the peak, and the
 * last column ends with the leak.
 */
static void test_resample_keeps_peak(void **state)
{
	struct fixture *f = *state;
	const struct mt_agg_stats *st = mt_agg_stats(f->a);
	struct mt_series_col cols[300];
	size_t widths[] = { 1, 2, 7, 72, 80, 300 };

	play_phases(f);
	for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
		size_t n = widths[w], flagged = 0;
		uint64_t max = 0;

		assert_int_equal(mt_series_resample(f->s, 0, f->time + 1, n, &st->peak_time_ns,
						    cols), 0);
		for (size_t i = 0; i < n; i++) {
			if (cols[i].max_bytes > max)
				max = cols[i].max_bytes;
			assert_true(cols[i].min_bytes <= cols[i].max_bytes);
			assert_true(cols[i].end_bytes <= cols[i].max_bytes);
			if (cols[i].has_peak) {
				flagged++;
				assert_int_equal(cols[i].max_bytes, 362624);
			}
		}
		assert_int_equal(max, st->peak_bytes);
		assert_int_equal(flagged, 1);
		assert_int_equal(cols[n - 1].end_bytes, 9216);
		assert_int_equal(cols[n - 1].end_blocks, 3);
		assert_int_equal(cols[n - 1].end_events, f->seq);
		/* the end state is after the last record */
		assert_true(cols[n - 1].end_ns > f->time);
	}
}

/* At 1 µs per bucket, a column per event boundary gives exact end states. */
static void test_resample_end_states(void **state)
{
	struct fixture *f = *state;
	struct mt_series_col cols[2];

	play_phases(f);
	assert_true(mt_series_bucket_ns(f->s) <= 1024);
	/* snapshot 0 is event 22 at 23 µs: the state just after it */
	assert_int_equal(mt_series_resample(f->s, 0, 2 * 23 * 1024, 2, NULL, cols), 0);
	assert_int_equal(cols[0].end_bytes, 67712);
	assert_int_equal(cols[0].end_blocks, 22);
	assert_int_equal(cols[0].end_events, 23);
	/*
	 * That state holds for every time up to the end of the bucket of the
	 * column's last time (23,551 ns, in bucket 22 of 1,024 ns): the next
	 * event is at 24 µs.
	 */
	assert_int_equal(cols[0].end_ns, 23 * 1024);
	assert_int_equal(cols[0].has_peak, 0);
}

/*
 * A run long enough to widen the buckets many times: a 1 µs spike early on
 * still shows as the maximum of its column, and the quiet stretches are flat.
 */
static void test_long_run_spike(void **state)
{
	struct fixture *f = *state;
	struct mt_series_col cols[100];
	const struct mt_agg_stats *st = mt_agg_stats(f->a);
	size_t spike_col = 100;

	alloc_(f, 0, 100);
	f->time = 5000000000ull;          /* 5 s later */
	alloc_(f, 1, 1 << 20);
	f->time += 1;
	free_(f, 1);
	f->time = 100000000000ull;        /* 100 s */
	alloc_(f, 2, 50);
	end_(f);
	assert_true(mt_series_bucket_ns(f->s) > 1024);
	assert_int_equal(st->peak_bytes, 100 + (1 << 20));
	assert_int_equal(mt_series_resample(f->s, 0, f->time + 1, 100, &st->peak_time_ns,
					    cols), 0);
	for (size_t i = 0; i < 100; i++) {
		if (cols[i].max_bytes == 100 + (1 << 20)) {
			assert_int_equal(spike_col, 100);
			spike_col = i;
			assert_true(cols[i].has_peak);
		}
	}
	/*
	 * The spike's bucket counts in the column where that bucket starts: the
	 * column of the spike's time (5.000001 s of 100.000002 s: column 5) or,
	 * when its bucket began before that column, the one before.
	 */
	{
		uint64_t w = mt_series_bucket_ns(f->s), span = f->time + 1;
		uint64_t start = (5000001000ull / w) * w;

		assert_int_equal(spike_col, (size_t)((unsigned __int128)start * 100 / span));
		assert_true(spike_col == 4 || spike_col == 5);
	}
	assert_int_equal(cols[50].max_bytes, 100);
	assert_int_equal(cols[50].min_bytes, 100);
	assert_int_equal(cols[99].end_bytes, 150);
}

/*
 * Resident-set samples: a column shows the largest sample in its slice,
 * else the latest one before it; none before the first sample. Samples
 * 5,000 at 10 us, 9,000 and 7,000 at 30 and 31 us, 2,000 at 70 us; run to
 * 100 us in 10 columns of 10 us (buckets of 1,024 ns: each column starts
 * its own buckets).
 */
static void test_rss(void **state)
{
	struct fixture *f = *state;
	struct mt_series_col cols[10];
	static const uint64_t want[10] = {
		0, 5000, 5000, 9000, 7000, 7000, 7000, 2000, 2000, 2000,
	};

	mt_series_rss(f->s, 10240, 5000);
	mt_series_rss(f->s, 30720, 9000);
	mt_series_rss(f->s, 31744, 7000);
	mt_series_rss(f->s, 71680, 2000);
	f->time = 102400 - 1000;
	end_(f);
	assert_int_equal(mt_series_bucket_ns(f->s), 1024);
	assert_int_equal(mt_series_resample(f->s, 0, 102400, 10, NULL, cols), 0);
	for (size_t i = 0; i < 10; i++)
		assert_int_equal(cols[i].rss_bytes, want[i]);
}

static void test_reset_and_args(void **state)
{
	struct fixture *f = *state;
	struct mt_series_col c;
	uint64_t t = 5;

	play_phases(f);
	mt_series_reset(f->s);
	assert_int_equal(mt_series_resample(f->s, 10, 10, 1, NULL, &c), MT_E_ARG);
	assert_int_equal(mt_series_resample(f->s, 0, 10, 0, NULL, &c), MT_E_ARG);
	/* an empty series resamples to zeros */
	assert_int_equal(mt_series_resample(f->s, 0, 10, 1, NULL, &c), 0);
	assert_int_equal(c.max_bytes, 0);
	assert_int_equal(c.has_peak, 0);
	/* the peak's column is the one holding the time given */
	assert_int_equal(mt_series_resample(f->s, 0, 10, 1, &t, &c), 0);
	assert_int_equal(c.has_peak, 1);
	mt_series_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_phases_totals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_phases_snapshots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_peak_position, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resample_keeps_peak, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resample_end_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_run_spike, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rss, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_and_args, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
