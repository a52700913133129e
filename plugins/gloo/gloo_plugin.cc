/*
 * gloo_plugin.cc - the Gloo backend: collectives on host memory over TCP.
 *
 * A thin C++ layer over libgloo (Debian's libgloo-dev, a 2022 snapshot of
 * Gloo 0.5.0) behind the C ABI of include/shakedown/backend.h.  The world
 * communicator's rendezvous store rides on the shakedown bootstrap; split
 * communicators rendezvous over their parent's Gloo context.  Every op of
 * enum sd_op is offered with the algorithms Gloo has for it (the legacy
 * algorithm classes and the options-based functions); algo -1 picks the
 * fastest for the size, from crossovers measured with bench/gloo_raw.
 * No C++ exception crosses the C boundary: each entry point catches and
 * maps Gloo's errors to sd_status codes (timeouts to SD_ERR_TIMEOUT, lost
 * connections to SD_ERR_PEER, an aborted communicator to SD_ERR_CANCELLED)
 * with Gloo's message in `err`.  abort() wakes an operation blocked in
 * another thread by closing the communicator's connections; a thread per
 * communicator holds the legacy classes to the per-operation timeout.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <malloc.h>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <gloo/algorithm.h>
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
#include <gloo/common/error.h>
#include <gloo/common/logging.h>
#include <gloo/config.h>
#include <gloo/gather.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>

#include "shakedown/backend.h"
#include "shakedown/coll.h"
#include "shakedown/pattern.h"
#include "shakedown/pattern_host.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#define SD_STR2(x) #x
#define SD_STR(x) SD_STR2(x)
#define SD_GLOO_VERSION                                                     \
	"gloo " SD_STR(GLOO_VERSION_MAJOR) "." SD_STR(GLOO_VERSION_MINOR) "."  \
	SD_STR(GLOO_VERSION_PATCH) " (libgloo-dev 2022 snapshot, tcp), "     \
	"plugin " PACKAGE_VERSION

namespace {

/* Slot prefix of the point-to-point ops (Gloo's own use 0x01..0x08). */
constexpr uint8_t kSendrecvSlotPrefix = 0x40;

/* Slot prefix of the receive that closes a context: nothing sends there. */
constexpr uint8_t kCloseSlotPrefix = 0x41;

/* Default per-operation timeout when the caller gives none. */
constexpr int kDefaultTimeoutMs = 60000;

/* An error already worded for the user, with its status. */
struct sd_error {
	int status;
	std::string msg;
};

/* One allgather of bytes over some group: the bootstrap or a parent comm. */
using allgather_fn = std::function<void(const void *send, void *recv,
					size_t len)>;

/*
 * A Gloo rendezvous store over a collective allgather.  set() is collective:
 * every rank of the underlying group contributes one record per round, and
 * records of other colors (other split groups) are dropped.  Ranks that are
 * done, or take no part, keep joining rounds through finish() until every
 * rank is done, so groups that call set() a different number of times (or
 * not at all) never deadlock.  get() and wait() only read what earlier
 * rounds delivered: a missing key is an error, never a wait.
 */
class CollectiveStore : public gloo::rendezvous::Store {
public:
	CollectiveStore(allgather_fn ag, int group_size, int color)
		: ag_(std::move(ag)), n_(group_size), color_(color)
	{
	}

	void set(const std::string &key, const std::vector<char> &data) override
	{
		round(0, key, data);
	}

	std::vector<char> get(const std::string &key) override
	{
		auto it = map_.find(key);
		if (it == map_.end())
			throw sd_error{ SD_ERR_BOOTSTRAP,
					"gloo rendezvous: key '" + key +
						"' was never set" };
		return it->second;
	}

	void wait(const std::vector<std::string> &keys) override
	{
		for (const auto &k : keys)
			if (map_.find(k) == map_.end())
				throw sd_error{ SD_ERR_BOOTSTRAP,
						"gloo rendezvous: key '" + k +
							"' was never set" };
	}

	void wait(const std::vector<std::string> &keys,
		  const std::chrono::milliseconds &) override
	{
		wait(keys);
	}

	/* Join rounds until every rank of the group is done. */
	void finish()
	{
		while (!round(1, std::string(), std::vector<char>()))
			;
	}

private:
	struct header {
		uint32_t done;
		int32_t color;
		uint64_t klen;
		uint64_t vlen;
	};

	/* One round; returns whether every rank was done in it. */
	bool round(int done, const std::string &key,
		   const std::vector<char> &val)
	{
		header h = { (uint32_t)done, color_, key.size(), val.size() };
		std::vector<header> hs(n_);
		ag_(&h, hs.data(), sizeof(h));
		size_t maxlen = 0;
		bool all_done = true;
		for (const auto &x : hs) {
			maxlen = std::max<size_t>(maxlen, x.klen + x.vlen);
			all_done = all_done && x.done;
		}
		if (maxlen == 0)
			return all_done;
		std::vector<char> mine(maxlen, 0), all(maxlen * n_);
		memcpy(mine.data(), key.data(), key.size());
		if (!val.empty())
			memcpy(mine.data() + key.size(), val.data(),
			       val.size());
		ag_(mine.data(), all.data(), maxlen);
		for (int r = 0; r < n_; r++) {
			const header &x = hs[r];
			if (x.done || x.color != color_)
				continue;
			const char *p = all.data() + (size_t)r * maxlen;
			map_[std::string(p, x.klen)] =
				std::vector<char>(p + x.klen,
						  p + x.klen + x.vlen);
		}
		return all_done;
	}

	allgather_fn ag_;
	int n_;
	int32_t color_;
	std::map<std::string, std::vector<char>> map_;
};

/*
 * Wake every thread waiting on one of g's connections, with an error, and
 * close them all; callable from any thread, more than once.  Gloo 0.5 has
 * no public call that does it: Pair::close() (and closeConnections())
 * shuts the socket but leaves the buffers' exception unset, so a legacy
 * waitRecv() or an UnboundBuffer wait on that pair sleeps on until its
 * timeout (measured: a rank aborted 0.3 s into a 60 s all_reduce returned
 * after 60 s); tcp::Pair::signalExceptionExternal(), which hands the error
 * to every buffer and pending operation of the pair before closing it, is
 * protected, and tcp/pair.h cannot even be included (Debian ships no
 * gloo/common/memory.h).  But an UnboundBuffer whose wait times out calls
 * it on every pair of its context (tcp::Context::signalException,
 * "Application timeout caused pair closure"): so post a receive that
 * nothing will send and wait a millisecond for it.  A pair that failed
 * before refuses the receive (its waiters were woken when it failed): try
 * the next peer.  Gloo leaves some waits unwoken even so, as on its own
 * timeouts: a pair's error reaches only the buffers registered and the
 * operations pending on it when it fails, not an unbound send queued
 * behind a full socket, a receive half read, or a legacy buffer made on
 * the pair after it failed (a legacy operation prepared after a peer
 * went); those end at their own timeout.  Closing costs a tick of the
 * device loop (up to 10 ms) per connection.
 */
void close_pairs(const std::shared_ptr<gloo::Context> &g) noexcept
{
	if (!g || g->size < 2)
		return;
	char byte = 0;
	for (int i = 1; i < g->size; i++) {
		try {
			auto ub = g->createUnboundBuffer(&byte, 1);
			ub->recv((g->rank + i) % g->size,
				 gloo::Slot::build(kCloseSlotPrefix, 0));
			ub->waitRecv(std::chrono::milliseconds(1));
		} catch (...) {
			/* the timeout that closed every pair, or a pair
			 * closed already */
		}
	}
}

/*
 * The per-operation timeout of the legacy algorithm classes.  They wait
 * with their pairs' timeout, which tcp::Pair copies into a const member
 * when the context connects (the communicator's timeout), so setting the
 * context's timeout before building them changes nothing.  Instead run()
 * gives this thread the operation's deadline and takes it back after;
 * past it the thread closes the connections (fire), as Gloo closes a pair
 * whose wait timed out, and the operation fails.  The thread sleeps until
 * the deadline it last saw and parks when none is set; run() wakes it only
 * when it is parked, so a series of operations costs each a few atomics.
 * The pairs' own timeout still ends a single wait longer than the
 * communicator's timeout (the core gives the world the longest of its
 * tests' timeouts, so no operation asks for more).
 */
class Watchdog {
public:
	explicit Watchdog(std::function<void()> fire)
		: fire_(std::move(fire)), th_([this] { loop(); })
	{
	}

	~Watchdog()
	{
		{
			std::lock_guard<std::mutex> l(m_);
			quit_ = true;
		}
		cv_.notify_one();
		th_.join();
	}

	void arm(int timeout_ms) noexcept
	{
		auto t = std::chrono::milliseconds(timeout_ms);
		int64_t d = now() +
			    std::chrono::duration_cast<clock::duration>(t).count();
		deadline_.store(d);
		/* wake it when parked, or asleep until a later deadline (a
		 * longer operation before this one) */
		int64_t s = sleeping_until_.load();
		if (parked_.load() || (s > 0 && d < s)) {
			std::lock_guard<std::mutex> l(m_);
			cv_.notify_one();
		}
	}

	/* Take the deadline back; whether it had passed (fire ran). */
	bool disarm() noexcept
	{
		return deadline_.exchange(kIdle) == kFired;
	}

private:
	using clock = std::chrono::steady_clock;
	static constexpr int64_t kIdle = 0, kFired = -1;

	static int64_t now()
	{
		return clock::now().time_since_epoch().count();
	}

	void loop()
	{
		std::unique_lock<std::mutex> l(m_);
		while (!quit_) {
			int64_t d = deadline_.load();
			if (d > 0 && now() < d) {
				sleeping_until_.store(d);
				cv_.wait_until(l, clock::time_point(
							  clock::duration(d)));
				sleeping_until_.store(0);
			} else if (d > 0) {
				/* only if the same operation still runs */
				if (deadline_.compare_exchange_strong(d,
								      kFired)) {
					l.unlock();
					fire_();
					l.lock();
				}
			} else {
				/* an arm() after this store sees parked_;
				 * one before it set the deadline seen next */
				parked_.store(true);
				if (deadline_.load() <= 0 && !quit_)
					cv_.wait(l);
				parked_.store(false);
			}
		}
	}

	std::function<void()> fire_;
	std::mutex m_;
	std::condition_variable cv_;
	/* clock ticks, or kIdle or kFired */
	std::atomic<int64_t> deadline_{ kIdle };
	std::atomic<bool> parked_{ false };
	std::atomic<int64_t> sleeping_until_{ 0 };
	bool quit_ = false;
	std::thread th_; /* last: starts once the rest is built */
};

} // namespace

/* The prepared operation: what run() executes, and what it was built for. */
struct sd_prepared {
	bool valid = false;
	enum sd_op op;
	enum sd_dtype dtype;
	enum sd_redop redop;
	int root, in_place, algo;
	size_t send_count, recv_count;
	void *sendbuf, *recvbuf;
	int timeout_ms;
	bool legacy = false; /* runs a legacy class on lctx: watched */
	/* fill() wrote the buffers since the last run (or none ran yet):
	 * the next run of a legacy class waits for its ready handshake */
	bool fresh = true;
	std::function<void()> fn;
	std::shared_ptr<void> keep; /* algorithm objects, options, scratch */
};

struct sd_comm {
	std::shared_ptr<gloo::transport::Device> dev;
	std::shared_ptr<gloo::rendezvous::Context> ctx;
	/* The legacy algorithm classes get connections of their own: once
	 * they have used a pair, options-based operations on the same pair
	 * slow down a thousandfold (measured: 4 MiB all_reduce 3.4 s after
	 * the legacy ring instead of 10 ms). */
	std::shared_ptr<gloo::rendezvous::Context> lctx;
	int rank = 0, size = 1;
	int timeout_ms = kDefaultTimeoutMs;
	std::string address;
	std::atomic<bool> aborted{ false };
	/* closes lctx past a legacy operation's timeout; made by the first
	 * prepare of one */
	std::unique_ptr<Watchdog> watchdog;
	sd_prepared prep;
	/* the buffers g_buf_alloc made: base -> bytes */
	std::map<const void *, size_t> allocs;
	/* The last halving-doubling reduce_scatter built in one of them,
	 * kept until that buffer is freed: a test's out-of-place and
	 * in-place measurements reduce in the same buffer (below), and
	 * Gloo's class zeroes two buffers of the whole count when it is
	 * made (4 ranks, 64 MiB: 40-860 ms, most of it first touch). */
	struct {
		void *buf = nullptr;
		size_t count = 0;
		int dtype = -1, redop = -1;
		std::shared_ptr<gloo::Algorithm> alg;
	} rs;
};

namespace {

void put_err(char *err, size_t errlen, const std::string &msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg.c_str());
}

/* Gloo puts "[file.cc:123] " in front of its messages; keep the text. */
std::string gloo_text(const char *what)
{
	std::string s(what ? what : "");
	if (!s.empty() && s[0] == '[') {
		size_t e = s.find("] ");
		if (e != std::string::npos)
			s = s.substr(e + 2);
	}
	return s;
}

bool says_timeout(const std::string &s)
{
	return s.find("imeout") != std::string::npos ||
	       s.find("imed out") != std::string::npos;
}

/*
 * Run f, turning every exception into a status and a message that starts
 * with `what` (e.g. "gloo all_reduce (ring), rank 2 of 4": never "on
 * rank 2", which a script reading "on HOST" would take for a host).
 */
template <typename F>
int guarded(const std::string &what, int timeout_ms, char *err, size_t errlen,
	    F &&f)
{
	try {
		f();
		return SD_OK;
	} catch (const sd_error &e) {
		put_err(err, errlen, what + ": " + e.msg);
		return e.status;
	} catch (const gloo::IoException &e) {
		std::string s = gloo_text(e.what());
		if (says_timeout(s)) {
			put_err(err, errlen,
				what + ": timed out after " +
					std::to_string(timeout_ms) +
					" ms (" + s +
					"); a peer did not take part");
			return SD_ERR_TIMEOUT;
		}
		put_err(err, errlen,
			what + ": lost a peer (" + s + ")");
		return SD_ERR_PEER;
	} catch (const gloo::EnforceNotMet &e) {
		put_err(err, errlen, what + ": gloo refused (" +
					     gloo_text(e.what()) + ")");
		return SD_ERR_BACKEND;
	} catch (const std::bad_alloc &) {
		put_err(err, errlen, what + ": out of memory");
		return SD_ERR_NOMEM;
	} catch (const std::exception &e) {
		std::string s = gloo_text(e.what());
		if (says_timeout(s)) {
			put_err(err, errlen, what + ": timed out (" + s + ")");
			return SD_ERR_TIMEOUT;
		}
		put_err(err, errlen, what + ": " + s);
		return SD_ERR_BACKEND;
	} catch (...) {
		put_err(err, errlen, what + ": unknown C++ exception");
		return SD_ERR_BACKEND;
	}
}

/* ---- algorithms ---------------------------------------------------- */

/* Per op, the algorithm names --algo accepts (index = args->algo). */
enum {
	AR_RING, AR_RING_CHUNKED, AR_HALVING_DOUBLING, AR_BCUBE,
	AR_OPTS_RING, AR_OPTS_BCUBE, AR_COUNT
};
const char *const allreduce_algos[] = { "ring", "ring_chunked",
					"halving_doubling", "bcube",
					"opts_ring", "opts_bcube", nullptr };
enum { AG_RING, AG_OPTS };
const char *const allgather_algos[] = { "ring", "opts", nullptr };
enum { RS_HALVING_DOUBLING, RS_OPTS_ALLREDUCE };
const char *const reduce_scatter_algos[] = { "halving_doubling",
					     "opts_allreduce", nullptr };
enum { BC_ONE_TO_ALL, BC_OPTS };
const char *const broadcast_algos[] = { "one_to_all", "opts", nullptr };
const char *const opts_only[] = { "opts", nullptr };
const char *const p2p_algos[] = { "unbound", nullptr };

const char *const *algos_of(enum sd_op op)
{
	switch (op) {
	case SD_OP_ALL_REDUCE: return allreduce_algos;
	case SD_OP_ALL_GATHER: return allgather_algos;
	case SD_OP_REDUCE_SCATTER: return reduce_scatter_algos;
	case SD_OP_BROADCAST: return broadcast_algos;
	case SD_OP_ALL_TO_ALL:
	case SD_OP_REDUCE:
	case SD_OP_GATHER:
	case SD_OP_SCATTER: return opts_only;
	case SD_OP_SENDRECV:
	case SD_OP_PT2PT: return p2p_algos;
	default: return nullptr;
	}
}

/*
 * The fastest algorithm for `bytes` (the per-rank buffer, nccl-tests'
 * size) on `n` ranks, from the medians of bench/cpu_bench.sh (raw Gloo,
 * every algorithm, 2 and 4 ranks, loopback TCP on the 2-core build
 * machines; bench/README-cpu.md has the table):
 *   all_reduce      the legacy ring up to 64 KiB on 2 ranks (85 us at
 *                   1 KiB against 250+ for the others), halving-doubling
 *                   up to 16 KiB on more (637 us against the ring's 785
 *                   on 4); then the options-based bcube (power-of-two
 *                   rank counts; the options ring otherwise) below 4 MiB,
 *                   2.4-2.7x the legacy ring at 1 MiB; the options ring
 *                   from 4 MiB, where the algorithms are within the noise
 *                   of each other;
 *   all_gather      the legacy ring, but the options-based one from
 *                   256 KiB on more than 2 ranks (1.1-1.3x at 1-64 MiB
 *                   on 4);
 *   reduce_scatter  halving-doubling everywhere;
 *   broadcast       the legacy one-to-all below 16 MiB, the options-based
 *                   one from there (1.1x at 16 MiB on 4 ranks and 64 MiB
 *                   on 2).
 */
int auto_algo(enum sd_op op, size_t bytes, int n)
{
	const bool pow2 = n > 0 && (n & (n - 1)) == 0;
	switch (op) {
	case SD_OP_ALL_REDUCE:
		if (n <= 2 && bytes <= ((size_t)64 << 10))
			return AR_RING;
		if (n > 2 && bytes <= ((size_t)16 << 10))
			return pow2 ? AR_HALVING_DOUBLING : AR_RING;
		if (bytes < ((size_t)4 << 20))
			return pow2 ? AR_OPTS_BCUBE : AR_OPTS_RING;
		return AR_OPTS_RING;
	case SD_OP_ALL_GATHER:
		return n > 2 && bytes >= ((size_t)256 << 10) ? AG_OPTS : AG_RING;
	case SD_OP_REDUCE_SCATTER:
		return RS_HALVING_DOUBLING;
	case SD_OP_BROADCAST:
		return bytes >= ((size_t)16 << 20) ? BC_OPTS : BC_ONE_TO_ALL;
	default:
		return 0;
	}
}

/* ---- element types ------------------------------------------------- */

/* Divide n elements by the communicator size, in the element type. */
template <typename T>
void divide(void *buf, size_t count, int n)
{
	/* integers divide by n as an integer of their own width or wider:
	 * (T)n wraps for int8 past 127 ranks, uint8 past 255 */
	T *p = static_cast<T *>(buf);
	for (size_t i = 0; i < count; i++) {
		if (std::is_integral<T>::value && std::is_signed<T>::value)
			p[i] = (T)((long long)p[i] / (long long)n);
		else if (std::is_integral<T>::value)
			p[i] = (T)((unsigned long long)p[i] /
				   (unsigned long long)n);
		else
			p[i] = (T)(p[i] / (T)n);
	}
}

template <>
void divide<gloo::float16>(void *buf, size_t count, int n)
{
	uint16_t *p = static_cast<uint16_t *>(buf);
	for (size_t i = 0; i < count; i++)
		p[i] = (uint16_t)sd_encode(SD_FLOAT16,
					   sd_decode(SD_FLOAT16, p[i]) / n);
}

template <typename T>
const gloo::ReductionFunction<T> *legacy_fn(enum sd_redop r)
{
	switch (r) {
	case SD_PROD: return gloo::ReductionFunction<T>::product;
	case SD_MIN: return gloo::ReductionFunction<T>::min;
	case SD_MAX: return gloo::ReductionFunction<T>::max;
	default: return gloo::ReductionFunction<T>::sum;
	}
}

using opts_fn = void (*)(void *, const void *, const void *, size_t);

template <typename T>
opts_fn options_fn(enum sd_redop r)
{
	switch (r) {
	case SD_PROD: return &gloo::product<T>;
	case SD_MIN: return &gloo::min<T>;
	case SD_MAX: return &gloo::max<T>;
	default: return &gloo::sum<T>;
	}
}

/*
 * A "ready" handshake for legacy algorithms that write straight into a
 * peer's buffers: a rank sends only once the peer has entered the same
 * operation, so data never lands while the peer still refills its buffer
 * (fill() before a check).  It runs on the first run after a fill
 * (sd_prepared.fresh): back-to-back timed runs move the same data, or
 * data nobody checks, so they go unsynchronised, as Gloo's own users run
 * them (a round trip each cost 4-rank all_gather and broadcast 10-25% of
 * raw Gloo's bandwidth).  Each rank waits for one token from every rank in
 * `from` and sends one to every rank in `to`.
 */
class ReadyToken {
public:
	ReadyToken(const std::shared_ptr<gloo::Context> &g,
		   const std::vector<int> &to, const std::vector<int> &from)
	{
		int slot = g->nextSlot();
		for (int r : to)
			send_.push_back(g->getPair(r)->createSendBuffer(
				slot, &out_, sizeof(out_)));
		for (size_t i = 0; i < from.size(); i++)
			in_.push_back(0);
		for (size_t i = 0; i < from.size(); i++)
			recv_.push_back(g->getPair(from[i])->createRecvBuffer(
				slot, &in_[i], sizeof(in_[i])));
	}

	void exchange()
	{
		for (auto &b : send_)
			b->send();
		for (auto &b : recv_)
			b->waitRecv();
		for (auto &b : send_)
			b->waitSend();
	}

private:
	int out_ = 0;
	std::vector<int> in_;
	std::vector<std::unique_ptr<gloo::transport::Buffer>> send_, recv_;
};

/* n elements of scratch, left uninitialised: every operation writes its
 * scratch whole before it reads it, and a value-initialised vector
 * zeroed 64 MiB per measurement in prepare (8-85 ms of a bench plan's
 * time outside the operations).  Empty for n == 0. */
template <typename T>
std::shared_ptr<T> scratch_of(size_t n)
{
	if (n == 0)
		return std::shared_ptr<T>();
	void *q = nullptr;
	if (posix_memalign(&q, 64, n * sizeof(T)) != 0)
		throw std::bad_alloc();
	return std::shared_ptr<T>(static_cast<T *>(q), free);
}

/* Everything build<T>() needs. */
struct build_ctx {
	sd_comm *c;
	const sd_op_args *a;
	int algo;
	std::chrono::milliseconds tmo;
};

template <typename T>
std::unique_ptr<gloo::Algorithm> legacy_allreduce(const build_ctx &b, T *p,
						  int count)
{
	auto &ctx = b.c->lctx;
	std::vector<T *> ptrs{ p };
	auto fn = legacy_fn<T>(b.a->redop);
	std::shared_ptr<gloo::Context> g = ctx;
	switch (b.algo) {
	case AR_RING_CHUNKED:
		return std::unique_ptr<gloo::Algorithm>(
			new gloo::AllreduceRingChunked<T>(g, ptrs, count, fn));
	case AR_HALVING_DOUBLING:
		return std::unique_ptr<gloo::Algorithm>(
			new gloo::AllreduceHalvingDoubling<T>(g, ptrs, count,
							       fn));
	case AR_BCUBE:
		return std::unique_ptr<gloo::Algorithm>(
			new gloo::AllreduceBcube<T>(g, ptrs, count, fn));
	default:
		return std::unique_ptr<gloo::Algorithm>(
			new gloo::AllreduceRing<T>(g, ptrs, count, fn));
	}
}

/* Build the closure that runs one operation of type T. */
template <typename T>
void build(const build_ctx &b, sd_prepared &p)
{
	const sd_op_args *a = b.a;
	sd_comm *c = b.c;
	std::shared_ptr<gloo::Context> g = c->ctx;
	std::shared_ptr<gloo::Context> lg = c->lctx; /* legacy classes */
	const int n = c->size, me = c->rank;
	const size_t ts = sizeof(T);
	T *send = static_cast<T *>(a->sendbuf);
	T *recv = static_cast<T *>(a->recvbuf);
	const size_t sc = a->send_count, rc = a->recv_count;
	const bool avg = sd_op_is_reduction(a->op) && a->redop == SD_AVG;
	const auto tmo = b.tmo;

	switch (a->op) {
	case SD_OP_ALL_REDUCE: {
		std::function<void()> post = [] {};
		if (avg)
			post = [recv, rc, n] { divide<T>(recv, rc, n); };
		const bool copy = send != recv;
		if (b.algo == AR_OPTS_RING || b.algo == AR_OPTS_BCUBE) {
			auto o = std::make_shared<gloo::AllreduceOptions>(g);
			o->setAlgorithm(b.algo == AR_OPTS_BCUBE
						? gloo::AllreduceOptions::
							  Algorithm::BCUBE
						: gloo::AllreduceOptions::
							  Algorithm::RING);
			if (copy)
				o->setInput(send, sc);
			o->setOutput(recv, rc);
			o->setReduceFunction(options_fn<T>(a->redop));
			o->setTimeout(tmo);
			p.keep = o;
			p.fn = [o, post] {
				gloo::allreduce(*o);
				post();
			};
		} else {
			std::shared_ptr<gloo::Algorithm> alg =
				legacy_allreduce<T>(b, recv, (int)rc);
			p.keep = alg;
			p.legacy = true;
			size_t bytes = rc * ts;
			p.fn = [alg, copy, send, recv, bytes, post] {
				if (copy)
					memcpy((void *)recv, send, bytes);
				alg->run();
				post();
			};
		}
		return;
	}
	case SD_OP_ALL_GATHER: {
		if (b.algo == AG_OPTS) {
			auto o = std::make_shared<gloo::AllgatherOptions>(g);
			if (!a->in_place)
				o->setInput(send, sc);
			o->setOutput(recv, rc);
			o->setTimeout(tmo);
			p.keep = o;
			p.fn = [o] { gloo::allgather(*o); };
		} else {
			std::vector<const T *> in{ send };
			auto ready = std::make_shared<ReadyToken>(
				lg, std::vector<int>{ (me + n - 1) % n },
				std::vector<int>{ (me + 1) % n });
			std::shared_ptr<gloo::Algorithm> alg(
				new gloo::AllgatherRing<T>(lg, in, recv,
							   (int)sc));
			p.keep = std::make_shared<std::pair<
				std::shared_ptr<void>, std::shared_ptr<void>>>(
				alg, ready);
			p.legacy = true;
			sd_comm *cc = b.c;
			p.fn = [alg, ready, cc] {
				if (cc->prep.fresh)
					ready->exchange();
				alg->run();
			};
		}
		return;
	}
	case SD_OP_REDUCE_SCATTER: {
		/* both reduce the whole send buffer, then keep this rank's
		 * block: out of place in a scratch copy (the send buffer stays
		 * as it was), in place in the send buffer itself, which holds
		 * the receive block and may be overwritten (no copy: the
		 * whole buffer's memcpy cost in-place runs a quarter of their
		 * bandwidth at 64 MiB) */
		const bool inplace = send != nullptr && recv >= send &&
				     recv < send + sc;
		/* out of place, the receive buffer is the scratch where its
		 * allocation holds the whole send count (the core's holds
		 * the test's size, max(send, receive)) */
		auto cap = c->allocs.find(recv);
		const bool in_recv = !inplace && cap != c->allocs.end() &&
				     cap->second >= sc * ts &&
				     (recv + sc <= send || send + sc <= recv);
		std::shared_ptr<T> scratch =
			scratch_of<T>(inplace || in_recv ? 0 : sc);
		T *s = inplace ? send : in_recv ? recv : scratch.get();
		size_t bytes = sc * ts;
		/* halving-doubling leaves this rank's block first; the
		 * all_reduce leaves everything in place */
		T *mine = b.algo == RS_OPTS_ALLREDUCE ? s + (size_t)me * rc : s;
		std::function<void()> post = [recv, mine, rc, ts] {
			if (mine != recv)
				memmove((void *)recv, mine, rc * ts);
		};
		if (avg)
			post = [recv, mine, rc, ts, n] {
				if (mine != recv)
					memmove((void *)recv, mine, rc * ts);
				divide<T>(recv, rc, n);
			};
		if (b.algo == RS_OPTS_ALLREDUCE) {
			auto o = std::make_shared<gloo::AllreduceOptions>(g);
			o->setAlgorithm(
				gloo::AllreduceOptions::Algorithm::RING);
			/* without an input the output is reduced in place */
			if (!inplace)
				o->setInput(send, sc);
			o->setOutput(s, sc);
			o->setReduceFunction(options_fn<T>(a->redop));
			o->setTimeout(tmo);
			p.keep = std::make_shared<std::pair<
				std::shared_ptr<void>, std::shared_ptr<void>>>(
				o, scratch);
			p.fn = [o, post] {
				gloo::allreduce(*o);
				post();
			};
		} else {
			/* the same on every rank: buffers of one test, made
			 * and freed in step */
			auto &k = c->rs;
			std::shared_ptr<gloo::Algorithm> alg;
			if (k.alg && k.buf == s && k.count == sc &&
			    k.dtype == a->dtype && k.redop == a->redop) {
				alg = k.alg;
			} else {
				std::vector<int> elems(n, (int)rc);
				alg.reset(new gloo::ReduceScatterHalvingDoubling<
					  T>(lg, std::vector<T *>{ s }, (int)sc,
					     elems, legacy_fn<T>(a->redop)));
				k = {};
				if (!scratch) /* in a buffer of the core's */
					k = { s, sc, a->dtype, a->redop, alg };
			}
			/* it sends into its peers' buffers: after a fill,
			 * only once every peer has filled (seen: 2.6 million
			 * wrong elements at 64 MiB in place on 2 loaded ranks
			 * without it) */
			std::vector<int> peers;
			for (int r = 0; r < n; r++)
				if (r != me)
					peers.push_back(r);
			auto ready = std::make_shared<ReadyToken>(lg, peers,
								  peers);
			p.keep = std::make_shared<std::pair<
				std::shared_ptr<void>, std::shared_ptr<void>>>(
				alg, std::make_shared<std::pair<
					     std::shared_ptr<void>,
					     std::shared_ptr<void>>>(scratch,
								     ready));
			p.legacy = true;
			sd_comm *cc = b.c;
			p.fn = [alg, s, send, bytes, post, ready, cc] {
				if (s != send)
					memcpy((void *)s, send, bytes);
				if (cc->prep.fresh)
					ready->exchange();
				alg->run();
				post();
			};
		}
		return;
	}
	case SD_OP_ALL_TO_ALL: {
		auto o = std::make_shared<gloo::AlltoallOptions>(g);
		o->setOutput(recv, rc);
		o->setTimeout(tmo);
		if (send != recv) {
			o->setInput(send, sc);
			p.keep = o;
			p.fn = [o] { gloo::alltoall(*o); };
			return;
		}
		/* in place: gloo::alltoall sends block k to rank k while
		 * it receives rank k's block into the same place, straight
		 * from and into the buffer, so the input is copied aside
		 * first and the copy is part of the operation's time (as
		 * an in-place all_to_all costs that on any library without
		 * one) */
		std::shared_ptr<T> scratch = scratch_of<T>(sc);
		T *s = scratch.get();
		size_t bytes = sc * ts;
		o->setInput(s, sc);
		p.keep = std::make_shared<std::pair<
			std::shared_ptr<void>, std::shared_ptr<void>>>(
			o, scratch);
		p.fn = [o, s, recv, bytes] {
			memcpy((void *)s, recv, bytes);
			gloo::alltoall(*o);
		};
		return;
	}
	case SD_OP_BROADCAST: {
		const int root = a->root;
		if (b.algo == BC_OPTS) {
			auto o = std::make_shared<gloo::BroadcastOptions>(g);
			if (me == root && send != recv)
				o->setInput(send, sc);
			o->setOutput(recv, rc);
			o->setRoot(root);
			o->setTimeout(tmo);
			p.keep = o;
			p.fn = [o] { gloo::broadcast(*o); };
		} else {
			std::vector<int> peers;
			for (int r = 0; r < n; r++)
				if (r != root && (me == root || r == me))
					peers.push_back(r);
			std::vector<int> none, to_root{ root };
			auto ready = std::make_shared<ReadyToken>(
				lg, me == root ? none : to_root,
				me == root ? peers : none);
			std::shared_ptr<gloo::Algorithm> alg(
				new gloo::BroadcastOneToAll<T>(
					lg, std::vector<T *>{ recv }, rc,
					root, 0));
			p.keep = std::make_shared<std::pair<
				std::shared_ptr<void>, std::shared_ptr<void>>>(
				alg, ready);
			p.legacy = true;
			bool copy = me == root && send != recv;
			size_t bytes = rc * ts;
			sd_comm *cc = b.c;
			p.fn = [alg, ready, copy, send, recv, bytes, cc] {
				if (copy)
					memcpy((void *)recv, send, bytes);
				if (cc->prep.fresh)
					ready->exchange();
				alg->run();
			};
		}
		return;
	}
	case SD_OP_REDUCE: {
		auto o = std::make_shared<gloo::ReduceOptions>(g);
		const int root = a->root;
		if (send != recv)
			o->setInput(send, sc);
		o->setOutput(recv, rc);
		o->setRoot(root);
		o->setReduceFunction(options_fn<T>(a->redop));
		o->setTimeout(tmo);
		p.keep = o;
		if (avg && me == root)
			p.fn = [o, recv, rc, n] {
				gloo::reduce(*o);
				divide<T>(recv, rc, n);
			};
		else
			p.fn = [o] { gloo::reduce(*o); };
		return;
	}
	case SD_OP_GATHER: {
		auto o = std::make_shared<gloo::GatherOptions>(g);
		o->setInput(send, sc);
		if (me == a->root)
			o->setOutput(recv, rc);
		o->setRoot(a->root);
		o->setTimeout(tmo);
		p.keep = o;
		p.fn = [o] { gloo::gather(*o); };
		return;
	}
	case SD_OP_SCATTER: {
		auto o = std::make_shared<gloo::ScatterOptions>(g);
		if (me == a->root) {
			std::vector<T *> ins(n);
			for (int r = 0; r < n; r++)
				ins[r] = send + (size_t)r * rc;
			o->setInputs(ins, rc);
		}
		o->setOutput(recv, rc);
		o->setRoot(a->root);
		o->setTimeout(tmo);
		p.keep = o;
		p.fn = [o] { gloo::scatter(*o); };
		return;
	}
	case SD_OP_SENDRECV: {
		size_t bytes = sc * ts;
		if (n == 1) {
			p.fn = [send, recv, bytes] {
				memmove((void *)recv, send, bytes);
			};
			return;
		}
		/* in place the receive would overwrite what is still being
		 * sent (a send waits for the peer's receive, so it cannot
		 * simply go first): send from a copy, made in the timed
		 * operation */
		std::shared_ptr<T> scratch;
		T *from_buf = send;
		if (send == recv) {
			scratch = scratch_of<T>(sc);
			from_buf = scratch.get();
		}
		auto sb = std::shared_ptr<gloo::transport::UnboundBuffer>(
			g->createUnboundBuffer(from_buf, bytes));
		auto rb = std::shared_ptr<gloo::transport::UnboundBuffer>(
			g->createUnboundBuffer(recv, rc * ts));
		p.keep = std::make_shared<std::pair<
			std::shared_ptr<void>, std::shared_ptr<void>>>(
			std::make_shared<std::pair<std::shared_ptr<void>,
						   std::shared_ptr<void>>>(sb,
									   rb),
			scratch);
		const uint64_t slot = gloo::Slot::build(kSendrecvSlotPrefix, 0);
		const int to = (me + 1) % n, from = (me + n - 1) % n;
		const bool copy = send == recv;
		p.fn = [sb, rb, slot, to, from, tmo, copy, from_buf, recv,
			bytes] {
			if (copy)
				memcpy((void *)from_buf, recv, bytes);
			rb->recv(from, slot);
			sb->send(to, slot);
			if (!rb->waitRecv(tmo) || !sb->waitSend(tmo))
				throw sd_error{ SD_ERR_TIMEOUT,
						"timed out" };
		};
		return;
	}
	case SD_OP_PT2PT: {
		if (n < 2 || me > 1) {
			p.fn = [] {};
			return;
		}
		size_t bytes = (me == 0 ? sc : rc) * ts;
		auto ub = std::shared_ptr<gloo::transport::UnboundBuffer>(
			g->createUnboundBuffer(me == 0 ? (void *)send
						       : (void *)recv,
					       bytes));
		p.keep = ub;
		const uint64_t slot = gloo::Slot::build(kSendrecvSlotPrefix, 1);
		if (me == 0)
			p.fn = [ub, slot, tmo] {
				ub->send(1, slot);
				if (!ub->waitSend(tmo))
					throw sd_error{ SD_ERR_TIMEOUT,
							"timed out" };
			};
		else
			p.fn = [ub, slot, tmo] {
				ub->recv(0, slot);
				if (!ub->waitRecv(tmo))
					throw sd_error{ SD_ERR_TIMEOUT,
							"timed out" };
			};
		return;
	}
	default:
		throw sd_error{ SD_ERR_INVALID, "unknown operation" };
	}
}

const char *op_name(enum sd_op op)
{
	const struct sd_coll *c = sd_coll_get(op);
	return c ? c->name : "op";
}
/* Whether prepared `p` was built for exactly these args. */
bool same_args(const sd_prepared &p, const sd_op_args *a)
{
	return p.valid && p.op == a->op && p.dtype == a->dtype &&
	       p.redop == a->redop && p.root == a->root &&
	       p.in_place == a->in_place && p.algo == a->algo &&
	       p.send_count == a->send_count &&
	       p.recv_count == a->recv_count && p.sendbuf == a->sendbuf &&
	       p.recvbuf == a->recvbuf && p.timeout_ms == a->timeout_ms;
}

std::string describe(const sd_comm *c, const sd_op_args *a, int algo)
{
	const char *const *names = algos_of(a->op);
	std::string s = std::string("gloo ") + op_name(a->op);
	if (names && algo >= 0)
		s += std::string(" (") + names[algo] + ")";
	s += ", rank " + std::to_string(c->rank) + " of " +
	     std::to_string(c->size);
	return s;
}

int check_args(const sd_comm *c, const sd_op_args *a, char *err,
	       size_t errlen)
{
	const char *const *names = algos_of(a->op);
	int nalgo = 0;
	if (!names) {
		put_err(err, errlen, "gloo: unknown operation");
		return SD_ERR_INVALID;
	}
	while (names[nalgo])
		nalgo++;
	if (a->algo < -1 || a->algo >= nalgo) {
		put_err(err, errlen, std::string("gloo: no algorithm number ") +
					     std::to_string(a->algo) + " for " +
					     op_name(a->op));
		return SD_ERR_INVALID;
	}
	if (sd_coll_get(a->op)->rooted && (a->root < 0 || a->root >= c->size)) {
		put_err(err, errlen, "gloo: root " + std::to_string(a->root) +
					     " is not a rank of this "
					     "communicator of " +
					     std::to_string(c->size));
		return SD_ERR_INVALID;
	}
	if (a->op == SD_OP_ALL_REDUCE && a->algo == AR_BCUBE &&
	    (c->size & (c->size - 1)) != 0) {
		put_err(err, errlen, "gloo: the legacy bcube all_reduce needs a "
				     "power-of-two number of ranks, not " +
					     std::to_string(c->size) +
					     "; use opts_bcube or auto");
		return SD_ERR_INVALID;
	}
	if (a->send_count > INT32_MAX || a->recv_count > INT32_MAX) {
		put_err(err, errlen, "gloo: more than 2^31 elements in one "
				     "operation; use a smaller size");
		return SD_ERR_INVALID;
	}
	return SD_OK;
}

int do_prepare(sd_comm *c, const sd_op_args *a, char *err, size_t errlen)
{
	int rc = check_args(c, a, err, errlen);
	if (rc)
		return rc;
	if (same_args(c->prep, a))
		return SD_OK;
	size_t ts = sd_dtype_size(a->dtype);
	int algo = a->algo >= 0
			   ? a->algo
			   : auto_algo(a->op,
				       std::max(a->send_count, a->recv_count) *
					       ts,
				       c->size);
	int tmo_ms = a->timeout_ms > 0 ? a->timeout_ms : c->timeout_ms;
	/* drop the old objects first: their buffers go with them */
	c->prep = sd_prepared();
	sd_prepared p;
	build_ctx b{ c, a, algo, std::chrono::milliseconds(tmo_ms) };
	rc = guarded(describe(c, a, algo), tmo_ms, err, errlen, [&] {
		switch (a->dtype) {
		case SD_INT8: build<int8_t>(b, p); break;
		case SD_UINT8: build<uint8_t>(b, p); break;
		case SD_INT32: build<int32_t>(b, p); break;
		case SD_INT64: build<int64_t>(b, p); break;
		case SD_FLOAT16: build<gloo::float16>(b, p); break;
		case SD_FLOAT32: build<float>(b, p); break;
		case SD_FLOAT64: build<double>(b, p); break;
		default:
			throw sd_error{ SD_ERR_INVALID,
					"data type not supported; use "
					"float32, float64, float16, int8, "
					"uint8, int32 or int64" };
		}
		if (p.legacy && !c->watchdog) {
			std::shared_ptr<gloo::Context> lg = c->lctx;
			c->watchdog.reset(
				new Watchdog([lg] { close_pairs(lg); }));
		}
	});
	if (rc)
		return rc;
	p.valid = true;
	p.op = a->op;
	p.dtype = a->dtype;
	p.redop = a->redop;
	p.root = a->root;
	p.in_place = a->in_place;
	p.algo = a->algo;
	p.send_count = a->send_count;
	p.recv_count = a->recv_count;
	p.sendbuf = a->sendbuf;
	p.recvbuf = a->recvbuf;
	p.timeout_ms = a->timeout_ms;
	c->prep = std::move(p);
	return SD_OK;
}

/* ---- addresses and device facts ------------------------------------ */

bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const auto *in = (const struct sockaddr_in *)sa;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const auto *in6 = (const struct sockaddr_in6 *)sa;
		return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	return false;
}

/* The IPv4 address `host` resolves to, if it is not a loopback one. */
std::string resolve_host(const char *host)
{
	if (!host || !*host)
		return "";
	struct addrinfo hints, *res = nullptr;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, nullptr, &hints, &res) != 0)
		return "";
	std::string out;
	for (auto *ai = res; ai; ai = ai->ai_next) {
		if (is_loopback(ai->ai_addr))
			continue;
		char buf[INET_ADDRSTRLEN];
		const auto *in = (const struct sockaddr_in *)ai->ai_addr;
		if (inet_ntop(AF_INET, &in->sin_addr, buf, sizeof(buf))) {
			out = buf;
			break;
		}
	}
	freeaddrinfo(res);
	return out;
}

/* The first up, non-loopback IPv4 address (or of interface `want`). */
std::string iface_address(const char *want)
{
	struct ifaddrs *ifs = nullptr;
	std::string out;
	if (getifaddrs(&ifs) != 0)
		return "";
	for (auto *i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    !(i->ifa_flags & IFF_UP))
			continue;
		if (want ? strcmp(i->ifa_name, want) != 0
			 : (i->ifa_flags & IFF_LOOPBACK) != 0 ||
				   is_loopback(i->ifa_addr))
			continue;
		char buf[INET_ADDRSTRLEN];
		const auto *in = (const struct sockaddr_in *)i->ifa_addr;
		if (inet_ntop(AF_INET, &in->sin_addr, buf, sizeof(buf))) {
			out = buf;
			break;
		}
	}
	freeifaddrs(ifs);
	return out;
}

/*
 * Choose what the TCP device binds: an interface when one is named, the
 * loopback address when every rank is on this host, else this host's own
 * address.  `shown` gets the address for reports.
 */
int choose_attr(const struct sd_bootstrap *bs, const struct sd_comm_config *cfg,
		gloo::transport::tcp::attr &attr, std::string &shown,
		char *err, size_t errlen)
{
	const char *iface = cfg && cfg->iface && *cfg->iface ? cfg->iface
							       : nullptr;
	if (!iface) {
		const char *e = getenv("SHAKEDOWN_GLOO_IFACE");
		if (e && *e)
			iface = e;
	}
	if (iface) {
		shown = iface_address(iface);
		if (shown.empty()) {
			put_err(err, errlen,
				std::string("gloo: network interface '") +
					iface + "' has no IPv4 address or is "
						"down; pass another with "
						"--iface or "
						"SHAKEDOWN_GLOO_IFACE");
			return SD_ERR_INVALID;
		}
		attr.iface = iface;
		shown = std::string(iface) + " " + shown;
		return SD_OK;
	}
	if (bs->local_size == bs->size) {
		attr.hostname = "127.0.0.1";
		shown = attr.hostname;
		return SD_OK;
	}
	std::string addr = resolve_host(bs->host);
	if (addr.empty())
		addr = iface_address(nullptr);
	if (addr.empty()) {
		put_err(err, errlen,
			std::string("gloo: host '") +
				(bs->host ? bs->host : "") +
				"' has no non-loopback IPv4 address for "
				"ranks on other hosts; name an interface "
				"with --iface or SHAKEDOWN_GLOO_IFACE");
		return SD_ERR_NODEV;
	}
	attr.hostname = addr;
	shown = addr;
	return SD_OK;
}

/* A value from /proc/meminfo in bytes, 0 when missing. */
uint64_t meminfo(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	uint64_t v = 0;
	size_t kl = strlen(key);
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			v = strtoull(line + kl + 1, nullptr, 10) * 1024;
			break;
		}
	}
	fclose(f);
	return v;
}

std::string cpu_model()
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	std::string m;
	if (!f)
		return "";
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) != 0)
			continue;
		const char *p = strchr(line, ':');
		if (!p)
			continue;
		for (p++; *p == ' ' || *p == '\t'; p++)
			;
		m = p;
		while (!m.empty() && (m.back() == '\n' || m.back() == ' '))
			m.pop_back();
		break;
	}
	fclose(f);
	return m;
}

/* Build a context of `size` ranks over `store` on device `dev`. */
std::shared_ptr<gloo::rendezvous::Context>
connect(int rank, int size, gloo::rendezvous::Store &store,
	std::shared_ptr<gloo::transport::Device> &dev, int timeout_ms)
{
	auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
	ctx->setTimeout(std::chrono::milliseconds(timeout_ms));
	ctx->connectFullMesh(store, dev);
	return ctx;
}

/* ---- the C entry points -------------------------------------------- */

int g_init(struct sd_bootstrap *bs, char *err, size_t errlen)
{
	/* a test's buffers, Gloo's algorithms and the plugin's scratch are
	 * allocated per test or measurement; above glibc's mmap threshold
	 * each came from and went back to the kernel, and was faulted in
	 * page by page again.  Keeping freed memory in the heap makes the
	 * next one reuse it; a rank holds at most what its largest
	 * measurement needed. */
	mallopt(M_MMAP_THRESHOLD, 1 << 30);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	return SD_OK;
}

void g_fini(void)
{
}

int g_comm_create(struct sd_bootstrap *bs, const struct sd_comm_config *cfg,
		  struct sd_comm **out, char *err, size_t errlen)
{
	*out = nullptr;
	sd_comm *c = new (std::nothrow) sd_comm();
	if (!c) {
		put_err(err, errlen, "gloo: out of memory");
		return SD_ERR_NOMEM;
	}
	c->rank = bs->rank;
	c->size = bs->size;
	if (cfg && cfg->timeout_ms > 0)
		c->timeout_ms = cfg->timeout_ms;
	gloo::transport::tcp::attr attr;
	int rc = choose_attr(bs, cfg, attr, c->address, err, errlen);
	if (rc) {
		delete c;
		return rc;
	}
	std::string what = "gloo: connecting rank " + std::to_string(bs->rank) +
			   " of " + std::to_string(bs->size) + " on " +
			   c->address;
	rc = guarded(what, c->timeout_ms, err, errlen, [&] {
		c->dev = gloo::transport::tcp::CreateDevice(attr);
		CollectiveStore store(
			[bs](const void *s, void *r, size_t len) {
				int brc = bs->allgather(bs, s, r, len);
				if (brc)
					throw sd_error{ brc,
							"bootstrap allgather "
							"failed" };
			},
			bs->size, 0);
		c->ctx = connect(bs->rank, bs->size, store, c->dev,
				 c->timeout_ms);
		gloo::rendezvous::PrefixStore lstore("legacy", store);
		c->lctx = connect(bs->rank, bs->size, lstore, c->dev,
				  c->timeout_ms);
		store.finish();
	});
	if (rc) {
		delete c;
		return rc;
	}
	*out = c;
	return SD_OK;
}

int g_comm_split(struct sd_comm *parent, int color, int key,
		 struct sd_comm **out, char *err, size_t errlen)
{
	*out = nullptr;
	std::unique_ptr<sd_comm> c;
	std::string what = "gloo: splitting a communicator, rank " +
			   std::to_string(parent->rank) + " of " +
			   std::to_string(parent->size);
	if (parent->aborted) {
		put_err(err, errlen, what + ": the communicator was aborted");
		return SD_ERR_CANCELLED;
	}
	int rc = guarded(what, parent->timeout_ms, err, errlen, [&] {
		std::shared_ptr<gloo::Context> pg = parent->ctx;
		auto tmo = std::chrono::milliseconds(parent->timeout_ms);
		auto ag = [pg, tmo](const void *s, void *r, size_t len) {
			gloo::AllgatherOptions o(pg);
			o.setInput(const_cast<char *>(
					   static_cast<const char *>(s)),
				   len);
			o.setOutput(static_cast<char *>(r), len * pg->size);
			o.setTimeout(tmo);
			gloo::allgather(o);
		};
		int32_t me[3] = { color < 0 ? -1 : color, key, parent->rank };
		std::vector<int32_t> all(3 * (size_t)parent->size);
		ag(me, all.data(), sizeof(me));
		std::vector<std::pair<int32_t, int32_t>> group; /* key, rank */
		for (int r = 0; r < parent->size; r++)
			if (color >= 0 && all[3 * r] == color)
				group.emplace_back(all[3 * r + 1],
						   all[3 * r + 2]);
		std::sort(group.begin(), group.end());
		CollectiveStore store(ag, parent->size, color < 0 ? -1 : color);
		if (color >= 0) {
			c.reset(new sd_comm());
			c->size = (int)group.size();
			for (int i = 0; i < c->size; i++)
				if (group[i].second == parent->rank)
					c->rank = i;
			c->timeout_ms = parent->timeout_ms;
			c->address = parent->address;
			c->dev = parent->dev;
			c->ctx = connect(c->rank, c->size, store, c->dev,
					 c->timeout_ms);
			gloo::rendezvous::PrefixStore lstore("legacy", store);
			c->lctx = connect(c->rank, c->size, lstore, c->dev,
					  c->timeout_ms);
		}
		store.finish();
	});
	if (rc && parent->aborted) {
		put_err(err, errlen, what + ": the communicator was aborted");
		return SD_ERR_CANCELLED;
	}
	if (rc)
		return rc;
	*out = c.release();
	return SD_OK;
}

int g_comm_rank(const struct sd_comm *c)
{
	return c->rank;
}

int g_comm_size(const struct sd_comm *c)
{
	return c->size;
}

#if defined(__SANITIZE_ADDRESS__)
/* An object left on purpose, and what it holds, is not a leak. */
void ignore_leak(const void *p)
{
	__lsan_ignore_object(p);
}
#else
void ignore_leak(const void *)
{
}
#endif

void g_comm_destroy(struct sd_comm *c)
{
	if (!c)
		return;
	/* first: it may close lctx while the rest goes; its thread never
	 * waits long (a millisecond, and a loop tick per connection) */
	c->watchdog.reset();
	if (c->aborted) {
		/* peers may be gone mid-operation: leave what is left (its
		 * connections closed by abort) to the process exit rather than
		 * risk blocking in a destructor; LeakSanitizer is told so */
		ignore_leak(c);
		return;
	}
	try {
		c->prep = sd_prepared();
		c->lctx.reset();
		c->ctx.reset();
		c->dev.reset();
		delete c;
	} catch (...) {
	}
}

int g_describe_device(struct sd_comm *c, struct sd_device_info *info)
{
	memset(info, 0, sizeof(*info));
	std::string m = cpu_model();
	snprintf(info->name, sizeof(info->name), "CPU %s",
		 m.empty() ? "(unknown model)" : m.c_str());
	snprintf(info->transport, sizeof(info->transport), "gloo tcp %s",
		 c->address.c_str());
	info->mem_total_bytes = meminfo("MemTotal");
	info->mem_free_bytes = meminfo("MemAvailable");
	return SD_OK;
}


int g_buf_alloc(struct sd_comm *c, size_t bytes, void **out, char *err,
		size_t errlen)
{
	void *p = nullptr;
	if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) {
		put_err(err, errlen, "gloo: cannot allocate " +
					     std::to_string(bytes) +
					     " bytes of host memory; use a "
					     "smaller maximum size");
		return SD_ERR_NOMEM;
	}
	if (c) {
		try {
			c->allocs[p] = bytes;
		} catch (const std::bad_alloc &) {
			/* unlisted: reduce_scatter takes a scratch buffer */
		}
	}
	*out = p;
	return SD_OK;
}

void g_buf_free(struct sd_comm *c, void *ptr)
{
	if (c && c->prep.valid &&
	    (c->prep.sendbuf == ptr || c->prep.recvbuf == ptr))
		c->prep = sd_prepared(); /* Gloo buffers point into it */
	if (c) {
		auto it = c->allocs.find(ptr);
		const char *lo = static_cast<const char *>(ptr);
		size_t len = it != c->allocs.end() ? it->second : 1;
		const char *kb = static_cast<const char *>(c->rs.buf);
		if (kb >= lo && kb < lo + len)
			c->rs = {};
		if (it != c->allocs.end())
			c->allocs.erase(it);
	}
	free(ptr); /* to the heap, which keeps it (g_init) */
}

int g_fill(struct sd_comm *c, const struct sd_op_args *a, char *err,
	   size_t errlen)
{
	sd_pattern_fill_host(a, c->rank, c->size);
	c->prep.fresh = true;
	return SD_OK;
}

int g_verify(struct sd_comm *c, const struct sd_op_args *a, uint64_t *wrong,
	     struct sd_mismatch *first, char *err, size_t errlen)
{
	*wrong = sd_pattern_verify_host(a, c->rank, c->size, first);
	return SD_OK;
}

int g_corrupt(struct sd_comm *c, const struct sd_op_args *a, uint64_t index)
{
	sd_pattern_corrupt_host(a, index);
	return SD_OK;
}

const char *g_algo_name(enum sd_op op, int idx)
{
	const char *const *names = algos_of(op);
	if (!names || idx < 0)
		return nullptr;
	for (int i = 0; names[i]; i++)
		if (i == idx)
			return names[i];
	return nullptr;
}

int g_prepare(struct sd_comm *c, const struct sd_op_args *a, char *err,
	      size_t errlen)
{
	if (c->aborted) {
		put_err(err, errlen, "gloo: communicator aborted");
		return SD_ERR_CANCELLED;
	}
	return do_prepare(c, a, err, errlen);
}

int g_run(struct sd_comm *c, const struct sd_op_args *a, char *err,
	  size_t errlen)
{
	if (c->aborted) {
		put_err(err, errlen, "gloo: communicator aborted");
		return SD_ERR_CANCELLED;
	}
	if (a->send_count == 0 && a->recv_count == 0)
		return SD_OK;
	if (!same_args(c->prep, a)) {
		int rc = do_prepare(c, a, err, errlen);
		if (rc)
			return rc;
	}
	int tmo = a->timeout_ms > 0 ? a->timeout_ms : c->timeout_ms;
	std::function<void()> &fn = c->prep.fn;
	int algo = a->algo >= 0 ? a->algo
				: auto_algo(a->op,
					    std::max(a->send_count,
						     a->recv_count) *
						    sd_dtype_size(a->dtype),
					    c->size);
	Watchdog *wd = c->prep.legacy ? c->watchdog.get() : nullptr;
	try {
		if (wd)
			wd->arm(tmo);
		/* a failed run leaves it set: the next run shakes hands
		 * again, as every rank's run failed or will */
		fn();
		c->prep.fresh = false;
		if (wd && wd->disarm()) {
			/* it fired as the operation ended: the connections
			 * are being closed, so this one did not make it */
			put_err(err, errlen, describe(c, a, algo) +
						     ": timed out after " +
						     std::to_string(tmo) + " ms");
			return SD_ERR_TIMEOUT;
		}
		return SD_OK;
	} catch (...) {
		/* describe() only on the failure path: run() stays lean */
		bool late = wd && wd->disarm();
		std::string what = describe(c, a, algo);
		if (c->aborted) {
			put_err(err, errlen, what + ": communicator aborted");
			return SD_ERR_CANCELLED;
		}
		int rc = guarded(what, tmo, err, errlen, [] { throw; });
		/* late: woken by the watchdog's closing ("Application
		 * timeout ..."), or by a pair that had failed before this
		 * operation's buffers were made (Gloo never tells those: it
		 * ends at the pair's own timeout, and says why it failed) */
		if (late && rc == SD_ERR_TIMEOUT)
			put_err(err, errlen,
				what + ": timed out after " +
					std::to_string(tmo) +
					" ms; a peer did not take part");
		return rc;
	}
}

int g_wait(struct sd_comm *c, int timeout_ms, char *err, size_t errlen)
{
	return SD_OK; /* every operation completes inside run() */
}

int g_barrier(struct sd_comm *c, int timeout_ms, char *err, size_t errlen)
{
	int tmo = timeout_ms > 0 ? timeout_ms : c->timeout_ms;
	std::string what = "gloo barrier, rank " + std::to_string(c->rank) +
			   " of " + std::to_string(c->size);
	if (c->aborted) {
		put_err(err, errlen, what + ": communicator aborted");
		return SD_ERR_CANCELLED;
	}
	int rc = guarded(what, tmo, err, errlen, [&] {
		gloo::BarrierOptions o(c->ctx);
		o.setTimeout(std::chrono::milliseconds(tmo));
		gloo::barrier(o);
	});
	if (rc && c->aborted) {
		put_err(err, errlen, what + ": communicator aborted");
		return SD_ERR_CANCELLED;
	}
	return rc;
}

/*
 * Set the flag first, so that an operation woken by the closing sees it
 * and says SD_ERR_CANCELLED; then close both contexts (a split has its
 * own).  Peers waiting on this rank see their connection closed
 * (SD_ERR_PEER).  The contexts are only read here: they change only in
 * comm_destroy, which the caller never runs alongside abort().
 */
int g_algo_auto(const struct sd_op_args *a, int nranks)
{
	size_t bytes = std::max(a->send_count, a->recv_count) *
		       sd_dtype_size(a->dtype);
	return auto_algo(a->op, bytes, nranks);
}

void g_abort(struct sd_comm *c)
{
	if (!c)
		return;
	c->aborted = true;
	close_pairs(c->ctx);
	close_pairs(c->lctx);
}

} // namespace

extern "C" {
extern const struct sd_backend_ops shakedown_backend;
const struct sd_backend_ops shakedown_backend = {
	SD_BACKEND_IDENTITY("gloo", SD_GLOO_VERSION),
	.dtypes = (1u << SD_FLOAT32) | (1u << SD_FLOAT64) | (1u << SD_FLOAT16) |
		  (1u << SD_INT8) | (1u << SD_UINT8) | (1u << SD_INT32) |
		  (1u << SD_INT64),
	.redops = (1u << SD_SUM) | (1u << SD_PROD) | (1u << SD_MIN) |
		  (1u << SD_MAX) | (1u << SD_AVG),
	.ops = (1u << SD_OP_COUNT) - 1,
	.init = g_init,
	.fini = g_fini,
	.comm_create = g_comm_create,
	.comm_split = g_comm_split,
	.comm_rank = g_comm_rank,
	.comm_size = g_comm_size,
	.comm_destroy = g_comm_destroy,
	.describe_device = g_describe_device,
	.buf_alloc = g_buf_alloc,
	.buf_free = g_buf_free,
	.fill = g_fill,
	.verify = g_verify,
	.corrupt = g_corrupt,
	.algo_name = g_algo_name,
	.prepare = g_prepare,
	.run = g_run,
	.wait = g_wait,
	.barrier = g_barrier,
	.abort = g_abort,
	.iter_times = nullptr, /* host timing after wait() */
	.describe_links = nullptr, /* CPUs: the NUMA layout is the topology */
	.algo_auto = g_algo_auto,
	.env_check = nullptr, /* no NCCL: the core refuses a test's env */
	.gemm = nullptr, /* host CPUs: shakedown gemm's core multiplies */
};
}
