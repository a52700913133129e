/*
 * commands.h - the subcommands of `shakedown`, one function each.
 *
 * Each takes the arguments after the command name (argv[0] is the command
 * name) and returns the process exit status (see shakedown(1)).  They are
 * listed in one table in main.c together with the setup they need.
 */
#ifndef SD_COMMANDS_H
#define SD_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_help(int argc, char **argv);
void cmd_run_usage(FILE *out);

/* results database commands (src/db/) */
int cmd_report(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_db(int argc, char **argv);

/* report upload (src/upload/) */
int cmd_upload(int argc, char **argv);

#endif
