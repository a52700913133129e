/*
 * unit_switches.c - each host's leaf switch (lib/switches.c): a
 * real-looking topology.conf of three leaf switches and one above them
 * read for a job of some of its hosts in shuffled order; a plan's map; a
 * host under two switches; malformed hostlists and items; a text with no
 * SwitchName=; and the path of topology.conf next to $SLURM_CONF, in a
 * temporary folder.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shakedown/backend.h"
#include "switches.h"
#include "tap.h"

static const char *CONF =
	"# topology.conf - Slurm's topology/tree plugin\n"
	"#\n"
	"# three leaf switches of four nodes, one switch above them\n"
	"SwitchName=s0 Nodes=node[01-04] LinkSpeed=100\n"
	"switchname=s1 \\\n"
	"\tnodes=node[05-08]   # continued from the line before\n"
	"\n"
	"SWITCHNAME=s2 NODES=node[09-12] linkspeed=200\n"
	"SwitchName=top Switches=s[0-2]\n";

/* The switch name of host h, "-" for none. */
static const char *sw(const struct sd_switches *s, int h)
{
	int i = s->switch_of[h];
	return i < 0 ? "-" : s->names[i];
}

static void test_conf(void)
{
	const char *hosts[] = { "node10", "node02", "node07", "node99",
				"node01", "node12", "node05" };
	const char *want[] = { "s2", "s0", "s1", "-", "s0", "s2", "s1" };
	struct sd_switches s;
	char err[256];
	int same = 1;

	is_int(sd_switches_parse(CONF, 1, "topology.conf", hosts, 7, &s, err,
				 sizeof(err)),
	       SD_OK, "topology.conf read for 7 shuffled hosts");
	is_int(s.nhosts, 7, "7 hosts");
	is_int(s.nswitches, 3,
	       "3 leaf switches hold hosts of the job (top holds none)");
	ok(s.nswitches == 3 && !strcmp(s.names[0], "s0") &&
		   !strcmp(s.names[1], "s1") && !strcmp(s.names[2], "s2"),
	   "named s0, s1, s2 in the order of the file");
	for (int h = 0; h < 7; h++)
		if (strcmp(sw(&s, h), want[h])) {
			same = 0;
			printf("#   %s: got %s, want %s\n", hosts[h], sw(&s, h),
			       want[h]);
		}
	ok(same, "each host under its switch (a continued line, any case "
		 "of the keys, LinkSpeed= ignored)");
	is_int(s.switch_of[3], -1, "node99, under no switch, is -1");
	sd_switches_free(&s);
	ok(!s.names && !s.switch_of && !s.nswitches, "freed and emptied");
	sd_switches_free(&s);

	/* A job on s1 and s2 only: s0 is not one of its switches. */
	const char *two[] = { "node11", "node06" };
	is_int(sd_switches_parse(CONF, 1, NULL, two, 2, &s, err, sizeof(err)),
	       SD_OK, "the same file for a job on s1 and s2");
	ok(s.nswitches == 2 && !strcmp(s.names[0], "s1") &&
		   !strcmp(s.names[1], "s2") && s.switch_of[0] == 1 &&
		   s.switch_of[1] == 0,
	   "only the switches holding its hosts, s1 then s2");
	sd_switches_free(&s);
}

static void test_map(void)
{
	const char *hosts[] = { "node4", "node1", "node6", "node7" };
	struct sd_switches s;
	char err[256];

	is_int(sd_switches_parse("rackA=node[1-3] rackB=node[4-6]", 0,
				 "the plan's switches", hosts, 4, &s, err,
				 sizeof(err)),
	       SD_OK, "a plan's map of two racks");
	ok(s.nswitches == 2 && !strcmp(s.names[0], "rackA") &&
		   !strcmp(s.names[1], "rackB"),
	   "rackA, rackB");
	ok(!strcmp(sw(&s, 0), "rackB") && !strcmp(sw(&s, 1), "rackA") &&
		   !strcmp(sw(&s, 2), "rackB") && s.switch_of[3] == -1,
	   "node4 rackB, node1 rackA, node6 rackB, node7 none");
	sd_switches_free(&s);

	is_int(sd_switches_parse("rackA=node1,node[2-3],rackB=node[4,6],node5",
				 0, NULL, hosts, 4, &s, err, sizeof(err)),
	       SD_OK, "items apart by commas, hostlists with commas");
	ok(s.nswitches == 2 && !strcmp(sw(&s, 0), "rackB") &&
		   !strcmp(sw(&s, 1), "rackA") && !strcmp(sw(&s, 2), "rackB"),
	   "the same racks");
	sd_switches_free(&s);
}

static void test_errors(void)
{
	const char *hosts[] = { "node1", "node3" };
	struct sd_switches s;
	char err[256];
	int rc;

	rc = sd_switches_parse("SwitchName=s0 Nodes=node[1-4]\n"
			       "SwitchName=s1 Nodes=node[3-6]\n",
			       1, "/etc/slurm/topology.conf", hosts, 2, &s, err,
			       sizeof(err));
	is_int(rc, SD_ERR_INVALID, "a host under two switches is refused");
	ok(strstr(err, "node3 is under switch s0 and s1") &&
		   strstr(err, "/etc/slurm/topology.conf") &&
		   strstr(err, "line 2") && strstr(err, "one leaf switch"),
	   "the message names the host, both switches, the file and line: "
	   "%s",
	   err);
	ok(!s.switch_of && !s.names && !s.nswitches, "nothing left to free");

	rc = sd_switches_parse("SwitchName=s0 Nodes=node[1-4]\n"
			       "SwitchName=s1 Nodes=node[4-6]\n",
			       1, NULL, hosts, 2, &s, err, sizeof(err));
	is_int(rc, SD_OK,
	       "a host under two switches, not the job's, is no problem");
	sd_switches_free(&s);

	rc = sd_switches_parse("a=node[1-3] b=node3", 0, "the plan's switches",
			       hosts, 2, &s, err, sizeof(err));
	is_int(rc, SD_ERR_INVALID, "in a plan's map too");
	ok(strstr(err, "node3 is under switch a and b in the plan's "
		       "switches"),
	   "%s", err);

	rc = sd_switches_parse("SwitchName=s0 Nodes=node[1-4]\n"
			       "SwitchName=s1 Nodes=node[5-\n",
			       1, "topology.conf", hosts, 2, &s, err,
			       sizeof(err));
	is_int(rc, SD_ERR_INVALID, "a malformed hostlist is refused");
	ok(strstr(err, "switch s1") && strstr(err, "line 2") &&
		   strstr(err, "node[5-") && strstr(err, "no ']'"),
	   "the message names the switch, the line and the list: %s", err);

	rc = sd_switches_parse("SwitchName=s0 Nodes=node[1-1000000]", 1, NULL,
			       hosts, 2, &s, err, sizeof(err));
	is_int(rc, SD_ERR_INVALID, "a hostlist of a million names is refused");
	ok(strstr(err, "more than"), "%s", err);

	rc = sd_switches_parse("SwitchName=s0 Nodes=node1 node2", 1, NULL,
			       hosts, 2, &s, err, sizeof(err));
	is_int(rc, SD_ERR_INVALID, "a word that is not KEY=VALUE");
	ok(strstr(err, "'node2'") && strstr(err, "KEY=VALUE"), "%s", err);

	rc = sd_switches_parse("SwitchName= Nodes=node1", 1, NULL, hosts, 2, &s,
			       err, sizeof(err));
	is_int(rc, SD_ERR_INVALID, "a switch with no name");

	const char *items[] = { "rackA",
				"rackA=",
				"=node1",
				"a=b=c",
				"rackA=node1 node2",
				"rackA=node[1-" };
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		rc = sd_switches_parse(items[i], 0, "the plan's switches",
				       hosts, 2, &s, err, sizeof(err));
		ok(rc == SD_ERR_INVALID && strstr(err, "the plan's switches"),
		   "map '%s' refused: %s", items[i], err);
	}
}

static void test_no_switch(void)
{
	const char *hosts[] = { "node1", "node2" };
	struct sd_switches s;
	char err[256];

	is_int(sd_switches_parse("# topology/block, no switch\n"
				 "BlockName=b1 Nodes=node[1-4]\n"
				 "BlockSizes=4\n",
				 1, NULL, hosts, 2, &s, err, sizeof(err)),
	       SD_OK, "a text with no SwitchName= is read");
	ok(s.nswitches == 0 && s.switch_of[0] == -1 && s.switch_of[1] == -1,
	   "no switch: every host -1");
	sd_switches_free(&s);

	is_int(sd_switches_parse("", 0, NULL, hosts, 2, &s, err, sizeof(err)),
	       SD_OK, "an empty map");
	ok(s.nswitches == 0 && s.switch_of[0] == -1, "every host -1");
	sd_switches_free(&s);

	is_int(sd_switches_parse(CONF, 1, NULL, NULL, 0, &s, err, sizeof(err)),
	       SD_OK, "a job of no host");
	is_int(s.nswitches, 0, "no switch");
	sd_switches_free(&s);
}

static void test_conf_path(void)
{
	const char *tmp = getenv("TMPDIR");
	char dir[512], slurm_conf[600], topo[600], path[700], err[700];
	const char *hosts[] = { "node03", "node09" };
	struct sd_switches s;
	const char *old = getenv("SLURM_CONF");
	char *saved = old ? strdup(old) : NULL;

	snprintf(dir, sizeof(dir), "%s/unit_switches.XXXXXX",
		 tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp %s", dir);
		free(saved);
		return;
	}
	snprintf(slurm_conf, sizeof(slurm_conf), "%s/slurm.conf", dir);
	snprintf(topo, sizeof(topo), "%s/topology.conf", dir);
	setenv("SLURM_CONF", slurm_conf, 1);

	is_int(sd_switches_conf_path(path, sizeof(path)), 0,
	       "no topology.conf next to $SLURM_CONF yet");
	is_int(strcmp(path, topo), 0, "its path: %s", path);
	is_int(sd_switches_read_conf(path, hosts, 2, &s, err, sizeof(err)),
	       SD_ERR_IO, "reading a missing file is an error");
	ok(strstr(err, path) != NULL, "naming it: %s", err);

	FILE *f = fopen(topo, "w");
	if (f) {
		fputs(CONF, f);
		fclose(f);
	}
	is_int(sd_switches_conf_path(path, sizeof(path)), 1,
	       "topology.conf found next to $SLURM_CONF");
	is_int(sd_switches_read_conf(path, hosts, 2, &s, err, sizeof(err)),
	       SD_OK, "and read");
	ok(s.nswitches == 2 && !strcmp(sw(&s, 0), "s0") &&
		   !strcmp(sw(&s, 1), "s2"),
	   "node03 under s0, node09 under s2");
	sd_switches_free(&s);

	is_int(sd_switches_conf_path(path, 8), 0,
	       "a path that does not fit is not found");

	unsetenv("SLURM_CONF");
	sd_switches_conf_path(path, sizeof(path));
	is_int(strcmp(path, "/etc/slurm/topology.conf"), 0,
	       "without $SLURM_CONF: %s", path);

	if (saved)
		setenv("SLURM_CONF", saved, 1);
	free(saved);
	unlink(topo);
	ok(rmdir(dir) == 0, "the temporary folder removed");
}

int main(void)
{
	test_conf();
	test_map();
	test_errors();
	test_no_switch();
	test_conf_path();
	return done_testing();
}
