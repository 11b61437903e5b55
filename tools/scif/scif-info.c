// SPDX-License-Identifier: GPL-2.0
/*
 * scif-info: show the local SCIF node, the nodes online and the endpoints
 * open.  Node ids come from /dev/scif through libscif; bus names and
 * endpoints come from the driver's debugfs files.  See scif-info(8).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scif.h>

#define DEBUGFS_DIR	"/sys/kernel/debug/scif"

static void usage(FILE *f)
{
	fputs("usage: scif-info [nodes|self|endpoints|all]\n"
	      "       scif-info -h\n"
	      "Show SCIF information (default: all).\n"
	      "  self       the id of the local node\n"
	      "  nodes      the nodes online, with their bus when debugfs is readable\n"
	      "  endpoints  the endpoints open, from debugfs (needs root)\n"
	      "  all        all of the above\n", f);
}

/* <debugfs>/scif/@name, or under $SCIF_DEBUGFS if set; errno on failure. */
static FILE *debugfs_open(const char *name, char *path, size_t size)
{
	const char *dir = getenv("SCIF_DEBUGFS");

	snprintf(path, size, "%s/%s", dir && *dir ? dir : DEBUGFS_DIR, name);
	return fopen(path, "r");
}

static void scif_error(const char *what)
{
	int err = errno;

	fprintf(stderr, "scif-info: %s: %s%s\n", what, strerror(err),
		err == ENOENT || err == ENXIO || err == ENODEV ?
		" (is scif.ko loaded?)" : "");
}

/* All online node ids in *nodes (malloc'ed); the count, or -1. */
static int get_nodes(uint16_t **nodes, uint16_t *self)
{
	uint16_t *buf = NULL, *bigger;
	int len = 0, n;

	/* Asks for the count first, and again if nodes came up meanwhile. */
	while ((n = scif_get_nodeIDs(buf, len, self)) > len) {
		bigger = realloc(buf, n * sizeof(*buf));
		if (!bigger) {
			n = -1;
			break;
		}
		buf = bigger;
		len = n;
	}
	if (n < 0) {
		scif_error("scif_get_nodeIDs");
		free(buf);
		return -1;
	}
	*nodes = buf;
	return n;
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

/* The bus of node @id from the debugfs file "nodes", or "-". */
static const char *bus_name(FILE *f, unsigned int id, char *buf)
{
	char line[128];
	unsigned int n;

	if (f) {
		rewind(f);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%u %63s", &n, buf) == 2 && n == id)
				return buf;
	}
	return "-";
}

static int cmd_nodes(void)
{
	char path[256], bus[64];
	uint16_t *nodes, self;
	int i, n;
	FILE *f;

	n = get_nodes(&nodes, &self);
	if (n < 0)
		return 1;
	f = debugfs_open("nodes", path, sizeof(path));
	printf("NODE  BUS\n");
	for (i = 0; i < n; i++)
		printf("%-5u %s%s\n", nodes[i], bus_name(f, nodes[i], bus),
		       nodes[i] == self ? " (self)" : "");
	if (f)
		fclose(f);
	free(nodes);
	return 0;
}

static int cmd_endpoints(void)
{
	char path[256], line[256], handle[32], state[32], port[12], peer[24];
	unsigned int lport, pnode, pport;
	int err, ret = 0;
	FILE *f;

	f = debugfs_open("endpoints", path, sizeof(path));
	if (!f) {
		err = errno;
		fprintf(stderr, "scif-info: cannot read %s: %s (%s)\n", path,
			strerror(err), err == EACCES || err == EPERM ?
			"reading debugfs needs root" :
			"is debugfs mounted and scif.ko loaded?");
		return 1;
	}
	printf("%-18s  %-12s  %5s  %s\n", "HANDLE", "STATE", "PORT", "PEER");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%31s %31s %u %u:%u", handle, state, &lport,
			   &pnode, &pport) != 5) {
			fprintf(stderr, "scif-info: %s: unexpected line: %s",
				path, line);
			ret = 1;
			continue;
		}
		/* Port 0 is no port: not bound, or no peer. */
		strcpy(port, "-");
		strcpy(peer, "-");
		if (lport)
			snprintf(port, sizeof(port), "%u", lport);
		if (pport)
			snprintf(peer, sizeof(peer), "%u:%u", pnode, pport);
		printf("%-18s  %-12s  %5s  %s\n", handle, state, port, peer);
	}
	if (ferror(f)) {
		fprintf(stderr, "scif-info: reading %s failed\n", path);
		ret = 1;
	}
	fclose(f);
	return ret;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "all";
	int ret;

	if (argc > 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "self"))
		return cmd_self(1);
	if (!strcmp(cmd, "nodes"))
		return cmd_nodes();
	if (!strcmp(cmd, "endpoints"))
		return cmd_endpoints();
	if (strcmp(cmd, "all")) {
		fprintf(stderr, "scif-info: unknown command '%s'\n", cmd);
		usage(stderr);
		return 2;
	}
	ret = cmd_self(0);
	if (ret)
		return ret;	/* no /dev/scif: the rest would only repeat it */
	printf("\n");
	ret |= cmd_nodes();
	printf("\n");
	ret |= cmd_endpoints();
	return ret;
}
