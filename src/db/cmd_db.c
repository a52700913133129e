/*
 * cmd_db.c - the commands that read the results database: report,
 * history, compare and db.
 */
#include "config.h"

#include <stdio.h>

#include "commands.h"
#include "util.h"

int cmd_report(int argc, char **argv) { return SD_EXIT_USAGE; }
int cmd_history(int argc, char **argv) { return SD_EXIT_USAGE; }
int cmd_compare(int argc, char **argv) { return SD_EXIT_USAGE; }
int cmd_db(int argc, char **argv) { return SD_EXIT_USAGE; }
