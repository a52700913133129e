/*
 * unit_core.c - table-driven unit tests of the pure parts of the core:
 * size parsing, names, the collectives table (byte counts, busbw factors,
 * DeepSpeed formulas, in-place layout), size series, and the data pattern's
 * promise that every partial result is exact.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "plugin.h"
#include "shakedown/coll.h"
#include "names.h"
#include "shakedown/pattern_host.h"
#include "shakedown/pattern.h"
#include "tap.h"
#include "util.h"

static void test_sizes(void)
{
	static const struct { const char *in; int ok; uint64_t want; } rows[] = {
		{ "0", 1, 0 }, { "8", 1, 8 }, { "1K", 1, 1024 },
		{ "1k", 1, 1024 }, { "256M", 1, 256ull << 20 },
		{ "8G", 1, 8ull << 30 }, { "2T", 1, 2ull << 40 },
		{ "4KB", 1, 4096 }, { "", 0, 0 }, { "-1", 0, 0 },
		{ "K", 0, 0 }, { "1.5M", 0, 0 }, { "12X", 0, 0 },
		{ "1MM", 0, 0 }, { "99999999999999999999", 0, 0 },
		{ "17179869184G", 0, 0 }, { " 1K", 0, 0 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t v = 0;
		int rc = sd_parse_size(rows[i].in, &v);
		ok((rc == 0) == rows[i].ok && (!rows[i].ok || v == rows[i].want),
		   "size '%s' -> %s %llu", rows[i].in,
		   rows[i].ok ? "ok" : "error", (unsigned long long)rows[i].want);
	}
}

static void test_amounts(void)
{
	static const struct {
		const char *in;
		int suffix, ok;
		double want;
	} rows[] = {
		{ "0.5", 0, 1, 0.5 }, { "8.0e9", 1, 1, 8e9 }, { "8B", 1, 1, 8e9 },
		{ "124M", 1, 1, 124e6 }, { "512K", 1, 1, 512e3 },
		{ "1.5T", 1, 1, 1.5e12 }, { "8B", 0, 0, 0 }, { "0", 0, 0, 0 },
		{ "-3", 1, 0, 0 }, { "nan", 0, 0, 0 }, { "inf", 0, 0, 0 },
		{ "", 1, 0, 0 }, { "2e6", 0, 0, 0 }, { "8BB", 1, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double v = 0;
		int rc = sd_parse_amount(rows[i].in, 1e6 * (rows[i].suffix ? 1e9
									   : 1),
					 rows[i].suffix, &v);
		ok((rc == 0) == rows[i].ok && (!rows[i].ok || v == rows[i].want),
		   "amount '%s'%s -> %s %g", rows[i].in,
		   rows[i].suffix ? " (suffixes)" : "",
		   rows[i].ok ? "ok" : "error", rows[i].want);
	}
}

static void test_names(void)
{
	enum sd_op op;
	enum sd_dtype t;
	enum sd_redop r;
	const char *hint;
	ok(sd_op_from_name("all_reduce", &op, &hint) == 0 &&
	   op == SD_OP_ALL_REDUCE, "op all_reduce");
	ok(sd_op_from_name("allreduce", &op, &hint) == -1 && hint &&
	   strcmp(hint, "all_reduce") == 0, "allreduce suggests all_reduce");
	ok(sd_op_from_name("alltoall", &op, &hint) == -1 && hint &&
	   strcmp(hint, "all_to_all") == 0, "alltoall suggests all_to_all");
	ok(sd_dtype_from_name("half", &t, NULL) == 0 && t == SD_FLOAT16,
	   "half is float16");
	ok(sd_dtype_from_name("bf16", &t, NULL) == 0 && t == SD_BFLOAT16,
	   "bf16 is bfloat16");
	ok(sd_dtype_from_name("flaot32", &t, &hint) == -1 && hint &&
	   strcmp(hint, "float32") == 0, "flaot32 suggests float32");
	ok(sd_redop_from_name("avg", &r, NULL) == 0 && r == SD_AVG, "avg");
	ok(sd_redop_from_name("mul", &r, NULL) == -1, "mul is unknown");
	for (int i = 0; i < SD_OP_COUNT; i++)
		ok(sd_op_from_name(sd_op_name(i), &op, NULL) == 0 && op == i,
		   "op name round trip %s", sd_op_name(i));
	for (int i = 0; i < SD_DTYPE_COUNT; i++)
		ok(sd_dtype_from_name(sd_dtype_name(i), &t, NULL) == 0 && t == i,
		   "dtype name round trip %s", sd_dtype_name(i));
}

static void test_counts(void)
{
	/* size 1 MiB of float32 = 262144 elements, on n ranks */
	static const struct {
		enum sd_op op; int n; size_t send, recv; double busbw;
		double ds_tput, ds_busbw;
	} rows[] = {
		{ SD_OP_ALL_REDUCE, 4, 262144, 262144, 1.5, 2, 1.5 },
		{ SD_OP_ALL_GATHER, 4, 65536, 262144, 0.75, 4, 3 },
		{ SD_OP_REDUCE_SCATTER, 4, 262144, 65536, 0.75, 1, 0.75 },
		{ SD_OP_ALL_TO_ALL, 4, 262144, 262144, 0.75, 1, 0.75 },
		{ SD_OP_BROADCAST, 4, 262144, 262144, 1, 1, 1 },
		{ SD_OP_REDUCE, 4, 262144, 262144, 1, 1, 1 },
		{ SD_OP_GATHER, 4, 65536, 262144, 0.75, 4, 3 },
		{ SD_OP_SCATTER, 4, 262144, 65536, 0.75, 1, 0.75 },
		{ SD_OP_SENDRECV, 4, 262144, 262144, 1, 1, 1 },
		{ SD_OP_PT2PT, 2, 262144, 262144, 1, 1, 1 },
		{ SD_OP_ALL_REDUCE, 3, 262144, 262144, 4.0 / 3, 2, 4.0 / 3 },
		/* a rank's block rounded down to 16 bytes (4 floats), as
		 * nccl-tests' all_gather.cu and alltoall.cu round it */
		{ SD_OP_ALL_GATHER, 3, 87380, 262140, 2.0 / 3, 3, 2 },
		{ SD_OP_ALL_TO_ALL, 3, 262140, 262140, 2.0 / 3, 1, 2.0 / 3 },
		{ SD_OP_ALL_REDUCE, 1, 262144, 262144, 0, 2, 0 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct sd_coll *c = sd_coll_get(rows[i].op);
		size_t s, r;
		sd_coll_counts(c, 262144, sizeof(float), rows[i].n, &s, &r);
		is_int(s, rows[i].send, "%s n=%d send count", c->name,
		       rows[i].n);
		is_int(r, rows[i].recv, "%s n=%d recv count", c->name,
		       rows[i].n);
		is_dbl(sd_factor_value(c->busbw, rows[i].n), rows[i].busbw, 1e-12,
		       "%s n=%d busbw factor", c->name, rows[i].n);
		/* DeepSpeed: 1 MB in 1000 us is 1e9 B/s = 8 Gbps before factors */
		double tput, busbw;
		sd_ds_bandwidth(c, rows[i].n, 1000000, 1000, &tput, &busbw);
		is_dbl(tput, 8 * rows[i].ds_tput, 1e-9,
		       "%s n=%d DeepSpeed throughput", c->name, rows[i].n);
		is_dbl(busbw, 8 * rows[i].ds_busbw, 1e-9,
		       "%s n=%d DeepSpeed busbw", c->name, rows[i].n);
	}
	is_int(sd_coll_size_bytes(65536, 262144, 4), 1048576,
	       "size is the larger buffer");
	is_dbl(sd_algbw_gbs(1000000000, 1e6), 1.0, 1e-12, "1 GB in 1 s is 1 GB/s");
	ok(sd_algbw_gbs(100, 0) == 0, "zero time gives zero bandwidth");
}

/* nccl-tests' size and count columns (each collective's GetCollByteCount
 * and TimeTest's writeBenchmarkLinePreamble): 1 KiB of int8 on 3 ranks is
 * a block of 341 rounded down to 16 bytes, 336. */
static void test_nccl_columns(void)
{
	static const struct {
		enum sd_op op;
		size_t size, count;
	} rows[] = {
		{ SD_OP_ALL_REDUCE, 1024, 1024 },
		{ SD_OP_ALL_GATHER, 1008, 336 },
		{ SD_OP_REDUCE_SCATTER, 1008, 336 },
		{ SD_OP_ALL_TO_ALL, 1008, 336 },
		{ SD_OP_BROADCAST, 1024, 1024 },
		{ SD_OP_REDUCE, 1024, 1024 },
		{ SD_OP_GATHER, 1008, 336 },
		{ SD_OP_SCATTER, 1008, 336 },
		{ SD_OP_SENDRECV, 1024, 1024 },
		{ SD_OP_PT2PT, 1024, 1024 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct sd_coll *c = sd_coll_get(rows[i].op);
		size_t s, r;
		sd_coll_counts(c, 1024, 1, 3, &s, &r);
		is_int(sd_coll_size_bytes(s, r, 1), rows[i].size,
		       "%s int8 1 KiB on 3 ranks: size column", c->name);
		is_int(sd_coll_param_count(c, s, r, 3), rows[i].count,
		       "%s int8 1 KiB on 3 ranks: count column", c->name);
		ok(c->has_in_place, "%s is timed in place, as nccl-tests "
		   "times every collective", c->name);
	}
	/* doubles round a block to 2 elements, float16 to 8 */
	size_t s, r;
	sd_coll_counts(sd_coll_get(SD_OP_ALL_GATHER), 1000, 8, 3, &s, &r);
	is_int(s, 332, "all_gather float64: 333 per rank rounds to 332");
	sd_coll_counts(sd_coll_get(SD_OP_SCATTER), 1000, 2, 3, &s, &r);
	is_int(r, 328, "scatter float16: 333 per rank rounds to 328");
}

static void test_place(void)
{
	char send[64], recv[64];
	struct sd_op_args a = { .dtype = SD_FLOAT32, .send_count = 2,
				.recv_count = 8, .op = SD_OP_ALL_GATHER,
				.in_place = 1 };
	sd_coll_place(&a, 3, send, recv);
	ok(a.recvbuf == recv && a.sendbuf == recv + 3 * 2 * 4,
	   "in-place all_gather: send is the rank's slice of recv");
	a.op = SD_OP_REDUCE_SCATTER;
	a.send_count = 8;
	a.recv_count = 2;
	sd_coll_place(&a, 2, send, recv);
	ok(a.sendbuf == recv && a.recvbuf == recv + 2 * 2 * 4,
	   "in-place reduce_scatter: recv is the rank's slice of send");
	a.op = SD_OP_ALL_REDUCE;
	sd_coll_place(&a, 1, send, recv);
	ok(a.sendbuf == recv && a.recvbuf == recv, "in-place all_reduce");
	a.in_place = 0;
	sd_coll_place(&a, 1, send, recv);
	ok(a.sendbuf == send && a.recvbuf == recv, "out-of-place");
}

static void test_series(void)
{
	uint64_t v[64];
	size_t n = sd_size_series(1024, 256u << 20, 2, 0, v, 64);
	is_int(n, 19, "1K..256M by 2 is 19 sizes");
	is_int(v[18], 256u << 20, "last is 256M");
	n = sd_size_series(8, 40, 1, 16, v, 64);
	ok(n == 3 && v[0] == 8 && v[1] == 24 && v[2] == 40, "8..40 step 16");
	n = sd_size_series(100, 100, 2, 0, v, 64);
	ok(n == 1 && v[0] == 100, "min == max is one size");
	ok(sd_size_series(10, 5, 2, 0, v, 64) == 0, "min > max is none");
	ok(sd_size_series(1, 1ull << 40, 1, 1, v, 64) == 64, "capped");
}

/* Every value the pattern sends is exact in its type, every partial sum
 * or product of any subset of ranks stays within the exact range (avg: one
 * rank per element sends, so no sum rounds), and the poison value never
 * equals an expected value.  Avg's rounded means are unit_avg's. */
static void test_pattern_exact(void)
{
	static const int ranks[] = { 1, 2, 3, 4, 5, 8, 16, 64, 300 };
	for (int t = 0; t < SD_DTYPE_COUNT; t++) {
		int bad_exact = 0, bad_bound = 0, bad_poison = 0;
		double lim = (double)sd_dtype_exact_limit(t);
		for (int redop = 0; redop < SD_REDOP_COUNT; redop++)
			for (size_t k = 0; k < sizeof(ranks) / sizeof(*ranks);
			     k++) {
				int n = ranks[k];
				struct sd_op_args a = { .op = SD_OP_ALL_REDUCE,
							.dtype = t, .redop = redop,
							.seed = 12345 };
				for (uint64_t i = 0; i < 97; i++) {
					double sum_abs = 0, prod_abs = 1;
					int senders = 0;
					for (int r = 0; r < n; r++) {
						double v = sd_pattern_send(&a, r, n, i);
						if (sd_decode(t, sd_encode(t, v)) != v)
							bad_exact++;
						sum_abs += fabs(v);
						prod_abs *= fabs(v) > 0 ? fabs(v) : 1;
						senders += v != 0;
					}
					/* min and max never leave the inputs */
					if (redop == SD_PROD ? prod_abs > 2
					    : redop == SD_SUM ? sum_abs > lim
					    : redop == SD_AVG && senders > 1)
						bad_bound++;
					double want = sd_pattern_reduced(&a, n, i);
					if (sd_encode(t, want) == sd_poison_bits(t) ||
					    sd_decode(t, sd_encode(t, want)) != want)
						bad_poison++;
				}
			}
		is_int(bad_exact, 0, "%s: every input is exact",
		       sd_dtype_name(t));
		is_int(bad_bound, 0, "%s: partial results stay exact for any "
		       "order", sd_dtype_name(t));
		is_int(bad_poison, 0, "%s: results are exact and never poison",
		       sd_dtype_name(t));
	}
}

/* The host fill/verify pair agrees with itself for every op: a simulated
 * correct result verifies with 0 wrong, a flipped bit with 1. */
static void test_host_roundtrip(void)
{
	enum { N = 3, C = 12 };
	for (int op = 0; op < SD_OP_COUNT; op++) {
		const struct sd_coll *c = sd_coll_get(op);
		size_t sc, rc;
		sd_coll_counts(c, C, sizeof(float), N, &sc, &rc);
		float recv[64];
		struct sd_op_args a = { .op = op, .dtype = SD_FLOAT32,
					.redop = SD_SUM, .root = 1,
					.send_count = sc, .recv_count = rc,
					.recvbuf = recv, .seed = 7 };
		int me = 1, checked = 0;
		double want;
		for (uint64_t j = 0; j < rc; j++)
			if (sd_pattern_expect(&a, me, N, j, &want)) {
				recv[j] = (float)want;
				checked = 1;
			}
		struct sd_mismatch mm;
		uint64_t wrong = sd_pattern_verify_host(&a, me, N, &mm);
		is_int(wrong, 0, "%s: the expected data verifies", c->name);
		if (!checked)
			continue;
		sd_pattern_corrupt_host(&a, 2);
		wrong = sd_pattern_verify_host(&a, me, N, &mm);
		ok(wrong == 1 && mm.index == 2, "%s: one flipped bit is one "
		   "wrong element at index 2", c->name);
	}
}

/* A dropped receive is caught in place too: every rank, for every op, fills
 * a buffer that still holds the previous operation's correct result, and
 * without the operation running, every element the op should have
 * delivered from another rank verifies wrong (rank 0's in-place
 * all_gather and gather kept the old result past its own block). */
static void test_fill_poisons(void)
{
	enum { N = 3, C = 12 };
	for (int op = 0; op < SD_OP_COUNT; op++) {
		const struct sd_coll *c = sd_coll_get(op);
		size_t sc, rc;
		sd_coll_counts(c, C, sizeof(float), N, &sc, &rc);
		for (int me = 0; me < N; me++) {
			float base[64];
			struct sd_op_args a = { .op = op, .dtype = SD_FLOAT32,
						.redop = SD_SUM, .root = 0,
						.in_place = 1,
						.send_count = sc,
						.recv_count = rc, .seed = 7 };
			sd_coll_place(&a, me, NULL, base);
			int receives = 0;
			double want;
			for (uint64_t j = 0; j < rc; j++)
				if (sd_pattern_expect(&a, me, N, j, &want)) {
					((float *)a.recvbuf)[j] = (float)want;
					receives = 1;
				}
			if (!receives)
				continue;
			sd_pattern_fill_host(&a, me, N);
			struct sd_mismatch mm;
			uint64_t wrong = sd_pattern_verify_host(&a, me, N, &mm);
			/* what the fill itself leaves right: a gather's own
			 * block, data that moves nowhere else (broadcast's
			 * root, scatter's root block) */
			uint64_t own = 0;
			for (uint64_t j = 0; j < rc; j++) {
				sd_pattern_expect(&a, me, N, j, &want);
				own += sd_load_bits(a.dtype, a.recvbuf, j) ==
				       sd_encode(a.dtype, want);
			}
			is_int(wrong, rc - own, "%s rank %d in place: the fill "
			       "leaves %llu of %zu elements wrong", c->name,
			       me, (unsigned long long)(rc - own), rc);
			if (me == 0 && (op == SD_OP_ALL_GATHER ||
					op == SD_OP_GATHER))
				ok(wrong == (N - 1) * sc,
				   "%s rank 0 in place: every other rank's "
				   "block is poisoned", c->name);
		}
	}
}

/* fill_part (backend.h): out of place, SD_FILL_SEND writes the send data
 * and leaves the receive buffer alone, SD_FILL_RECV poisons the receive
 * buffer and leaves the send data alone, and the two together equal one
 * SD_FILL_ALL, so a check after them still catches a dropped receive. */
static void test_fill_parts(void)
{
	enum { N = 3, C = 48 };
	for (int op = 0; op < SD_OP_COUNT; op++) {
		const struct sd_coll *c = sd_coll_get(op);
		size_t sc, rc;
		sd_coll_counts(c, C, sizeof(float), N, &sc, &rc);
		int me = 1;
		unsigned char sa[4 * 64], ra[4 * 64], sb[4 * 64], rb[4 * 64];
		struct sd_op_args a = { .op = op, .dtype = SD_FLOAT32,
					.redop = SD_SUM, .root = 0,
					.send_count = sc, .recv_count = rc,
					.seed = 11 };
		struct sd_op_args b = a;
		memset(sa, 0xa5, sizeof(sa));
		memset(ra, 0xa5, sizeof(ra));
		memset(sb, 0x5a, sizeof(sb));
		memset(rb, 0x5a, sizeof(rb));
		sd_coll_place(&a, me, sa, ra);
		sd_coll_place(&b, me, sb, rb);
		a.fill_part = SD_FILL_SEND;
		sd_pattern_fill_host(&a, me, N);
		int recv_kept = 1;
		for (size_t j = 0; j < rc * 4; j++)
			recv_kept &= ((unsigned char *)a.recvbuf)[j] == 0xa5;
		ok(recv_kept, "%s out of place: a send fill leaves the "
		   "receive buffer alone", c->name);
		memcpy(sb, sa, sizeof(sa));
		a.fill_part = SD_FILL_RECV;
		sd_pattern_fill_host(&a, me, N);
		ok(memcmp(sa, sb, sizeof(sa)) == 0, "%s out of place: a "
		   "receive fill leaves the send data alone", c->name);
		/* both parts in turn equal one whole fill */
		memset(sb, 0x5a, sizeof(sb));
		b.fill_part = SD_FILL_ALL;
		sd_pattern_fill_host(&b, me, N);
		ok(memcmp(sa, sb, sc * 4) == 0 && memcmp(ra, rb, rc * 4) == 0,
		   "%s out of place: send then receive fill equals a whole "
		   "fill", c->name);
		struct sd_mismatch mm;
		uint64_t wrong = sd_pattern_verify_host(&a, me, N, &mm);
		int receives = 0;
		double want;
		for (uint64_t j = 0; j < rc; j++)
			receives |= sd_pattern_expect(&a, me, N, j, &want);
		ok(!receives || wrong > 0,
		   "%s out of place: after the receive fill, an operation "
		   "that writes nothing is caught (%llu wrong)", c->name,
		   (unsigned long long)wrong);
	}
}

/* The host fill and check repeat one period of values (pattern_host.h):
 * for every op, type, reduction and several rank counts, the fill equals
 * the element-by-element pattern, the check passes the element-by-element
 * expectation and catches one wrong element anywhere, including past the
 * first period. */
static void test_periods(void)
{
	static const int ns[] = { 1, 2, 3, 4, 5, 7, 8, 16 };
	int bad_fill = 0, bad_verify = 0, missed = 0, cases = 0;
	for (int op = 0; op < SD_OP_COUNT; op++)
	for (int t = 0; t < SD_DTYPE_COUNT; t++)
	for (int rd = 0; rd < SD_REDOP_COUNT; rd++) {
		const struct sd_coll *c = sd_coll_get(op);
		if (!c->reduces && rd > 0)
			continue;
		for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
			int n = ns[k];
			if (n < c->min_ranks)
				continue;
			struct sd_op_args a = { .op = op, .dtype = t,
						.redop = rd, .root = n - 1,
						.seed = 12345u };
			uint64_t len = sd_pattern_period(&a, n);
			size_t ts = sd_dtype_size(t), sc, rc;
			sd_coll_counts(c, (size_t)(2 * len + 7) * (size_t)n,
				       16, n, &sc, &rc);
			size_t bytes = (sc > rc ? sc : rc) * ts + 8;
			char *snd = malloc(bytes), *rcv = malloc(bytes),
			     *ref = malloc(bytes);
			a.send_count = sc;
			a.recv_count = rc;
			a.sendbuf = snd;
			a.recvbuf = rcv;
			int me = n > 1 ? 1 : 0;
			sd_pattern_fill_host(&a, me, n);
			if (sd_pattern_sends(&a, me))
				for (uint64_t i = 0; i < sc; i++)
					bad_fill += sd_load_bits(t, snd, i) !=
						    sd_encode(t, sd_pattern_send(
							    &a, me, n, i));
			double want;
			int receives = 0;
			for (uint64_t j = 0; j < rc; j++)
				if (sd_pattern_expect(&a, me, n, j, &want)) {
					sd_store_bits(t, rcv, j,
						      sd_encode(t, want));
					receives = 1;
				}
			struct sd_mismatch mm;
			if (receives) {
				cases++;
				bad_verify += sd_pattern_verify_host(&a, me, n,
								     &mm) != 0;
				uint64_t at = rc - 1 - (rc / 3);
				sd_pattern_corrupt_host(&a, at);
				missed += sd_pattern_verify_host(&a, me, n,
								 &mm) != 1 ||
					  mm.index != at;
			}
			free(snd);
			free(rcv);
			free(ref);
		}
	}
	ok(cases > 1000, "%d op x type x reduction x rank-count cases", cases);
	is_int(bad_fill, 0, "the periodic fill equals the pattern element by "
	       "element");
	is_int(bad_verify, 0, "the periodic check passes the expected data");
	is_int(missed, 0, "the periodic check finds one wrong element past "
	       "the first period, at its index");
}

/* Buffers of SD_STREAM_MIN_BYTES and up are filled with streaming stores
 * from the period's chunk: at every element alignment (1-15 bytes off 16),
 * for periods that are not a whole number of 16 bytes, the streamed send
 * data equals the element-by-element pattern to the last element, the
 * poison covers the whole receive buffer, and the check passes it and
 * catches one wrong element in the tail. */
static void test_stream_fill(void)
{
	static const struct { enum sd_op op; enum sd_dtype t; int n; } cs[] = {
		{ SD_OP_ALL_REDUCE, SD_INT8, 3 },     /* period 90 bytes */
		{ SD_OP_ALL_REDUCE, SD_FLOAT16, 7 },  /* 630 elements */
		{ SD_OP_ALL_GATHER, SD_FLOAT32, 2 },  /* 201 elements */
		{ SD_OP_BROADCAST, SD_FLOAT64, 4 },
		{ SD_OP_ALL_TO_ALL, SD_UINT8, 5 },
	};
	int bad_send = 0, bad_poison = 0, bad_verify = 0, missed = 0, cases = 0;
	for (size_t k = 0; k < sizeof(cs) / sizeof(cs[0]); k++) {
		enum sd_dtype t = cs[k].t;
		size_t ts = sd_dtype_size(t);
		for (size_t off = 0; off < 16; off += ts) {
			/* an odd count: the stores end in a partial 16 bytes */
			size_t count = (SD_STREAM_MIN_BYTES + 4093) / ts + 3;
			size_t bytes = count * ts + 16;
			unsigned char *snd = malloc(bytes + 16);
			unsigned char *rcv = malloc(bytes + 16);
			if (!snd || !rcv) {
				free(snd);
				free(rcv);
				continue;
			}
			/* 16-aligned bases, then `off` bytes in */
			unsigned char *s = snd + ((16 - ((uintptr_t)snd & 15)) & 15) + off;
			unsigned char *r = rcv + ((16 - ((uintptr_t)rcv & 15)) & 15) + off;
			struct sd_op_args a = { .op = cs[k].op, .dtype = t,
						.redop = SD_SUM, .root = 0,
						.seed = 777u + (unsigned)off,
						.send_count = count,
						.recv_count = count,
						.sendbuf = s, .recvbuf = r };
			int n = cs[k].n;
			if (a.op == SD_OP_ALL_GATHER || a.op == SD_OP_ALL_TO_ALL) {
				a.send_count = count / (size_t)n * (a.op ==
						SD_OP_ALL_GATHER ? 1 : (size_t)n);
				a.recv_count = a.op == SD_OP_ALL_GATHER
					? a.send_count * (size_t)n
					: a.send_count;
			}
			int me = 0;
			a.fill_part = SD_FILL_ALL;
			sd_pattern_fill_host(&a, me, n);
			cases++;
			uint64_t poison = sd_poison_bits(t);
			int bs = 0, bp = 0;
			for (uint64_t i = 0; i < a.send_count && !bs; i++)
				bs = sd_load_bits(t, s, i) !=
				     sd_encode(t, sd_pattern_send(&a, me, n, i));
			for (uint64_t j = 0; j < a.recv_count && !bp; j++)
				bp = sd_load_bits(t, r, j) != poison;
			bad_send += bs;
			bad_poison += bp;
			double want;
			for (uint64_t j = 0; j < a.recv_count; j++)
				if (sd_pattern_expect(&a, me, n, j, &want))
					sd_store_bits(t, r, j, sd_encode(t, want));
			struct sd_mismatch mm;
			bad_verify += sd_pattern_verify_host(&a, me, n, &mm) != 0;
			uint64_t at = a.recv_count - 2;
			sd_pattern_corrupt_host(&a, at);
			missed += sd_pattern_verify_host(&a, me, n, &mm) != 1 ||
				  mm.index != at;
			free(snd);
			free(rcv);
		}
	}
	ok(cases >= 30, "%d streamed fills at every alignment", cases);
	ok(bad_send == 0, "the streamed send data is the pattern to the last "
	   "element (%d fills differ)", bad_send);
	ok(bad_poison == 0, "the streamed poison covers the receive buffer "
	   "(%d fills differ)", bad_poison);
	ok(bad_verify == 0 && missed == 0, "the check passes the streamed "
	   "buffers and catches a wrong element in the tail (%d, %d)",
	   bad_verify, missed);
}

/* The table is one source: its by-value form (for device code), its
 * host rows and the names parsed from the command line agree, and every
 * row's kinds are consistent with its flags. */
static void test_descriptor(void)
{
	for (int op = 0; op < SD_OP_COUNT; op++) {
		const struct sd_coll *h = sd_coll_get((enum sd_op)op);
		struct sd_coll d = sd_coll_desc((enum sd_op)op);
		enum sd_op parsed;
		ok(h && (int)h->op == op && d.op == h->op &&
		   strcmp(d.name, h->name) == 0 && d.rooted == h->rooted &&
		   d.reduces == h->reduces && d.counts == h->counts &&
		   d.place == h->place && d.expect == h->expect &&
		   d.sends == h->sends && d.receives == h->receives &&
		   d.busbw == h->busbw && d.ds_tput == h->ds_tput &&
		   d.ds_busbw == h->ds_busbw,
		   "%s: host row and by-value row agree", h ? h->name : "?");
		ok(sd_op_from_name(h->name, &parsed, NULL) == 0 &&
		   (int)parsed == op && strcmp(sd_op_name(parsed), h->name) == 0,
		   "%s: the name table is the descriptor's", h->name);
		ok(h->reduces == (h->expect == SD_EXPECT_REDUCED ||
				  h->expect == SD_EXPECT_REDUCED_BLOCK),
		   "%s: reduces exactly when it expects a reduction", h->name);
		ok(!(h->sends == SD_ROLE_ROOT || h->receives == SD_ROLE_ROOT) ||
		   h->rooted, "%s: a root role only in a rooted op", h->name);
	}
	ok(sd_coll_get(SD_OP_COUNT) == NULL &&
	   sd_coll_desc(SD_OP_COUNT).op == SD_OP_COUNT,
	   "past the last op there is no row");
	char all[256];
	sd_name_join(sd_op_names, ~0u, SD_OP_COUNT, ",", all, sizeof(all));
	is_int(strcmp(all, "all_reduce,all_gather,reduce_scatter,all_to_all,"
		       "broadcast,reduce,gather,scatter,sendrecv,pt2pt"), 0,
	       "every op by name, in table order");
}

/* An installed tree unpacked elsewhere finds its plugins and data at the
 * same place relative to its executable as the build put them relative
 * to bindir. */
static void test_relocate(void)
{
	static const struct {
		const char *exe, *bindir, *installed, *want;
	} c[] = {
		{ "/tmp/b/bin", "/usr/local/bin", "/usr/local/lib/shakedown",
		  "/tmp/b/bin/../lib/shakedown" },
		{ "/tmp/b/bin", "/usr/local/bin", "/usr/local/share/shakedown",
		  "/tmp/b/bin/../share/shakedown" },
		{ "/x/y", "/usr/bin", "/usr/lib/x86_64-linux-gnu/shakedown",
		  "/x/y/../lib/x86_64-linux-gnu/shakedown" },
		{ "/x/y", "/opt/sd/exec/bin", "/opt/sd/share/shakedown",
		  "/x/y/../../share/shakedown" },
		{ "/x/y", "/usr/bin", "/opt/sd/lib",
		  "/x/y/../../opt/sd/lib" },
		/* not moved, or a path that is not absolute: nothing */
		{ "/usr/local/bin", "/usr/local/bin", "/usr/local/lib/shakedown",
		  NULL },
		{ "/x/y", "bin", "/usr/local/lib", NULL },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char buf[256] = "";
		int rc = sd_relocate_path(c[i].exe, c[i].bindir, c[i].installed,
					  buf, sizeof(buf));
		if (c[i].want)
			ok(rc == 0 && strcmp(buf, c[i].want) == 0,
			   "relocate %s from %s to %s: %s", c[i].installed,
			   c[i].bindir, c[i].exe, buf);
		else
			ok(rc == -1, "relocate %s from %s to %s: none",
			   c[i].installed, c[i].bindir, c[i].exe);
	}
	char small[8];
	ok(sd_relocate_path("/tmp/bundle/bin", "/usr/local/bin",
			    "/usr/local/lib/shakedown", small,
			    sizeof(small)) == -1,
	   "a path that does not fit the buffer is refused");
}

/* Wrapped lines break between words and never inside one. */
static void test_wrap_len(void)
{
	static const struct {
		const char *s;
		size_t width, want;
	} rows[] = {
		{ "fits", 10, 4 },
		{ "all_reduce float32 sum", 22, 22 },
		{ "all_reduce float32 sum", 21, 18 },   /* before "sum" */
		{ "all_reduce float32 sum", 10, 10 },   /* "all_reduce" whole */
		{ "halving_doubling rest", 8, 16 },     /* longer: not cut */
		{ "ranks 0-3,8-11,16-19", 12, 5 },      /* a space first */
		{ "0-3,8-11,16-19,24-27", 12, 9 },      /* else after a comma */
		{ "", 5, 0 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t n = sd_wrap_len(rows[i].s, rows[i].width);
		ok(n == rows[i].want, "wrap '%s' at %zu: %zu (want %zu)",
		   rows[i].s, rows[i].width, n, rows[i].want);
	}
}

/* A reason shortened for Slurm keeps whole words. */
static void test_clip_words(void)
{
	char out[64];
	int c = sd_clip_words(out, sizeof(out), "node03: busbw 0.20 GB/s, "
			      "0.38x the peers' median", 30, " ...");
	ok(c && strcmp(out, "node03: busbw 0.20 GB/s ...") == 0 &&
	   strlen(out) <= 30, "clipped at a word: '%s'", out);
	c = sd_clip_words(out, sizeof(out), "short reason", 30, " ...");
	ok(!c && strcmp(out, "short reason") == 0, "a short text is kept");
	c = sd_clip_words(out, sizeof(out), "abcdefghijklmnopqrstuvwxyz", 10,
			  "...");
	ok(c && strcmp(out, "abcdefg...") == 0,
	   "one long word is cut, to the limit: '%s'", out);
	c = sd_clip_words(out, 8, "one two three four", 100, "..");
	ok(c && strlen(out) <= 7 && strcmp(out, "one..") == 0,
	   "the buffer bounds it too: '%s'", out);
}

/* sd_dupstr: a copy, NULL for NULL, and the flag left alone when both
 * are fine */
static void test_dupstr(void)
{
	int bad = 0;
	char *c = sd_dupstr("node[1-4]", &bad);
	ok(c && strcmp(c, "node[1-4]") == 0 && !bad, "a copy of the string");
	free(c);
	ok(sd_dupstr(NULL, &bad) == NULL && !bad,
	   "NULL for NULL, not counted as out of memory");
}

int main(void)
{
	test_clip_words();
	test_wrap_len();
	test_dupstr();
	test_relocate();
	test_descriptor();
	test_sizes();
	test_amounts();
	test_names();
	test_counts();
	test_nccl_columns();
	test_fill_poisons();
	test_fill_parts();
	test_periods();
	test_stream_fill();
	test_place();
	test_series();
	test_pattern_exact();
	test_host_roundtrip();
	return done_testing();
}
