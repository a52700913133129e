/*
 * commands.c - the one table of `shakedown`'s commands (see commands.h):
 * name, function, the summary `shakedown help` prints, and what each
 * needs.
 */
#include "config.h"

#include <string.h>

#include "commands.h"

const struct sd_command sd_commands[] = {
	{ "run", cmd_run, "run a test plan and check every result",
	  SD_CMD_RANKS | SD_CMD_DB },
	{ "plan", cmd_plan, "check a plan file, or show what it expands to",
	  0 },
	{ "topo", cmd_topo, "the job's hosts, devices, links and interfaces",
	  SD_CMD_RANKS },
	{ "gemm", cmd_gemm, "matrix-multiply TFLOPs of every device, judged",
	  SD_CMD_RANKS | SD_CMD_DB },
	{ "train", cmd_train,
	  "fine-tuning workload: tgs, TFLOPs, loss vs reference",
	  SD_CMD_RANKS | SD_CMD_DB },
	{ "ingest", cmd_ingest,
	  "judge a training log: tgs, TFLOPs, loss vs reference", 0 },
	{ "runs", cmd_runs, "list the recorded runs: plan, nodes, outcome", 0 },
	{ "report", cmd_report, "show a recorded run and its verdicts", 0 },
	{ "history", cmd_history, "bus bandwidth of one operation over time",
	  0 },
	{ "compare", cmd_compare, "compare two runs and flag regressions", 0 },
	{ "db", cmd_db, "results database: info, migrate, check", 0 },
	{ "baseline", cmd_baseline, "named baselines to judge runs against",
	  0 },
	{ "reference", cmd_reference,
	  "reference loss curves to judge training runs against", 0 },
	{ "upload", cmd_upload, "send run reports to a collector; the outbox",
	  0 },
	{ "help", cmd_help, "show help for shakedown or one command", 0 },
	{ "version", cmd_version, "print the version", 0 },
	{ "worker", cmd_worker,
	  "a test's worker process, started by a rank (lib/worker.h)",
	  SD_CMD_INTERNAL },
	{ NULL, NULL, NULL, 0 }
};

const struct sd_command *sd_command_find(const char *name)
{
	for (const struct sd_command *c = sd_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

unsigned sd_command_flags(const char *name)
{
	const struct sd_command *c = sd_command_find(name);
	return c ? c->flags : 0;
}
