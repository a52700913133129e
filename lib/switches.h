/*
 * switches.h - which leaf switch (or rack) each host of a job hangs from.
 *
 * node-pairs:adaptive chooses pairs of nodes within one switch and across
 * switches, so it needs each host's leaf switch.  Two sources say it:
 *
 *   Slurm's topology.conf (the topology/tree plugin), next to slurm.conf:
 *
 *       # leaf switches, and the one above them
 *       SwitchName=s0 Nodes=node[01-04] LinkSpeed=100
 *       SwitchName=s1 Nodes=node[05-08]
 *       SwitchName=top Switches=s[0-1]
 *
 *     A line with Nodes= names a leaf switch and its hosts; a line with
 *     only Switches= is a switch above the leaves and gives no host.  '#'
 *     starts a comment, a backslash at the end of a line continues it on
 *     the next, keys are read in any case and other keys (LinkSpeed=) are
 *     ignored.  Lines without SwitchName= (topology/block's BlockName=)
 *     are ignored as well.
 *
 *   A plan's map, switches: {s0: "node[01-04]", s1: "node[05-08]"}, which
 *   lib/plan.c keeps as the text "s0=node[01-04] s1=node[05-08]": items
 *   NAME=HOSTLIST apart by whitespace or commas (a comma inside brackets
 *   belongs to the hostlist, and a name with no '=' after a comma goes on
 *   the hostlist before it: s0=node1,node2).
 *
 * Hostlists are expanded by lib/hostlist.c.  Only the hosts of the job
 * count: hosts of the text that are not in the job are skipped (a
 * topology.conf lists the whole cluster), and a host of the job that no
 * switch holds is under none (-1).  A host of the job under two switches
 * is an error: a host hangs from one leaf switch.
 *
 * Reads text and files, never prints, never exits.
 */
#ifndef SD_SWITCHES_H
#define SD_SWITCHES_H

#include <stddef.h>

/* Each host's switch.  Free with sd_switches_free. */
struct sd_switches {
	int nhosts;
	int *switch_of; /* per host: index into names, -1: under no switch */
	int nswitches;
	char **names; /* the switches that hold at least one host of the job,
			 in the order they first appear in the text */
};

/*
 * Read text: a topology.conf (conf 1) or a plan's map (conf 0), `where`
 * naming it in messages (a path, "the plan's switches"; NULL: a default),
 * for the job's hosts hosts[0..nhosts).  Fills *out, which the caller
 * frees with sd_switches_free (a text that names no switch of the job
 * gives nswitches 0 and every host -1).  Returns SD_OK; SD_ERR_INVALID
 * with err (errlen bytes) naming the problem and its fix: a host of the
 * job under two switches, a malformed item or hostlist; SD_ERR_NOMEM when
 * memory runs out.  On an error *out is left empty.
 */
int sd_switches_parse(const char *text, int conf, const char *where,
		      const char *const *hosts, int nhosts,
		      struct sd_switches *out, char *err, size_t errlen);

/*
 * The topology.conf of this machine's Slurm: in the directory of
 * $SLURM_CONF (set by Slurm in a job, configless clusters included), else
 * of /etc/slurm/slurm.conf.  Fills path (len bytes); returns 1 when that
 * file exists and can be read, else 0.
 */
int sd_switches_conf_path(char *path, size_t len);

/*
 * Read the topology.conf at path as sd_switches_parse (conf 1) reads its
 * text, messages naming path.  A file that cannot be read is an error
 * here (SD_ERR_IO; callers ask sd_switches_conf_path first).
 */
int sd_switches_read_conf(const char *path, const char *const *hosts,
			  int nhosts, struct sd_switches *out, char *err,
			  size_t errlen);

/* Free what *s holds and empty it (an empty one is fine). */
void sd_switches_free(struct sd_switches *s);

#endif
