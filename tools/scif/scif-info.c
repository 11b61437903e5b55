// SPDX-License-Identifier: GPL-2.0
/*
 * scif-info: show the local SCIF node and the driver's version, the
 * nodes it knows (state, bus, the bus's device and driver, generation,
 * heartbeat age and traffic counters, from sysfs, readable by any user),
 * the endpoints open (from debugfs, root only) and the endpoints of the
 * processes the caller may inspect, with their pid and command (from
 * /proc/PID/fdinfo: the caller's own; root's, every process's), as text
 * or as one JSON object (--json).  See scif-info(8) and
 * Documentation/scif/observability.rst.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <scif.h>

#include "json.h"

#define DEBUGFS_DIR	"/sys/kernel/debug/scif"
#define SYSFS_DIR	"/sys/class/misc/scif"
#define MODULE_VERSION	"/sys/module/scif/version"
#define PROC_DIR	"/proc"
#define MAX_NODES	64
/* The counters of /proc/PID/fdinfo: the first seven of counters[]. */
#define NR_FD_COUNTERS	7

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
	char device[64];	/* "-" if none */
	char driver[64];	/* "-" if none */
	long long generation;
	long long hb_age_ms;
	unsigned long long stats[NR_COUNTERS];
};

static bool json;

static void usage(FILE *f)
{
	fputs("usage: scif-info [--json] [nodes|self|endpoints|ps|stats|all]\n"
	      "       scif-info -h | --help | --version\n"
	      "Show SCIF information (default: all).\n"
	      "  self       the id of the local node\n"
	      "  nodes      the nodes known: state, bus, device, driver,\n"
	      "             generation, heartbeat age\n"
	      "  stats      each node's traffic counters\n"
	      "  endpoints  the endpoints open, with their counters (debugfs, root)\n"
	      "  ps         the endpoints of processes, with pid and command:\n"
	      "             yours (root: everyone's), from /proc/PID/fdinfo\n"
	      "  all        all of the above, with the driver's version and\n"
	      "             the node's window counts\n"
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

/* The first line of file @path into @buf, without its newline; false if none. */
static bool read_line(const char *path, char *buf, size_t size)
{
	bool ok;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return false;
	ok = fgets(buf, size, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/* The first line of sysfs file nodes/@id/@name into @buf; false if none. */
static bool sysfs_read(unsigned int id, const char *name, char *buf,
		       size_t size)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/nodes/%u/%s",
		 dir_of("SCIF_SYSFS", SYSFS_DIR), id, name);
	return read_line(path, buf, size);
}

/*
 * The last component of the target of link nodes/@id/@name (the node's
 * device, or its driver) into @buf, or "-" if there is no such link.
 */
static void sysfs_link_name(unsigned int id, const char *name, char *buf,
			    size_t size)
{
	char path[512], target[PATH_MAX];
	const char *base;
	ssize_t len;

	snprintf(path, sizeof(path), "%s/nodes/%u/%s",
		 dir_of("SCIF_SYSFS", SYSFS_DIR), id, name);
	len = readlink(path, target, sizeof(target) - 1);
	if (len <= 0) {
		snprintf(buf, size, "-");
		return;
	}
	target[len] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (!*base || strlen(base) >= size)	/* too long: not a name we show */
		base = "-";
	memcpy(buf, base, strlen(base) + 1);
}

/* The driver's version (scif.ko's MODULE_VERSION) into @buf; false if unknown. */
static bool driver_version(char *buf, size_t size)
{
	return read_line(MODULE_VERSION, buf, size) && *buf;
}

/*
 * The windows of this node's endpoints and the peers' windows they hold
 * (sysfs); false if the driver does not say.
 */
static bool window_totals(long long *local, long long *remote)
{
	char path[512], buf[32];
	const char *dir = dir_of("SCIF_SYSFS", SYSFS_DIR);

	snprintf(path, sizeof(path), "%s/windows", dir);
	if (!read_line(path, buf, sizeof(buf)))
		return false;
	*local = strtoll(buf, NULL, 10);
	snprintf(path, sizeof(path), "%s/remote_windows", dir);
	if (!read_line(path, buf, sizeof(buf)))
		return false;
	*remote = strtoll(buf, NULL, 10);
	return true;
}

/* Print @s for a table: a byte that is not printable ASCII as '?'. */
static void print_safe(const char *s)
{
	for (; *s; s++)
		putchar(isprint((unsigned char)*s) ? *s : '?');
}

/* The same in a column of @width, left-aligned, then a space. */
static void print_col(const char *s, int width)
{
	int len = (int)strlen(s);

	print_safe(s);
	printf("%*s", len < width ? width - len + 1 : 1, "");
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
	sysfs_link_name(n->id, "device", n->device, sizeof(n->device));
	sysfs_link_name(n->id, "device/driver", n->driver, sizeof(n->driver));
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
			strcpy(nd->device, "-");
			strcpy(nd->driver, "-");
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

/* What "all" shows after the local node: the driver's version, windows. */
static void print_driver(void)
{
	long long local, remote;
	char version[64];

	printf("driver version: %s\n",
	       driver_version(version, sizeof(version)) ? version : "unknown");
	if (window_totals(&local, &remote))
		printf("windows: %lld local, %lld remote\n", local, remote);
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
	printf("%-5s %-8s %-10s %-14s %-13s %9s %9s\n", "NODE", "STATE", "BUS",
	       "DEVICE", "DRIVER", "GEN", "HB_AGE_MS");
	for (i = 0; i < n; i++) {
		printf("%-5u %-8s ", nodes[i].id, nodes[i].state);
		print_col(nodes[i].bus, 10);
		print_col(nodes[i].device, 14);
		print_col(nodes[i].driver, 13);
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

/*
 * Whether the endpoints file of debugfs can be read, or fails for
 * another reason than permission (which cmd_endpoints() then reports).
 */
static bool debugfs_readable(void)
{
	char path[256];
	FILE *f;

	f = open_endpoints(path, sizeof(path), true);
	if (f) {
		fclose(f);
		return true;
	}
	return errno != EACCES && errno != EPERM;
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

/* An endpoint a process holds open, from /proc/PID/fdinfo/FD. */
struct proc_endpoint {
	long pid;
	long long uid;		/* real uid; -1 if unknown */
	int fd;
	char comm[64];
	char handle[32], state[32];
	unsigned int lnode, lport, pnode, pport;	/* port 0: none */
	unsigned long long windows, rwindows;
	unsigned long long stats[NR_FD_COUNTERS];
};

/* A name of /proc made only of digits (a pid, an fd), not too long. */
static bool all_digits(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return n && n < 10 && !s[n];
}

/* The device number of /dev/scif: sysfs's "dev", else the node's own. */
static bool scif_rdev(dev_t *rdev)
{
	char path[512], buf[32], end;
	unsigned int maj, min;
	struct stat st;

	snprintf(path, sizeof(path), "%s/dev", dir_of("SCIF_SYSFS", SYSFS_DIR));
	if (read_line(path, buf, sizeof(buf)) &&
	    sscanf(buf, "%u:%u%c", &maj, &min, &end) == 2) {
		*rdev = makedev(maj, min);
		return true;
	}
	if (!stat("/dev/scif", &st) && S_ISCHR(st.st_mode)) {
		*rdev = st.st_rdev;
		return true;
	}
	return false;
}

/* A decimal number alone in @v into @n; false if it is not one. */
static bool parse_ull(const char *v, unsigned long long *n)
{
	char *end;

	if (!isdigit((unsigned char)*v))
		return false;
	errno = 0;
	*n = strtoull(v, &end, 10);
	return !errno && !*end;
}

/* "-" (no port) or "<node>:<port>" into @node and @port (0: none). */
static bool parse_port_id(const char *v, unsigned int *node,
			  unsigned int *port)
{
	char end;

	*node = 0;
	*port = 0;
	if (!strcmp(v, "-"))
		return true;
	return sscanf(v, "%5u:%5u%c", node, port, &end) == 2 &&
	       *node <= 0xffff && *port && *port <= 0xffff;
}

/* One "scif-KEY:\tVALUE" line of fdinfo into @e; false if malformed. */
static bool fdinfo_field(const char *key, const char *val,
			 struct proc_endpoint *e)
{
	char name[32];
	size_t c;

	if (!strcmp(key, "handle"))
		return snprintf(e->handle, sizeof(e->handle), "%s", val) <
		       (int)sizeof(e->handle);
	if (!strcmp(key, "state"))
		return snprintf(e->state, sizeof(e->state), "%s", val) <
		       (int)sizeof(e->state);
	if (!strcmp(key, "local"))
		return parse_port_id(val, &e->lnode, &e->lport);
	if (!strcmp(key, "peer"))
		return parse_port_id(val, &e->pnode, &e->pport);
	if (!strcmp(key, "windows"))
		return parse_ull(val, &e->windows);
	if (!strcmp(key, "remote-windows"))
		return parse_ull(val, &e->rwindows);
	/* The counters: "tx-bytes" is counters[]'s "tx_bytes". */
	snprintf(name, sizeof(name), "%s", key);
	for (c = 0; name[c]; c++)
		if (name[c] == '-')
			name[c] = '_';
	for (c = 0; c < NR_FD_COUNTERS; c++)
		if (!strcmp(name, counters[c]))
			return parse_ull(val, &e->stats[c]);
	return true;		/* a key of a later driver */
}

/*
 * Fill @e from /proc/@pid/fdinfo/@fd; false if that shows no SCIF
 * endpoint (the descriptor was closed, or is another file by now) or
 * something this reader does not understand.
 */
static bool read_fdinfo(long pid, int fd, struct proc_endpoint *e)
{
	char path[128], line[256], key[32], val[64];
	bool ok = true;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%ld/fdinfo/%d", PROC_DIR, pid, fd);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (ok && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "scif-", 5))
			continue;
		ok = sscanf(line + 5, "%31[^:]:%63s", key, val) == 2 &&
		     fdinfo_field(key, val, e);
	}
	fclose(f);
	return ok && *e->state;
}

/* The command and real uid of process @pid into @e. */
static void read_process(long pid, struct proc_endpoint *e)
{
	char path[128], line[256];
	long long uid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%ld/comm", PROC_DIR, pid);
	if (!read_line(path, e->comm, sizeof(e->comm)))
		strcpy(e->comm, "?");
	e->uid = -1;
	snprintf(path, sizeof(path), "%s/%ld/status", PROC_DIR, pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %lld", &uid) == 1) {
			e->uid = uid;
			break;
		}
	fclose(f);
}

/*
 * The endpoints open in the processes whose descriptors this user may
 * read (procfs decides: a user's own processes, or all for root): each
 * descriptor of /proc/PID/fd that is /dev/scif (by device number, under
 * whatever name it was opened), then its fdinfo.  Processes and
 * descriptors that go meanwhile are skipped.  Return: the number of
 * endpoints in *@out (malloc'ed), or -1 with a message.
 */
static int proc_endpoints(struct proc_endpoint **out)
{
	struct proc_endpoint *eps = NULL, *tmp, e;
	size_t n = 0, cap = 0;
	struct dirent *pd, *fdd;
	char path[128];
	struct stat st;
	DIR *proc, *fds;
	dev_t rdev;
	long pid;

	*out = NULL;
	if (!scif_rdev(&rdev)) {
		scif_error("/dev/scif");
		return -1;
	}
	proc = opendir(PROC_DIR);
	if (!proc) {
		fprintf(stderr, "scif-info: %s: %s\n", PROC_DIR, strerror(errno));
		return -1;
	}
	while ((pd = readdir(proc))) {
		if (!all_digits(pd->d_name))
			continue;
		pid = strtol(pd->d_name, NULL, 10);
		snprintf(path, sizeof(path), "%s/%ld/fd", PROC_DIR, pid);
		fds = opendir(path);
		if (!fds)
			continue;	/* gone, or not ours to see */
		while ((fdd = readdir(fds))) {
			if (!all_digits(fdd->d_name) ||
			    fstatat(dirfd(fds), fdd->d_name, &st, 0) ||
			    !S_ISCHR(st.st_mode) || st.st_rdev != rdev)
				continue;
			memset(&e, 0, sizeof(e));
			e.pid = pid;
			e.fd = (int)strtol(fdd->d_name, NULL, 10);
			if (!read_fdinfo(pid, e.fd, &e))
				continue;
			read_process(pid, &e);
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				tmp = realloc(eps, cap * sizeof(*eps));
				if (!tmp) {
					fprintf(stderr, "scif-info: out of memory\n");
					closedir(fds);
					closedir(proc);
					free(eps);
					return -1;
				}
				eps = tmp;
			}
			eps[n++] = e;
		}
		closedir(fds);
	}
	closedir(proc);
	*out = eps;
	return (int)n;
}

/* "-" for no port, else "<node>:<port>", into @buf. */
static const char *port_id(char *buf, size_t size, unsigned int node,
			   unsigned int port)
{
	if (!port)
		return "-";
	snprintf(buf, size, "%u:%u", node, port);
	return buf;
}

static int cmd_ps(void)
{
	char uid[24], local[16], peer[16];
	struct proc_endpoint *eps;
	int i, n;

	n = proc_endpoints(&eps);
	if (n < 0)
		return 1;
	printf("%-7s %-6s %4s  %-12s  %-11s  %-11s %7s %12s %12s %12s  %s\n",
	       "PID", "UID", "FD", "STATE", "LOCAL", "PEER", "WINDOWS",
	       "PEER_WINDOWS", "TX_BYTES", "RX_BYTES", "COMMAND");
	for (i = 0; i < n; i++) {
		struct proc_endpoint *e = &eps[i];

		if (e->uid < 0)
			strcpy(uid, "-");
		else
			snprintf(uid, sizeof(uid), "%lld", e->uid);
		printf("%-7ld %-6s %4d  %-12s  %-11s  %-11s %7llu %12llu %12llu %12llu  ",
		       e->pid, uid, e->fd, e->state,
		       port_id(local, sizeof(local), e->lnode, e->lport),
		       port_id(peer, sizeof(peer), e->pnode, e->pport),
		       e->windows, e->rwindows, e->stats[0], e->stats[2]);
		print_safe(e->comm);
		printf("\n");
	}
	free(eps);
	return 0;
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

/* ,"@key":"@name" or ,"@key":null for a name that is "-" (none). */
static void json_name(const char *key, const char *name)
{
	printf(",\"%s\":", key);
	if (strcmp(name, "-"))
		json_fputs(name, stdout);
	else
		printf("null");
}

/* The processes' endpoints as a JSON array, or null if they cannot be read. */
static void json_ps(void)
{
	struct proc_endpoint *eps;
	int i, n;

	n = proc_endpoints(&eps);
	if (n < 0) {
		printf("null");
		return;
	}
	printf("[");
	for (i = 0; i < n; i++) {
		struct proc_endpoint *e = &eps[i];

		printf("%s\n    {\"pid\":%ld,\"uid\":", i ? "," : "", e->pid);
		if (e->uid < 0)
			printf("null");
		else
			printf("%lld", e->uid);
		printf(",\"comm\":");
		json_fputs(e->comm, stdout);
		printf(",\"fd\":%d,\"handle\":", e->fd);
		json_fputs(e->handle, stdout);
		printf(",\"state\":");
		json_fputs(e->state, stdout);
		printf(",\"node\":%u,\"port\":%u,\"peer_node\":%u,\"peer_port\":%u,\"windows\":%llu,\"peer_windows\":%llu,\"stats\":",
		       e->lnode, e->lport, e->pnode, e->pport, e->windows,
		       e->rwindows);
		json_stats(e->stats, NR_FD_COUNTERS);
		printf("}");
	}
	printf("%s]", n ? "\n  " : "");
	free(eps);
}

/*
 * @what: "all", "self", "nodes", "stats", "endpoints" or "ps"; self, the
 * driver's version and the window counts always, the nodes but for
 * "endpoints" and "ps".
 */
static int cmd_json(const char *what)
{
	bool all = !strcmp(what, "all");
	struct node nodes[MAX_NODES];
	long long local, remote;
	char version[64];
	uint16_t self;
	int i, n;

	n = get_nodes(nodes, &self);
	if (n < 0)
		return 1;
	printf("{\n  \"self\": %u,\n  \"version\": ", self);
	if (driver_version(version, sizeof(version)))
		json_fputs(version, stdout);
	else
		printf("null");
	if (window_totals(&local, &remote))
		printf(",\n  \"windows\": %lld,\n  \"remote_windows\": %lld",
		       local, remote);
	else
		printf(",\n  \"windows\": null,\n  \"remote_windows\": null");
	if (all || (strcmp(what, "endpoints") && strcmp(what, "ps"))) {
		printf(",\n  \"nodes\": [");
		for (i = 0; i < n; i++) {
			printf("%s\n    {\"id\":%u,\"self\":%s,\"state\":",
			       i ? "," : "", nodes[i].id,
			       nodes[i].id == self ? "true" : "false");
			json_fputs(nodes[i].state, stdout);
			printf(",\"bus\":");
			json_fputs(nodes[i].bus, stdout);
			json_name("device", nodes[i].device);
			json_name("driver", nodes[i].driver);
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
	if (all || !strcmp(what, "ps")) {
		printf(",\n  \"ps\": ");
		json_ps();
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
	if (!strcmp(cmd, "ps"))
		return cmd_ps();
	ret = cmd_self(0);
	if (ret)
		return ret;	/* no /dev/scif: the rest would only repeat it */
	print_driver();
	printf("\n");
	ret |= cmd_nodes();
	printf("\n");
	ret |= cmd_stats();
	printf("\n");
	/* Not root: every endpoint is not for us to see, our own are. */
	if (debugfs_readable()) {
		ret |= cmd_endpoints();
		printf("\n");
	}
	ret |= cmd_ps();
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
		"self", "nodes", "stats", "endpoints", "ps", "all",
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
