/*
 * envvars.h - the one table of the SHAKEDOWN_* environment variables:
 * each one's name, what it takes and its accepted range.  The checks
 * every command makes before it starts (sd_env_check_all) and the readers
 * of numeric variables (sd_env_seconds, sd_env_long) use it, so a value
 * is accepted or refused the same way everywhere; man/shakedown.1.in's
 * ENVIRONMENT section lists the same names and ranges (checked by
 * test/system/env_vars.t).
 */
#ifndef SD_ENVVARS_H
#define SD_ENVVARS_H

#include <stddef.h>

enum sd_env_kind {
	SD_ENV_ANY,	  /* any text (paths, names); only read */
	SD_ENV_INT,	  /* a whole number from min to max */
	SD_ENV_SECONDS,	  /* seconds: a number above min, at most max */
	SD_ENV_CHOICE,	  /* one of the '|'-separated words in range */
	SD_ENV_FILE,	  /* a readable regular file */
	SD_ENV_PROGRAM,	  /* a program: a name on PATH or an executable */
	SD_ENV_IFACE,	  /* a network interface name */
	SD_ENV_IPV4,	  /* a dotted IPv4 address */
	SD_ENV_URL,	  /* an http:// or https:// URL (sd_upload_check_url) */
	SD_ENV_FAULT,	  /* a fault specification (sd_fault_parse) */
	SD_ENV_NCCL_HANG, /* hang=RANK */
};

enum sd_env_flag {
	SD_ENV_SECRET = 1 << 0,	  /* never repeat the value in a message */
	SD_ENV_INTERNAL = 1 << 1, /* set by shakedown itself (--local) */
};

struct sd_env_var {
	const char *name;
	enum sd_env_kind kind;
	double min, max;   /* SD_ENV_INT and SD_ENV_SECONDS */
	const char *range; /* the accepted values, as the man page says */
	const char *example; /* a good value, for the fix in a message */
	unsigned flags;	     /* enum sd_env_flag */
};

/* The table, ending with a row whose name is NULL. */
extern const struct sd_env_var sd_env_vars[];

/* The row of variable NAME, or NULL. */
const struct sd_env_var *sd_env_find(const char *name);

/* Check VALUE for variable V.  Returns SD_OK, or SD_ERR_INVALID with err
 * naming the variable, the value (not a secret's), the accepted range
 * and the fix. */
int sd_env_check(const struct sd_env_var *v, const char *value, char *err,
		 size_t errlen);

/* Check every variable of the table that is set and not empty.  Returns
 * SD_OK, or SD_ERR_INVALID with err (as sd_env_check) for the first bad
 * one. */
int sd_env_check_all(char *err, size_t errlen);

/* Read variable NAME (a SD_ENV_SECONDS row) into *out; unset or empty
 * leaves *out alone.  Returns SD_OK or SD_ERR_INVALID (as sd_env_check). */
int sd_env_seconds(const char *name, double *out, char *err, size_t errlen);

/* Read variable NAME (a SD_ENV_INT row) into *out, as sd_env_seconds. */
int sd_env_long(const char *name, long *out, char *err, size_t errlen);

#endif
