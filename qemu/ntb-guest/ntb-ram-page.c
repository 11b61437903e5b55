// SPDX-License-Identifier: GPL-2.0
/*
 * ntb-ram-page hold EXPECTED TIMEOUT [RELEASE]
 * ntb-ram-page put FILE OFFSET SRC
 * ntb-ram-page get FILE OFFSET DST
 *
 * Guest helper of the full-reach window test (qemu/ntb-guest/ntb-fullreach).
 *
 * hold: holds one page of its own memory, locked in RAM and zeroed, prints its
 * physical address (hexadecimal, from /proc/self/pagemap: needs root) on
 * a line of its own, then waits until the page begins with the contents of
 * the file EXPECTED (at most one page), which the peer writes there through
 * its full-reach window, looking every 100 ms for at most TIMEOUT seconds.
 * Exit status 0 when the page shows it, 1 on a timeout (the page's first
 * bytes are printed) or an error.  With RELEASE, the page is kept after
 * the match until the file RELEASE exists (the peer may still be reading
 * it back), within the same TIMEOUT.
 *
 * put, get: copy a page (at most) from SRC into FILE at byte OFFSET, or a
 * page of FILE at OFFSET into DST, with pwrite()/pread(): ntb_tool's
 * window files (peer_mw<N>) take a position but cannot seek.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

static int fail(const char *what)
{
	perror(what);
	return 1;
}

/* The physical address of the page at @va, 0 if unknown. */
static uint64_t phys_of(const void *va)
{
	uint64_t entry = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &entry, sizeof(entry),
		  (off_t)((uintptr_t)va / PAGE * sizeof(entry))) != sizeof(entry))
		entry = 0;
	close(fd);
	if (!(entry >> 63))	/* not present */
		return 0;
	return (entry & ((1ULL << 55) - 1)) * PAGE;
}

/* put and get: one page at most, at a byte offset of @file. */
static int copy(int put, const char *file, const char *offset,
		const char *other)
{
	char buf[PAGE];
	off_t pos = (off_t)strtoull(offset, NULL, 0);
	ssize_t n;
	int fd, ofd;

	fd = open(file, put ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		return fail(file);
	ofd = put ? open(other, O_RDONLY) :
		    open(other, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (ofd < 0)
		return fail(other);
	if (put) {
		n = read(ofd, buf, sizeof(buf));
		if (n <= 0 || pwrite(fd, buf, n, pos) != n)
			return fail("put");
	} else {
		n = pread(fd, buf, sizeof(buf), pos);
		if (n <= 0 || write(ofd, buf, n) != n)
			return fail("get");
	}
	close(ofd);
	close(fd);
	return 0;
}

static int hold(const char *expected, const char *timeout,
		const char *release)
{
	static const struct timespec tick = { 0, 100 * 1000 * 1000 };
	char want[PAGE];
	volatile unsigned char *page;
	ssize_t n;
	long ticks;
	uint64_t phys;
	int fd, i;

	fd = open(expected, O_RDONLY);
	if (fd < 0)
		return fail(expected);
	n = read(fd, want, sizeof(want));
	close(fd);
	if (n <= 0)
		return fail("read EXPECTED");
	ticks = atol(timeout) * 10;

	page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return fail("mmap");
	if (mlock((void *)page, PAGE))
		return fail("mlock");
	memset((void *)page, 0, PAGE);
	phys = phys_of((void *)page);
	if (!phys) {
		fprintf(stderr, "no physical address for the page\n");
		return 1;
	}
	printf("0x%llx\n", (unsigned long long)phys);
	fflush(stdout);

	for (; ticks >= 0; ticks--) {
		for (i = 0; i < n && page[i] == (unsigned char)want[i]; i++)
			;
		if (i == n)
			break;
		nanosleep(&tick, NULL);
	}
	if (ticks >= 0) {
		printf("match: %zd bytes\n", n);
		fflush(stdout);
		while (release && access(release, F_OK) && ticks-- > 0)
			nanosleep(&tick, NULL);
		return 0;
	}
	printf("timeout; the page begins:");
	for (i = 0; i < 32; i++)
		printf(" %02x", page[i]);
	printf("\n");
	return 1;
}

int main(int argc, char **argv)
{
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "hold"))
		return hold(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
	if (argc == 5 && !strcmp(argv[1], "put"))
		return copy(1, argv[2], argv[3], argv[4]);
	if (argc == 5 && !strcmp(argv[1], "get"))
		return copy(0, argv[2], argv[3], argv[4]);
	fprintf(stderr,
		"usage: %s hold EXPECTED TIMEOUT [RELEASE] | put FILE OFFSET SRC | get FILE OFFSET DST\n",
		argv[0]);
	return 2;
}
