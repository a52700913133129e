/*
 * commands.h - the subcommands of `shakedown`, one function each.
 *
 * Each takes the arguments after the command name (argv[0] is the command
 * name) and returns the process exit status (see shakedown(1)).  They are
 * listed in one table, src/commands.c, with what each needs.
 */
#ifndef SD_COMMANDS_H
#define SD_COMMANDS_H

#include <stdio.h>

/* What a command needs, git's RUN_SETUP idea: the flags column of the
 * command table.  They say which shared options (job_options.h) the
 * command takes. */
enum sd_command_flag {
	/* starts ranks: --local --backend --iface --timeout, the job
	 * lifecycle (job.h) */
	SD_CMD_RANKS = 1 << 0,
	/* records a run: --db */
	SD_CMD_DB = 1 << 1,
	/* started by shakedown itself (a test's worker process), not listed
	 * in the help */
	SD_CMD_INTERNAL = 1 << 2,
};

struct sd_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	unsigned flags; /* enum sd_command_flag */
};

/* The command table, ending with a row whose name is NULL. */
extern const struct sd_command sd_commands[];

/* The row of command NAME, or NULL. */
const struct sd_command *sd_command_find(const char *name);

/* The flags of command NAME (0 for a name not in the table). */
unsigned sd_command_flags(const char *name);

int cmd_run(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_gemm(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_worker(int argc, char **argv);
void cmd_run_usage(FILE *out);

/* results database commands (src/db/) */
int cmd_runs(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_db(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_reference(int argc, char **argv);

/* report upload (src/upload/) */
int cmd_upload(int argc, char **argv);

/*
 * The text `shakedown help CMD` (and `shakedown CMD --help`) prints, one
 * per command: src/help/CMD.txt, compiled in by src/src.am as
 * src/help/help_text.c.  The same files give shakedown(1) its option lists.
 */
extern const char sd_help_exit[];
extern const char sd_help_run[];
extern const char sd_help_runs[];
extern const char sd_help_report[];
extern const char sd_help_history[];
extern const char sd_help_compare[];
extern const char sd_help_db[];
extern const char sd_help_baseline[];
extern const char sd_help_reference[];
extern const char sd_help_upload[];
extern const char sd_help_plan[];
extern const char sd_help_topo[];
extern const char sd_help_gemm[];
extern const char sd_help_train[];
extern const char sd_help_ingest[];

#endif
