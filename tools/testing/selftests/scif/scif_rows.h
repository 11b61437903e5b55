/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TAP rows for the device tests that are not kselftest-harness programs
 * (scif_devmem_test, scif_nvme_test): one "ok"/"not ok" line per check,
 * a failed one saying what its expectations saw; and what those tests
 * compare and count.
 */
#ifndef SCIF_ROWS_H
#define SCIF_ROWS_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scif.h"

static int nr_test, nr_fail;
static char why[256];

/* One row: @ok, or not ok with what the failed expectations saw. */
static void result(const char *name, bool ok)
{
	nr_test++;
	if (ok) {
		printf("ok %d %s\n", nr_test, name);
	} else {
		nr_fail++;
		printf("not ok %d %s # %s\n", nr_test, name, why);
	}
	fflush(stdout);
	why[0] = '\0';
}

/* @cond; if false, what @fmt says is added to the row's reason. */
static bool expect(bool cond, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (cond)
		return true;
	n = strlen(why);
	if (n < sizeof(why) - 2) {
		if (n)
			strcat(why, "; ");
		va_start(ap, fmt);
		vsnprintf(why + strlen(why), sizeof(why) - strlen(why), fmt, ap);
		va_end(ap);
	}
	return false;
}

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++) {
		seed = seed * 1103515245 + 12345;
		p[i] = seed >> 16;
	}
}

/* First differing byte of two buffers, or -1. */
static long differs(const uint8_t *x, const uint8_t *y, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (x[i] != y[i])
			return (long)i;
	return -1;
}

/*
 * The text after "@key " in the file at @path, read whole into @buf
 * (@len bytes at most), or NULL.
 */
static const char *file_field(const char *path, const char *key, char *buf,
			      size_t len)
{
	char *p;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	p = strstr(buf, key);
	return p ? p + strlen(key) + 1 : NULL;
}

/* A field of <debugfs>/scif/@file, or -1. */
static long debugfs_stat(const char *file, const char *key)
{
	char path[128], buf[4096];
	const char *p;

	snprintf(path, sizeof(path), "/sys/kernel/debug/scif/%s", file);
	p = file_field(path, key, buf, sizeof(buf));
	return p ? atol(p) : -1;
}

static inline long rma_stat(const char *key)
{
	return debugfs_stat("rma", key);
}

/* Bytes this node served into or out of device windows, both ways. */
static inline long served_bytes(void)
{
	return rma_stat("stage_served_dma") + rma_stat("stage_served_cpu");
}

/* The first line of node @node's sysfs file @name, or "unreadable". */
static inline void node_file(uint16_t node, const char *name, char *buf,
			     int size)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/misc/scif/nodes/%u/%s",
		 node, name);
	f = fopen(path, "r");
	if (!f || !fgets(buf, size, f))
		snprintf(buf, size, "unreadable");
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* Whether @node is among the node ids online here (scif_get_nodeIDs). */
static inline bool node_online(uint16_t node)
{
	uint16_t ids[16], self;
	int nr = scif_get_nodeIDs(ids, 16, &self);

	for (int i = 0; i < nr && i < 16; i++)
		if (ids[i] == node)
			return true;
	return false;
}

/* Wait up to @ms for @node to be online (@want) or not. */
static inline bool wait_node(uint16_t node, bool want, int ms)
{
	for (int t = 0; t < ms; t += 100) {
		if (node_online(node) == want)
			return true;
		usleep(100 * 1000);
	}
	return node_online(node) == want;
}

#endif /* SCIF_ROWS_H */
