/*
 * gloo_raw.cc - raw Gloo all_reduce loop: the yardstick for shakedown.
 *
 * Forks N ranks that rendezvous through a gloo::rendezvous::FileStore in a
 * private temporary folder, connect over TCP on 127.0.0.1 and time
 * float32 sum all_reduce the way `shakedown run` does (warm-up, barrier,
 * a timed loop of `iters` operations, time per op = elapsed / iters,
 * averaged over ranks), for every Gloo all_reduce algorithm: the legacy
 * classes (ring, ring_chunked, halving_doubling, bcube; in place, objects
 * built before timing) and the options-based gloo::allreduce (opts_ring,
 * opts_bcube; out of place).  Rank 0 prints one line per (algo, size):
 *
 *   op=all_reduce algo=ring ranks=2 size_bytes=1024 time_us=95.1 busbw_gbs=0.02
 *
 * usage: gloo_raw [-n RANKS] [-i ITERS] [-w WARMUP] [-a ALGO,...] SIZE...
 * (sizes in bytes, K/M/G suffixes allowed; ITERS is scaled down for sizes
 * above 1 MiB so each point takes about the same time).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_bcube.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

static const char *const all_algos[] = { "ring", "ring_chunked",
					 "halving_doubling", "bcube",
					 "opts_ring", "opts_bcube" };

static double now_s()
{
	return std::chrono::duration<double>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

static size_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	switch (*end) {
	case 'K': case 'k': v *= 1024; break;
	case 'M': case 'm': v *= 1024 * 1024; break;
	case 'G': case 'g': v *= 1024.0 * 1024 * 1024; break;
	default: break;
	}
	return (size_t)v;
}

static void barrier(std::shared_ptr<gloo::Context> &ctx)
{
	gloo::BarrierOptions o(ctx);
	gloo::barrier(o);
}

/* Average of one double over the ranks. */
static double average(std::shared_ptr<gloo::Context> &ctx, double v)
{
	std::vector<double> all(ctx->size);
	gloo::AllgatherOptions o(ctx);
	o.setInput(&v, 1);
	o.setOutput(all.data(), all.size());
	gloo::allgather(o);
	double s = 0;
	for (double x : all)
		s += x;
	return s / ctx->size;
}

static int rank_main(int rank, int n, const std::string &dir, int iters0,
		     int warmup, const std::vector<std::string> &algos,
		     const std::vector<size_t> &sizes)
{
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
	gloo::rendezvous::PrefixStore lstore("legacy", store);
	auto lrctx = std::make_shared<gloo::rendezvous::Context>(rank, n);
	lrctx->setTimeout(std::chrono::seconds(120));
	lrctx->connectFullMesh(lstore, dev);
	std::shared_ptr<gloo::Context> lctx = lrctx;

	for (size_t bytes : sizes) {
		size_t count = bytes / sizeof(float);
		std::vector<float> in(count, 1.0f), out(count, 0.0f);
		int iters = iters0;
		if (bytes > (1 << 20))
			iters = std::max(3, (int)(iters0 * (double)(1 << 20) /
						  bytes * 8));
		for (const auto &algo : algos) {
			if (algo == "bcube" && (n & (n - 1)))
				continue;
			std::unique_ptr<gloo::Algorithm> legacy;
			std::vector<float *> ptrs{ out.data() };
			std::function<void()> op;
			if (algo == "ring")
				legacy.reset(new gloo::AllreduceRing<float>(
					lctx, ptrs, count));
			else if (algo == "ring_chunked")
				legacy.reset(new gloo::AllreduceRingChunked<
					     float>(lctx, ptrs, count));
			else if (algo == "halving_doubling")
				legacy.reset(new gloo::AllreduceHalvingDoubling<
					     float>(lctx, ptrs, count));
			else if (algo == "bcube")
				legacy.reset(new gloo::AllreduceBcube<float>(
					lctx, ptrs, count));
			std::unique_ptr<gloo::AllreduceOptions> opts;
			if (legacy) {
				gloo::Algorithm *a = legacy.get();
				op = [a] { a->run(); };
			} else {
				opts.reset(new gloo::AllreduceOptions(ctx));
				opts->setAlgorithm(
					algo == "opts_bcube"
						? gloo::AllreduceOptions::
							  Algorithm::BCUBE
						: gloo::AllreduceOptions::
							  Algorithm::RING);
				opts->setInput(in.data(), count);
				opts->setOutput(out.data(), count);
				opts->setReduceFunction(
					static_cast<void (*)(void *,
							     const void *,
							     const void *,
							     size_t)>(
						&gloo::sum<float>));
				gloo::AllreduceOptions *o = opts.get();
				op = [o] { gloo::allreduce(*o); };
			}
			for (int w = 0; w < warmup; w++)
				op();
			barrier(ctx);
			double t0 = now_s();
			for (int i = 0; i < iters; i++)
				op();
			double us = (now_s() - t0) * 1e6 / iters;
			us = average(ctx, us);
			double busbw = (double)bytes / (us * 1e-6) / 1e9 *
				       2.0 * (n - 1) / n;
			if (rank == 0)
				printf("op=all_reduce algo=%s ranks=%d "
				       "size_bytes=%zu iters=%d time_us=%.2f "
				       "busbw_gbs=%.4f\n",
				       algo.c_str(), n, bytes, iters, us,
				       busbw);
			fflush(stdout);
			barrier(ctx);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n = 2, iters = 100, warmup = 5, opt;
	std::vector<std::string> algos(all_algos, all_algos + 6);
	while ((opt = getopt(argc, argv, "n:i:w:a:")) != -1) {
		switch (opt) {
		case 'n': n = (int)strtol(optarg, nullptr, 10); break;
		case 'i': iters = (int)strtol(optarg, nullptr, 10); break;
		case 'w': warmup = (int)strtol(optarg, nullptr, 10); break;
		case 'a': {
			algos.clear();
			std::string s(optarg);
			size_t p = 0, q;
			while ((q = s.find(',', p)) != std::string::npos) {
				algos.push_back(s.substr(p, q - p));
				p = q + 1;
			}
			algos.push_back(s.substr(p));
			break;
		}
		default:
			fprintf(stderr, "usage: gloo_raw [-n RANKS] [-i ITERS] "
					"[-w WARMUP] [-a ALGO,...] SIZE...\n");
			return 2;
		}
	}
	std::vector<size_t> sizes;
	for (int i = optind; i < argc; i++)
		sizes.push_back(parse_size(argv[i]));
	if (sizes.empty() || n < 1 || n > 64 || iters < 1) {
		fprintf(stderr, "gloo_raw: give at least one size, 1-64 ranks "
				"and at least one iteration\n");
		return 2;
	}
	char tmpl[] = "/tmp/gloo_raw.XXXXXX";
	if (!mkdtemp(tmpl)) {
		perror("gloo_raw: mkdtemp");
		return 3;
	}
	std::string dir(tmpl);
	std::vector<pid_t> pids;
	for (int r = 0; r < n; r++) {
		fflush(stdout);
		pid_t p = fork();
		if (p == 0) {
			int rc = 3;
			alarm(1800); /* never leave a hung rank behind */
			try {
				rc = rank_main(r, n, dir, iters, warmup, algos,
					       sizes);
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
