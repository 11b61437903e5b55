// SPDX-License-Identifier: GPL-2.0
/*
 * scif-info: show the local SCIF node, the nodes it knows (state, bus,
 * generation, heartbeat age and traffic counters, from sysfs, readable by
 * any user) and the endpoints open (from debugfs, root only), as text or
 * as one JSON object (--json).  See scif-info(8) and
 * Documentation/scif/observability.rst.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scif.h>

#include "json.h"

#define DEBUGFS_DIR	"/sys/kernel/debug/scif"
#define SYSFS_DIR	"/sys/class/misc/scif"
#define MAX_NODES	64

static const char *const counters[] = {
	"tx_bytes", "tx_msgs", "rx_bytes", "rx_msgs", "rma_ops", "rma_bytes",
	"errors",
	/* What libscif's fast path moved, as its users counted it (0 if none). */
	"user_tx_bytes", "user_tx_msgs", "user_rx_bytes", "user_rx_msgs",
};
#define NR_COUNTERS	(sizeof(counters) / sizeof(counters[0]))
_Static_assert(NR_COUNTERS == 11, "parse_endpoint() reads 11 counters");

struct node {
	unsigned int id;
	bool online;		/* listed by scif_get_nodeIDs() */
	bool sysfs;		/* has a sysfs directory */
	char state[16];
	char bus[64];
	long long generation;
	long long hb_age_ms;
	unsigned long long stats[NR_COUNTERS];
};

static bool json;

static void usage(FILE *f)
{
	fputs("usage: scif-info [--json] [nodes|self|endpoints|stats|all]\n"
	      "       scif-info -h | --help | --version\n"
	      "Show SCIF information (default: all).\n"
	      "  self       the id of the local node\n"
	      "  nodes      the nodes known: state, bus, generation, heartbeat age\n"
	      "  stats      each node's traffic counters\n"
	      "  endpoints  the endpoints open, with their counters (debugfs, root)\n"
	      "  all        all of the above\n"
	      "  -j, --json one JSON object instead of tables\n"
	      "Nodes come from sysfs (" SYSFS_DIR "/nodes), readable by anyone;\n"
	      "$SCIF_SYSFS and $SCIF_DEBUGFS override the directories.\n", f);
}

static const char *dir_of(const char *env, const char *def)
{
	const char *dir = getenv(env);

	return dir && *dir ? dir : def;
}

/* <debugfs>/scif/@name, or under $SCIF_DEBUGFS if set; errno on failure. */
static FILE *debugfs_open(const char *name, char *path, size_t size)
{
	snprintf(path, size, "%s/%s", dir_of("SCIF_DEBUGFS", DEBUGFS_DIR),
		 name);
	return fopen(path, "r");
}

/* What to do about an error of /dev/scif: load it, or join its group. */
static const char *scif_advice(int err)
{
	if (err == ENOENT || err == ENXIO || err == ENODEV)
		return " (is scif.ko loaded?)";
	if (err == EACCES || err == EPERM)
		return " (/dev/scif is for root and group scif: usermod -aG scif USER, then log in again)";
	return "";
}

static void scif_error(const char *what)
{
	int err = errno;

	fprintf(stderr, "scif-info: %s: %s%s\n", what, strerror(err),
		scif_advice(err));
}

/* The first line of sysfs file nodes/@id/@name into @buf; false if none. */
static bool sysfs_read(unsigned int id, const char *name, char *buf,
		       size_t size)
{
	char path[512];
	bool ok;
	FILE *f;

	snprintf(path, sizeof(path), "%s/nodes/%u/%s",
		 dir_of("SCIF_SYSFS", SYSFS_DIR), id, name);
	f = fopen(path, "r");
	if (!f)
		return false;
	ok = fgets(buf, size, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

static void node_from_sysfs(struct node *n)
{
	char buf[64], name[32];
	size_t i;

	n->sysfs = sysfs_read(n->id, "state", n->state, sizeof(n->state));
	if (!n->sysfs)
		return;
	if (!sysfs_read(n->id, "bus", n->bus, sizeof(n->bus)))
		strcpy(n->bus, "-");
	n->generation = sysfs_read(n->id, "generation", buf, sizeof(buf)) ?
			strtoll(buf, NULL, 10) : -1;
	n->hb_age_ms = sysfs_read(n->id, "heartbeat_age_ms", buf, sizeof(buf)) ?
		       strtoll(buf, NULL, 10) : -1;
	for (i = 0; i < NR_COUNTERS; i++) {
		snprintf(name, sizeof(name), "stats/%s", counters[i]);
		n->stats[i] = sysfs_read(n->id, name, buf, sizeof(buf)) ?
			      strtoull(buf, NULL, 10) : 0;
	}
}

/*
 * Every node with a sysfs directory or online, by id, into @nodes (at
 * least MAX_NODES entries); the count, or -1 if /dev/scif is unusable.
 */
static int get_nodes(struct node *nodes, uint16_t *self)
{
	uint16_t ids[MAX_NODES];
	bool online[MAX_NODES] = { false };
	int i, n, count = 0;

	n = scif_get_nodeIDs(ids, MAX_NODES, self);
	if (n < 0) {
		scif_error("scif_get_nodeIDs");
		return -1;
	}
	for (i = 0; i < n && i < MAX_NODES; i++)
		if (ids[i] < MAX_NODES)
			online[ids[i]] = true;
	for (i = 0; i < MAX_NODES; i++) {
		struct node *nd = &nodes[count];

		memset(nd, 0, sizeof(*nd));
		nd->id = i;
		nd->online = online[i];
		node_from_sysfs(nd);
		if (!nd->sysfs && !nd->online)
			continue;
		if (!nd->sysfs) {	/* an older module: no sysfs state */
			strcpy(nd->state, "online");
			strcpy(nd->bus, "-");
			nd->generation = -1;
			nd->hb_age_ms = -1;
		}
		count++;
	}
	return count;
}

static int cmd_self(int bare)
{
	uint16_t self;

	if (scif_get_nodeIDs(NULL, 0, &self) < 0) {
		scif_error("scif_get_nodeIDs");
		return 1;
	}
	printf(bare ? "%u\n" : "local node: %u\n", self);
	return 0;
}

static void print_num(long long v)
{
	if (v < 0)
		printf(" %8s", "-");
	else
		printf(" %8lld", v);
}

static int cmd_nodes(void)
{
	struct node nodes[MAX_NODES];
	uint16_t self;
	int i, n;

	n = get_nodes(nodes, &self);
	if (n < 0)
		return 1;
	printf("NODE  STATE    BUS          GEN   HB_AGE_MS\n");
	for (i = 0; i < n; i++) {
		printf("%-5u %-8s %-10s", nodes[i].id, nodes[i].state,
		       nodes[i].bus);
		print_num(nodes[i].generation);
		print_num(nodes[i].hb_age_ms);
		printf("%s\n", nodes[i].id == self ? " (self)" : "");
	}
	return 0;
}

static int cmd_stats(void)
{
	struct node nodes[MAX_NODES];
	uint16_t self;
	size_t c;
	int i, n;

	n = get_nodes(nodes, &self);
	if (n < 0)
		return 1;
	printf("NODE ");
	for (c = 0; c < NR_COUNTERS; c++)
		printf(" %12s", counters[c]);
	printf("\n");
	for (i = 0; i < n; i++) {
		printf("%-5u", nodes[i].id);
		for (c = 0; c < NR_COUNTERS; c++)
			printf(" %12llu", nodes[i].stats[c]);
		printf("\n");
	}
	return 0;
}

struct endpoint {
	char handle[32], state[32];
	unsigned int port, pnode, pport;
	unsigned long long stats[NR_COUNTERS];
	int nr_stats;
};

/* One line of <debugfs>/scif/endpoints; false if malformed. */
static bool parse_endpoint(const char *line, struct endpoint *e)
{
	int n;

	memset(e, 0, sizeof(*e));
	n = sscanf(line, "%31s %31s %u %u:%u %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		   e->handle, e->state, &e->port, &e->pnode, &e->pport,
		   &e->stats[0], &e->stats[1], &e->stats[2], &e->stats[3],
		   &e->stats[4], &e->stats[5], &e->stats[6], &e->stats[7],
		   &e->stats[8], &e->stats[9], &e->stats[10]);
	e->nr_stats = n > 5 ? n - 5 : 0;
	return n >= 5;
}

static FILE *open_endpoints(char *path, size_t size, bool quiet)
{
	FILE *f = debugfs_open("endpoints", path, size);
	int err;

	if (!f && !quiet) {
		err = errno;
		fprintf(stderr, "scif-info: cannot read %s: %s (%s)\n", path,
			strerror(err), err == EACCES || err == EPERM ?
			"reading debugfs needs root" :
			"is debugfs mounted and scif.ko loaded?");
	}
	return f;
}

static int cmd_endpoints(void)
{
	char path[256], line[512], port[12], peer[24];
	struct endpoint e;
	int ret = 0;
	FILE *f;

	f = open_endpoints(path, sizeof(path), false);
	if (!f)
		return 1;
	printf("%-18s  %-12s  %5s  %-8s %12s %12s %8s %6s\n", "HANDLE", "STATE",
	       "PORT", "PEER", "TX_BYTES", "RX_BYTES", "RMA_OPS", "ERRORS");
	while (fgets(line, sizeof(line), f)) {
		if (!parse_endpoint(line, &e)) {
			fprintf(stderr, "scif-info: %s: unexpected line: %s",
				path, line);
			ret = 1;
			continue;
		}
		/* Port 0 is no port: not bound, or no peer. */
		strcpy(port, "-");
		strcpy(peer, "-");
		if (e.port)
			snprintf(port, sizeof(port), "%u", e.port);
		if (e.pport)
			snprintf(peer, sizeof(peer), "%u:%u", e.pnode, e.pport);
		printf("%-18s  %-12s  %5s  %-8s %12llu %12llu %8llu %6llu\n",
		       e.handle, e.state, port, peer, e.stats[0], e.stats[2],
		       e.stats[4], e.stats[6]);
	}
	if (ferror(f)) {
		fprintf(stderr, "scif-info: reading %s failed\n", path);
		ret = 1;
	}
	fclose(f);
	return ret;
}

static void json_stats(const unsigned long long *stats, int nr)
{
	int c;

	printf("{");
	for (c = 0; c < nr; c++)
		printf("%s\"%s\":%llu", c ? "," : "", counters[c], stats[c]);
	printf("}");
}

static void json_endpoints(void)
{
	char path[256], line[512];
	struct endpoint e;
	bool first = true;
	FILE *f;

	f = open_endpoints(path, sizeof(path), true);
	if (!f) {
		printf("null");	/* not readable: not root, or no debugfs */
		return;
	}
	printf("[");
	while (fgets(line, sizeof(line), f)) {
		if (!parse_endpoint(line, &e))
			continue;
		printf("%s\n    {\"handle\":", first ? "" : ",");
		json_fputs(e.handle, stdout);
		printf(",\"state\":");
		json_fputs(e.state, stdout);
		printf(",\"port\":%u,\"peer_node\":%u,\"peer_port\":%u,\"stats\":",
		       e.port, e.pnode, e.pport);
		json_stats(e.stats, e.nr_stats);
		printf("}");
		first = false;
	}
	fclose(f);
	printf("%s]", first ? "" : "\n  ");
}

/* @what: "all", "nodes", "stats" or "endpoints" (and self always). */
static int cmd_json(const char *what)
{
	bool all = !strcmp(what, "all");
	struct node nodes[MAX_NODES];
	uint16_t self;
	int i, n;

	n = get_nodes(nodes, &self);
	if (n < 0)
		return 1;
	printf("{\n  \"self\": %u", self);
	if (all || strcmp(what, "endpoints")) {
		printf(",\n  \"nodes\": [");
		for (i = 0; i < n; i++) {
			printf("%s\n    {\"id\":%u,\"self\":%s,\"state\":",
			       i ? "," : "", nodes[i].id,
			       nodes[i].id == self ? "true" : "false");
			json_fputs(nodes[i].state, stdout);
			printf(",\"bus\":");
			json_fputs(nodes[i].bus, stdout);
			printf(",\"generation\":%lld,\"heartbeat_age_ms\":%lld,\"stats\":",
			       nodes[i].generation, nodes[i].hb_age_ms);
			json_stats(nodes[i].stats, NR_COUNTERS);
			printf("}");
		}
		printf("%s]", n ? "\n  " : "");
	}
	if (all || !strcmp(what, "endpoints")) {
		printf(",\n  \"endpoints\": ");
		json_endpoints();
	}
	printf("\n}\n");
	return 0;
}

static int run(const char *cmd)
{
	int ret;

	if (!strcmp(cmd, "self"))
		return json ? cmd_json("self") : cmd_self(1);
	if (json)
		return cmd_json(cmd);
	if (!strcmp(cmd, "nodes"))
		return cmd_nodes();
	if (!strcmp(cmd, "stats"))
		return cmd_stats();
	if (!strcmp(cmd, "endpoints"))
		return cmd_endpoints();
	ret = cmd_self(0);
	if (ret)
		return ret;	/* no /dev/scif: the rest would only repeat it */
	printf("\n");
	ret |= cmd_nodes();
	printf("\n");
	ret |= cmd_stats();
	printf("\n");
	ret |= cmd_endpoints();
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const cmds[] = {
		"self", "nodes", "stats", "endpoints", "all",
	};
	const char *cmd;
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("scif-info %s\n", SCIF_TOOLS_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind > 1) {
		usage(stderr);
		return 2;
	}
	cmd = optind < argc ? argv[optind] : "all";
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmd, cmds[i]))
			return run(cmd);
	fprintf(stderr, "scif-info: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
