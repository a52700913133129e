/*
 * commands.h - the subcommands of `shakedown`, one function each.
 *
 * Each takes the arguments after the command name (argv[0] is the command
 * name) and returns the process exit status (see shakedown(1)).  They are
 * listed in one table in main.c.
 */
#ifndef SD_COMMANDS_H
#define SD_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_gemm(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_help(int argc, char **argv);
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
