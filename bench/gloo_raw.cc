/*
 * gloo_raw.cc - raw Gloo collective loops: the yardstick for shakedown.
 *
 * Forks N ranks that rendezvous through a gloo::rendezvous::FileStore in a
 * private temporary folder, connect over TCP on 127.0.0.1 and time float32
 * operations the way `shakedown run` does (warm-up, barrier, a timed loop
 * of `iters` operations, time per op = elapsed / iters, averaged over the
 * ranks that take part), for every seed op and every algorithm raw Gloo
 * has for it.  The algorithm names are those of shakedown's --algo:
 *
 *   all_reduce      ring ring_chunked halving_doubling bcube (legacy
 *                   classes, in place); opts_ring opts_bcube
 *                   (gloo::allreduce, out of place)
 *   all_gather      ring (AllgatherRing, in place: the input is this
 *                   rank's block of the output); opts (gloo::allgather)
 *   reduce_scatter  halving_doubling (ReduceScatterHalvingDoubling, in
 *                   place on the send buffer); opts_allreduce (a ring
 *                   gloo::allreduce of the send buffer into a scratch
 *                   buffer whose block `rank` is the result)
 *   all_to_all      opts (gloo::alltoall, out of place)
 *   broadcast       one_to_all (BroadcastOneToAll, in place, root 0);
 *                   opts (gloo::broadcast, root 0)
 *   pt2pt           unbound (an unbound buffer sent from rank 0 to rank 1;
 *                   the other ranks idle and untimed)
 *
 * Sizes and bus bandwidth are nccl-tests', from shakedown/coll.h (the
 * table shakedown itself uses): a size is max(send, recv) bytes per rank,
 * busbw = size / time x the op's factor.  The legacy classes get a
 * context of their own (as the plugin gives them): once they have used a
 * pair, options-based operations on it slow down a thousandfold.  That
 * context is only connected when a legacy algorithm is asked for, so a
 * run of options-based algorithms alone starts as fast as raw Gloo can.
 * No extra synchronisation is added between operations (shakedown's
 * plugin adds a ready handshake to the legacy classes that write into a
 * peer's buffer, for bit-exact checks): raw Gloo is timed as its users
 * would run it.  Rank 0 prints one line per (op, algo, size):
 *
 *   op=all_reduce algo=ring placement=in ranks=2 size_bytes=1024 iters=100
 *   warmup=5 time_us=95.10 algbw_gbs=0.0108 busbw_gbs=0.0108
 *
 * usage: gloo_raw [-n RANKS] [-i ITERS] [-w WARMUP] [-f] [-o OP,...]
 *                 [-a ALGO,...] SIZE[:ITERS[:WARMUP]]...
 * (sizes in bytes, K/M/G suffixes allowed; a size's own ITERS and WARMUP
 * override -i and -w; otherwise, unless -f, ITERS is scaled down for sizes
 * above 1 MiB so each point takes about the same time).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gloo/allgather.h>
#include <gloo/allgather_ring.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_bcube.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/math.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include "shakedown/coll.h"

/* One algorithm of one op: legacy classes run in place, the others out of
 * place. */
struct algo_row {
	enum sd_op op;
	const char *algo;
	bool legacy;
};

static const algo_row algo_table[] = {
	{ SD_OP_ALL_REDUCE, "ring", true },
	{ SD_OP_ALL_REDUCE, "ring_chunked", true },
	{ SD_OP_ALL_REDUCE, "halving_doubling", true },
	{ SD_OP_ALL_REDUCE, "bcube", true },
	{ SD_OP_ALL_REDUCE, "opts_ring", false },
	{ SD_OP_ALL_REDUCE, "opts_bcube", false },
	{ SD_OP_ALL_GATHER, "ring", true },
	{ SD_OP_ALL_GATHER, "opts", false },
	{ SD_OP_REDUCE_SCATTER, "halving_doubling", true },
	{ SD_OP_REDUCE_SCATTER, "opts_allreduce", false },
	{ SD_OP_ALL_TO_ALL, "opts", false },
	{ SD_OP_BROADCAST, "one_to_all", true },
	{ SD_OP_BROADCAST, "opts", false },
	{ SD_OP_PT2PT, "unbound", false },
};

static const enum sd_op seed_ops[] = { SD_OP_ALL_REDUCE, SD_OP_ALL_GATHER,
				       SD_OP_REDUCE_SCATTER, SD_OP_ALL_TO_ALL,
				       SD_OP_BROADCAST, SD_OP_PT2PT };

static const std::chrono::milliseconds op_timeout(120000);

static double now_s()
{
	return std::chrono::duration<double>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

/* One size to time, with its own iteration counts (-1: the defaults). */
struct point {
	size_t bytes;
	int iters, warmup;
};

/* SIZE[:ITERS[:WARMUP]], SIZE in bytes with an optional K, M or G; false
 * when malformed. */
static bool parse_point(const char *s, point *p)
{
	char *end;
	double v = strtod(s, &end);
	switch (*end) {
	case 'K': case 'k': v *= 1024; end++; break;
	case 'M': case 'm': v *= 1024 * 1024; end++; break;
	case 'G': case 'g': v *= 1024.0 * 1024 * 1024; end++; break;
	default: break;
	}
	p->bytes = (size_t)v;
	p->iters = p->warmup = -1;
	if (*end == ':') {
		p->iters = (int)strtol(end + 1, &end, 10);
		if (*end == ':')
			p->warmup = (int)strtol(end + 1, &end, 10);
	}
	return !*end && v >= 1 && (p->iters == -1 || p->iters >= 1) &&
	       p->warmup >= -1;
}

static std::vector<std::string> split_list(const char *arg)
{
	std::vector<std::string> out;
	std::string s(arg);
	size_t p = 0, q;
	while ((q = s.find(',', p)) != std::string::npos) {
		out.push_back(s.substr(p, q - p));
		p = q + 1;
	}
	out.push_back(s.substr(p));
	return out;
}

static bool op_by_name(const std::string &name, enum sd_op *op)
{
	for (int i = 0; i < SD_OP_COUNT; i++)
		if (name == sd_coll_table[i].name) {
			*op = (enum sd_op)i;
			return true;
		}
	return false;
}

static void barrier(std::shared_ptr<gloo::Context> &ctx)
{
	gloo::BarrierOptions o(ctx);
	gloo::barrier(o);
}

/* Average of v over the ranks whose `part` is set. */
static double average(std::shared_ptr<gloo::Context> &ctx, double v,
		      bool part)
{
	double mine[2] = { part ? v : 0, part ? 1.0 : 0 };
	std::vector<double> all(2 * ctx->size);
	gloo::AllgatherOptions o(ctx);
	o.setInput(mine, 2);
	o.setOutput(all.data(), all.size());
	gloo::allgather(o);
	double s = 0, k = 0;
	for (int r = 0; r < ctx->size; r++) {
		s += all[2 * r];
		k += all[2 * r + 1];
	}
	return k > 0 ? s / k : 0;
}

/* The buffers of one (op, size) on this rank. */
struct buffers {
	std::vector<float> send, recv, scratch;
	size_t sc = 0, rc = 0;
};

/* Build the closure that runs one operation of `row`; `keep` holds the
 * objects it needs.  Returns an empty function for an algorithm that does
 * not apply (legacy bcube off a power of two). */
static std::function<void()> build(const algo_row &row,
				   std::shared_ptr<gloo::Context> &ctx,
				   std::shared_ptr<gloo::Context> &lctx,
				   buffers &b, std::shared_ptr<void> &keep)
{
	const int n = ctx->size, me = ctx->rank;
	const std::string algo = row.algo;
	float *send = b.send.data(), *recv = b.recv.data();
	const size_t sc = b.sc, rc = b.rc;
	auto sum = static_cast<void (*)(void *, const void *, const void *,
					size_t)>(&gloo::sum<float>);

	switch (row.op) {
	case SD_OP_ALL_REDUCE: {
		if (row.legacy) {
			std::vector<float *> ptrs{ recv };
			std::shared_ptr<gloo::Algorithm> a;
			if (algo == "ring")
				a.reset(new gloo::AllreduceRing<float>(
					lctx, ptrs, (int)rc));
			else if (algo == "ring_chunked")
				a.reset(new gloo::AllreduceRingChunked<float>(
					lctx, ptrs, (int)rc));
			else if (algo == "halving_doubling")
				a.reset(new gloo::AllreduceHalvingDoubling<
					float>(lctx, ptrs, (int)rc));
			else if (!(n & (n - 1)))
				a.reset(new gloo::AllreduceBcube<float>(
					lctx, ptrs, (int)rc));
			else
				return {};
			keep = a;
			return [a] { a->run(); };
		}
		using ar_algo = gloo::AllreduceOptions::Algorithm;
		auto o = std::make_shared<gloo::AllreduceOptions>(ctx);
		o->setAlgorithm(algo == "opts_bcube" ? ar_algo::BCUBE
						     : ar_algo::RING);
		o->setInput(send, sc);
		o->setOutput(recv, rc);
		o->setReduceFunction(sum);
		o->setTimeout(op_timeout);
		keep = o;
		return [o] { gloo::allreduce(*o); };
	}
	case SD_OP_ALL_GATHER: {
		if (row.legacy) {
			std::vector<const float *> in{ recv + (size_t)me * sc };
			std::shared_ptr<gloo::Algorithm> a(
				new gloo::AllgatherRing<float>(lctx, in, recv,
							       (int)sc));
			keep = a;
			return [a] { a->run(); };
		}
		auto o = std::make_shared<gloo::AllgatherOptions>(ctx);
		o->setInput(send, sc);
		o->setOutput(recv, rc);
		o->setTimeout(op_timeout);
		keep = o;
		return [o] { gloo::allgather(*o); };
	}
	case SD_OP_REDUCE_SCATTER: {
		if (row.legacy) {
			std::vector<int> elems(n, (int)rc);
			std::shared_ptr<gloo::Algorithm> a(
				new gloo::ReduceScatterHalvingDoubling<float>(
					lctx, std::vector<float *>{ send },
					(int)sc, elems));
			keep = a;
			return [a] { a->run(); };
		}
		b.scratch.assign(sc, 0.0f);
		auto o = std::make_shared<gloo::AllreduceOptions>(ctx);
		o->setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
		o->setInput(send, sc);
		o->setOutput(b.scratch.data(), sc);
		o->setReduceFunction(sum);
		o->setTimeout(op_timeout);
		keep = o;
		return [o] { gloo::allreduce(*o); };
	}
	case SD_OP_ALL_TO_ALL: {
		auto o = std::make_shared<gloo::AlltoallOptions>(ctx);
		o->setInput(send, sc);
		o->setOutput(recv, rc);
		o->setTimeout(op_timeout);
		keep = o;
		return [o] { gloo::alltoall(*o); };
	}
	case SD_OP_BROADCAST: {
		if (row.legacy) {
			std::shared_ptr<gloo::Algorithm> a(
				new gloo::BroadcastOneToAll<float>(
					lctx, std::vector<float *>{ recv }, rc,
					0, 0));
			keep = a;
			return [a] { a->run(); };
		}
		auto o = std::make_shared<gloo::BroadcastOptions>(ctx);
		if (me == 0)
			o->setInput(send, sc);
		o->setOutput(recv, rc);
		o->setRoot(0);
		o->setTimeout(op_timeout);
		keep = o;
		return [o] { gloo::broadcast(*o); };
	}
	case SD_OP_PT2PT: {
		if (n < 2 || me > 1)
			return [] {};
		std::shared_ptr<gloo::transport::UnboundBuffer> ub(
			ctx->createUnboundBuffer(me == 0 ? (void *)send
							 : (void *)recv,
						 (me == 0 ? sc : rc) *
							 sizeof(float)));
		keep = ub;
		/* a slot of its own, the same on both ranks */
		const uint64_t slot = gloo::Slot::build(0x7f, 1);
		if (me == 0)
			return [ub, slot] {
				ub->send(1, slot);
				ub->waitSend(op_timeout);
			};
		return [ub, slot] {
			ub->recv(0, slot);
			ub->waitRecv(op_timeout);
		};
	}
	default:
		return {};
	}
}

struct config {
	int n = 2, iters = 100, warmup = 5;
	bool fixed = false;
	std::vector<enum sd_op> ops;
	std::vector<std::string> algos; /* empty: every algorithm */
	std::vector<point> points;
};

static bool wanted(const config &cfg, const algo_row &row)
{
	if (std::find(cfg.ops.begin(), cfg.ops.end(), row.op) == cfg.ops.end())
		return false;
	return cfg.algos.empty() ||
	       std::find(cfg.algos.begin(), cfg.algos.end(), row.algo) !=
		       cfg.algos.end();
}

static int rank_main(int rank, const std::string &dir, const config &cfg)
{
	const int n = cfg.n;
	gloo::rendezvous::FileStore store(dir);
	gloo::transport::tcp::attr attr("127.0.0.1");
	auto dev = gloo::transport::tcp::CreateDevice(attr);
	auto rctx = std::make_shared<gloo::rendezvous::Context>(rank, n);
	rctx->setTimeout(std::chrono::seconds(120));
	rctx->connectFullMesh(store, dev);
	std::shared_ptr<gloo::Context> ctx = rctx;
	/* The legacy algorithm classes on connections of their own, as the
	 * plugin does: once they have used a pair, options-based operations
	 * on it slow down a thousandfold. */
	std::shared_ptr<gloo::Context> lctx;
	bool any_legacy = false;
	for (const auto &row : algo_table)
		any_legacy = any_legacy || (row.legacy && wanted(cfg, row));
	if (any_legacy) {
		gloo::rendezvous::PrefixStore lstore("legacy", store);
		auto lrctx =
			std::make_shared<gloo::rendezvous::Context>(rank, n);
		lrctx->setTimeout(std::chrono::seconds(120));
		lrctx->connectFullMesh(lstore, dev);
		lctx = lrctx;
	}

	for (const point &pt : cfg.points) {
		const size_t bytes = pt.bytes;
		int iters = cfg.iters;
		const int warmup = pt.warmup >= 0 ? pt.warmup : cfg.warmup;
		if (pt.iters > 0)
			iters = pt.iters;
		else if (!cfg.fixed && bytes > (1 << 20))
			iters = std::max(3, (int)(cfg.iters * 8.0 *
						  (1 << 20) / bytes));
		for (enum sd_op op : cfg.ops) {
			const struct sd_coll *c = sd_coll_get(op);
			if (n < c->min_ranks)
				continue;
			buffers b;
			sd_coll_counts(c, bytes / sizeof(float), sizeof(float),
				       n, &b.sc, &b.rc);
			if (!b.sc || !b.rc)
				continue;
			b.send.assign(b.sc, 1.0f);
			b.recv.assign(b.rc, 0.0f);
			size_t size = sd_coll_size_bytes(b.sc, b.rc,
							 sizeof(float));
			bool part = sd_role_has(c->sends, rank, 0) ||
				    sd_role_has(c->receives, rank, 0);
			for (const auto &row : algo_table) {
				if (row.op != op || !wanted(cfg, row))
					continue;
				std::shared_ptr<void> keep;
				auto fn = build(row, ctx, lctx, b, keep);
				if (!fn)
					continue;
				for (int w = 0; w < warmup; w++)
					fn();
				barrier(ctx);
				double t0 = now_s();
				for (int i = 0; i < iters; i++)
					fn();
				double us = (now_s() - t0) * 1e6 / iters;
				us = average(ctx, us, part);
				double algbw = sd_algbw_gbs(size, us);
				double busbw =
					algbw * sd_factor_value(c->busbw, n);
				if (rank == 0)
					printf("op=%s algo=%s placement=%s "
					       "ranks=%d size_bytes=%zu "
					       "iters=%d warmup=%d "
					       "time_us=%.2f algbw_gbs=%.4f "
					       "busbw_gbs=%.4f\n",
					       c->name, row.algo,
					       row.legacy ? "in" : "out", n,
					       size, iters, warmup, us,
					       algbw, busbw);
				fflush(stdout);
				barrier(ctx);
			}
		}
	}
	return 0;
}

static int usage()
{
	fprintf(stderr, "usage: gloo_raw [-n RANKS] [-i ITERS] [-w WARMUP] "
			"[-f] [-o OP,...] [-a ALGO,...] "
			"SIZE[:ITERS[:WARMUP]]...\n");
	return 2;
}

int main(int argc, char **argv)
{
	config cfg;
	int opt;
	while ((opt = getopt(argc, argv, "n:i:w:fo:a:")) != -1) {
		switch (opt) {
		case 'n': cfg.n = (int)strtol(optarg, nullptr, 10); break;
		case 'i': cfg.iters = (int)strtol(optarg, nullptr, 10); break;
		case 'w': cfg.warmup = (int)strtol(optarg, nullptr, 10); break;
		case 'f': cfg.fixed = true; break;
		case 'o':
			for (const auto &name : split_list(optarg)) {
				enum sd_op op;
				if (!op_by_name(name, &op)) {
					fprintf(stderr, "gloo_raw: unknown op "
							"'%s'\n", name.c_str());
					return 2;
				}
				cfg.ops.push_back(op);
			}
			break;
		case 'a': cfg.algos = split_list(optarg); break;
		default: return usage();
		}
	}
	if (cfg.ops.empty())
		cfg.ops.assign(seed_ops,
			       seed_ops + sizeof(seed_ops) / sizeof(*seed_ops));
	for (int i = optind; i < argc; i++) {
		point p;
		if (!parse_point(argv[i], &p)) {
			fprintf(stderr, "gloo_raw: bad size '%s'; give "
				"SIZE[:ITERS[:WARMUP]], e.g. 64K:50:5\n",
				argv[i]);
			return 2;
		}
		cfg.points.push_back(p);
	}
	if (cfg.points.empty() || cfg.n < 1 || cfg.n > 64 || cfg.iters < 1 ||
	    cfg.warmup < 0) {
		fprintf(stderr, "gloo_raw: give at least one size, 1-64 ranks "
				"and at least one iteration\n");
		return usage();
	}
	char tmpl[] = "/tmp/gloo_raw.XXXXXX";
	if (!mkdtemp(tmpl)) {
		perror("gloo_raw: mkdtemp");
		return 3;
	}
	std::string dir(tmpl);
	std::vector<pid_t> pids;
	for (int r = 0; r < cfg.n; r++) {
		fflush(stdout);
		pid_t p = fork();
		if (p == 0) {
			int rc = 3;
			alarm(1800); /* never leave a hung rank behind */
			try {
				rc = rank_main(r, dir, cfg);
			} catch (const std::exception &e) {
				fprintf(stderr, "gloo_raw rank %d: %s\n", r,
					e.what());
			}
			fflush(stdout);
			_exit(rc);
		}
		pids.push_back(p);
	}
	int status = 0;
	for (pid_t p : pids) {
		int st = 0;
		waitpid(p, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			status = 3;
	}
	std::string rm = "rm -rf '" + dir + "'";
	if (system(rm.c_str()) != 0)
		status = status ? status : 3;
	return status;
}
