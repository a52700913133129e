/*
 * train_fixture.c - record a made-up training run through the real
 * recorder (sd_train_rec_*), exactly as `shakedown train` records one, so
 * that `shakedown reference` and `shakedown report` can be tested against
 * a real database file with known answers.
 *
 *   train_fixture [options] DB
 *     -c CONFIG    the workload config ("gpt2 layers=1 width=50 seq=100")
 *     -n STEPS     steps 1 to STEPS (12)
 *     -o OFFSET    added to every loss (0)
 *     -b STEP:D    D added to the loss of step STEP (none)
 *     -r NAME      judge the run against reference NAME of DB (with the
 *                  default tolerances) and record the verdict
 *
 * Step k's loss is 5 - 0.01 k + OFFSET, less 0.5 at step 7 (so that the
 * lowest loss is not the last), plus D at STEP.  Every step takes 0.5 s:
 * 0.3 s compute, 0.1 s waiting for the gradient all_reduce, 0.05 s in the
 * optimizer.  The facts: 2 devices, sequence length 100, 4096 tokens per
 * step, 990,000 parameters, 1 layer of width 50 (the workload's), 2
 * warm-up steps and a peak of 0.1 TFLOP/s (given), so that
 *   flops per token = 6 x 990000 + 12 x 1 x 50 x 100 = 6,000,000,
 *   tgs = 4096 / 0.5 / 2 = 4096 tokens/s/device over steps 4 to 12,
 *   TFLOPs = 6e6 x 4096 / 1e12 = 0.024576, MFU = 0.24576.
 * Prints the run's UUID.  Exits 0; 1 when the run was judged and failed;
 * 2 for a bad option; 3 when the database failed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/train_db.h"
#include "train/metrics.h"
#include "train/reference.h"

#define MAX_STEPS 1000

static void fact(struct sd_train_fact *f, double v, enum sd_train_origin o)
{
	f->value = v;
	f->origin = o;
}

int main(int argc, char **argv)
{
	const char *config = "gpt2 layers=1 width=50 seq=100", *refname = NULL;
	long nsteps = 12, bump_step = -1;
	double offset = 0.0, bump = 0.0;
	int c;
	while ((c = getopt(argc, argv, "c:n:o:b:r:")) != -1) {
		char *end;
		switch (c) {
		case 'c': config = optarg; break;
		case 'n':
			nsteps = strtol(optarg, &end, 10);
			if (*end || nsteps < 1 || nsteps > MAX_STEPS) {
				fprintf(stderr, "train_fixture: -n takes 1 to "
					"%d\n", MAX_STEPS);
				return 2;
			}
			break;
		case 'o':
			offset = strtod(optarg, &end);
			if (*end) {
				fprintf(stderr, "train_fixture: bad -o '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'b':
			bump_step = strtol(optarg, &end, 10);
			if (*end != ':' ||
			    (bump = strtod(end + 1, &end), *end)) {
				fprintf(stderr, "train_fixture: -b takes "
					"STEP:DELTA\n");
				return 2;
			}
			break;
		case 'r': refname = optarg; break;
		default:
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: train_fixture [-c CONFIG] [-n STEPS] "
			"[-o OFFSET] [-b STEP:D] [-r REF] DB\n");
		return 2;
	}
	const char *path = argv[optind];

	static struct sd_train_step s[MAX_STEPS];
	for (long i = 0; i < nsteps; i++) {
		long k = i + 1;
		s[i] = (struct sd_train_step){
			.step = k, .rank = -1,
			.has = SD_STEP_LOSS | SD_STEP_TIME | SD_STEP_COMPUTE |
			       SD_STEP_COMM | SD_STEP_OPTIM,
			.loss = 5.0 - 0.01 * (double)k + offset -
				(k == 7 ? 0.5 : 0.0) +
				(k == bump_step ? bump : 0.0),
			.step_s = 0.5, .compute_s = 0.3, .comm_s = 0.1,
			.optim_s = 0.05,
		};
	}
	struct sd_train_facts f;
	sd_train_facts_init(&f);
	fact(&f.devices, 2, SD_TRAIN_WORKLOAD);
	fact(&f.seq_len, 100, SD_TRAIN_WORKLOAD);
	fact(&f.tokens_per_step, 4096, SD_TRAIN_WORKLOAD);
	fact(&f.params, 990000, SD_TRAIN_WORKLOAD);
	fact(&f.layers, 1, SD_TRAIN_WORKLOAD);
	fact(&f.width, 50, SD_TRAIN_WORKLOAD);
	fact(&f.warmup_steps, 2, SD_TRAIN_GIVEN);
	fact(&f.peak_tflops, 0.1, SD_TRAIN_GIVEN);
	snprintf(f.device_name, sizeof(f.device_name), "CPU (Gloo TCP)");
	f.device_name_origin = SD_TRAIN_WORKLOAD;
	f.precision = SD_TRAIN_FP32;

	char err[4600], note[512];
	struct sd_train_summary sum;
	if (sd_train_summarize(s, (size_t)nsteps, &f, &sum, err,
			       sizeof(err)) != SD_OK) {
		fprintf(stderr, "train_fixture: %s\n", err);
		return 2;
	}
	struct sd_train_comparison cmp;
	int judged = 0;
	if (refname) {
		sqlite3 *db = NULL;
		struct sd_train_reference ref;
		memset(&ref, 0, sizeof(ref));
		int rc = sd_db_open(path, 0, &db, err, sizeof(err));
		if (rc == SD_OK)
			rc = sd_train_db_ref_load(db, refname, &ref, err,
						  sizeof(err));
		if (rc == SD_OK)
			rc = sd_train_compare(s, (size_t)nsteps, config, &ref,
					      NULL, &cmp, err, sizeof(err));
		sd_train_ref_free(&ref);
		sd_db_close(db);
		if (rc != SD_OK) {
			fprintf(stderr, "train_fixture: %s\n", err);
			return rc == SD_ERR_INVALID ? 2 : 3;
		}
		judged = 1;
	}
	int pass = !judged || cmp.verdict == SD_TRAIN_PASSED;

	struct sd_train_rec *r = NULL;
	if (sd_train_rec_open(path, 0, &r, note, sizeof(note), err,
			      sizeof(err)) != SD_OK) {
		fprintf(stderr, "train_fixture: %s\n", err);
		return 3;
	}
	struct sd_train_run_info info = {
		.kind = "train", .command_line = "train_fixture",
		.tool_version = "test", .backend = "gloo", .nranks = 2,
		.config = config, .facts = &f,
	};
	int rc = sd_train_rec_begin(r, &info, err, sizeof(err));
	/* in two batches, as a training loop hands them over */
	size_t half = (size_t)nsteps / 2;
	if (rc == SD_OK && half)
		rc = sd_train_rec_steps(r, s, half, err, sizeof(err));
	if (rc == SD_OK)
		rc = sd_train_rec_steps(r, s + half, (size_t)nsteps - half,
					err, sizeof(err));
	struct sd_train_end end = {
		.status = pass ? "passed" : "failed",
		.exit_status = pass ? 0 : 1,
		.message = pass ? NULL : cmp.reason,
		.summary = &sum, .cmp = judged ? &cmp : NULL,
		.reference_name = refname, .lines_unparsed = -1,
	};
	if (rc == SD_OK)
		rc = sd_train_rec_finish(r, &end, err, sizeof(err));
	if (rc != SD_OK) {
		fprintf(stderr, "train_fixture: %s\n", err);
		sd_train_rec_close(r);
		return 3;
	}
	printf("%s\n", sd_train_rec_uuid(r));
	sd_train_rec_close(r);
	return pass ? 0 : 1;
}
