/*
 * worker.h - a test in processes of its own: the transport variants.
 *
 * NCCL reads NCCL_P2P_DISABLE, NCCL_SHM_DISABLE, NCCL_NET,
 * NCCL_SOCKET_IFNAME and most of its settings once per process, and Gloo's
 * plugin its interface; a test that asks for another path (a plan's
 * transport, iface or process_env) therefore runs in a worker process
 * that each rank starts for it with those settings in its environment.
 *
 * The rank stays what it is: it keeps its place in the control plane
 * (progress, hang detection, the exchange of results, the verdicts) and
 * lends the worker its bootstrap: the worker's backend builds its
 * communicators with allgather, bcast and barrier calls that the rank
 * carries out on its own bootstrap, in the same order on every rank.
 * The worker only measures: sd_measure_local in its process (the same
 * code between the same clock readings as in the rank), its result sent
 * back as bytes.  So it works alike under --local and srun, and one run
 * holds every variant's tests.
 *
 * A worker that dies is named with its rank, host and variant ("the tcp
 * worker process of rank 3 (node2) was killed by signal 9"); one that
 * does not answer within the test's timeout is killed and named the same
 * way.  An abort of the rank kills its worker.
 *
 * The messages are raw structs: the worker is this same executable
 * (/proc/self/exe), started as `shakedown worker`.
 */
#ifndef SD_WORKER_H
#define SD_WORKER_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "shakedown/backend.h"
#include "measure.h"

struct sd_worker;

/* How to start one. */
struct sd_worker_spec {
	const char *exe;     /* this program: /proc/self/exe */
	const char *backend; /* the plugin's name: "gloo", "nccl" */
	const char *env;     /* "NAME=VALUE ..." set in its environment */
	const char *variant; /* its name in messages: "tcp eth1" */
	int timeout_ms;	     /* the longest one request may take */
	volatile sig_atomic_t *cancel; /* stop waiting when set; may be
					  NULL */
};

/*
 * Start a worker for this rank (bs: the rank's bootstrap, lent to it for
 * every call after this one).  Returns SD_OK or a status with err saying
 * why.
 */
int sd_worker_start(const struct sd_worker_spec *spec, struct sd_bootstrap *bs,
		    struct sd_worker **out, char *err, size_t errlen);

/*
 * The worker's world communicator, made with cfg (collective: every
 * rank's worker at once).  *out is a communicator of sd_worker_ops.
 */
int sd_worker_comm_create(struct sd_worker *w, const struct sd_comm_config *cfg,
			  struct sd_comm **out, char *err, size_t errlen);

/*
 * The backend table of a worker's communicators: comm_split, comm_rank,
 * comm_size, comm_destroy, buf_alloc, buf_free and abort, each carried
 * out in the worker; the rest are NULL (measurements go through
 * sd_worker_measure).
 */
extern const struct sd_backend_ops sd_worker_ops;

/*
 * sd_measure_local on the worker's communicator comm (one of
 * sd_worker_ops), in the worker.  iter_us holds m->iters entries when
 * m->per_iter.  Returns what it returned, with *step and err, or the
 * worker's death or silence.
 */
int sd_worker_measure(struct sd_comm *comm, struct sd_op_args *a,
		      const struct sd_measure_spec *m,
		      const struct sd_measure_fault *f,
		      struct sd_rank_result *res, double *iter_us,
		      const char **step, char *err, size_t errlen);

/* Its process id (its sockets are read for the proof of a test's path,
 * path_proof.h); -1 once it has ended or for NULL. */
pid_t sd_worker_pid(const struct sd_worker *w);

/* Ask it to end and wait for it (killed when it does not end in a few
 * seconds); frees w.  NULL is a no-op. */
void sd_worker_stop(struct sd_worker *w);

/*
 * The worker's side, `shakedown worker`: serve the rank on fd with the
 * loaded backend ops until it asks to end or goes away.  rank..host
 * describe the rank (the worker's bootstrap); exit_fn ends the process
 * for a planted exit fault (struct sd_fault).  Returns SD_OK, or a status
 * with err saying why it stopped.
 */
int sd_worker_serve(int fd, const struct sd_backend_ops *ops, int rank,
		    int size, int local_rank, int local_size, const char *host,
		    void (*exit_fn)(int status), char *err, size_t errlen);

#endif
