// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/scif as a device: open and close, one endpoint per open file,
 * ENOTTY for unknown ioctls, EFAULT for bad pointers, node enumeration,
 * the node_id attribute and the max_endpoints limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/scif_ioctl.h>

#include "kselftest_harness.h"
#include "scif_test_util.h"

#define SCIF_DEV	"/dev/scif"
#define MAX_EPD_PARAM	"/sys/module/scif/parameters/max_endpoints"

/* An address that is mapped but inaccessible, so every access faults. */
static void *no_access_page(void)
{
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

TEST(device_node)
{
	struct stat st;

	ASSERT_EQ(0, stat(SCIF_DEV, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0666, st.st_mode & 0777);
}

TEST(open_close)
{
	int fd = open(SCIF_DEV, O_RDWR);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, close(fd));
}

TEST(one_endpoint_per_open)
{
	enum { N = 64 };
	int fds[N], before, i;

	before = count_lines(EPD_LIST);
	ASSERT_LE(0, before);
	for (i = 0; i < N; i++) {
		fds[i] = open(SCIF_DEV, O_RDWR);
		ASSERT_LE(0, fds[i]);
	}
	EXPECT_EQ(before + N, count_lines(EPD_LIST));
	for (i = 0; i < N; i++)
		EXPECT_EQ(0, close(fds[i]));
	EXPECT_EQ(before, settled_count(EPD_LIST, before, 200));
}

TEST(endpoint_closed_with_process)
{
	int before, status;
	pid_t pid;

	before = count_lines(EPD_LIST);
	ASSERT_LE(0, before);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Exit without closing: the kernel must release them. */
		for (int i = 0; i < 8; i++)
			if (open(SCIF_DEV, O_RDWR) < 0)
				_exit(1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(before, settled_count(EPD_LIST, before, 200));
}

TEST(unknown_ioctl_enotty)
{
	const unsigned long bad[] = {
		0,
		_IO('s', 0),
		_IOWR('s', 18, __u64),
		_IOWR('s', 255, __u64),
		_IOWR('x', 1, __u64),
		_IOWR('s', 3, __u32),	/* CONNECT's number, wrong size */
		_IOR('s', 14, struct scifioctl_node_ids), /* wrong direction */
	};
	int fd = open(SCIF_DEV, O_RDWR);
	size_t i;
	__u64 arg = 0;

	ASSERT_LE(0, fd);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		EXPECT_EQ(-1, ioctl(fd, bad[i], &arg));
		EXPECT_EQ(ENOTTY, errno) TH_LOG("cmd %#lx", bad[i]);
	}
	close(fd);
}

TEST(bad_pointers_efault)
{
	const unsigned long ptr_cmds[] = {
		SCIF_BIND, SCIF_CONNECT, SCIF_ACCEPTREQ, SCIF_ACCEPTREG,
		SCIF_SEND, SCIF_RECV, SCIF_REG, SCIF_UNREG, SCIF_READFROM,
		SCIF_WRITETO, SCIF_VREADFROM, SCIF_VWRITETO, SCIF_GET_NODEIDS,
		SCIF_FENCE_MARK, SCIF_FENCE_SIGNAL,
	};
	void *bad_ptrs[] = { NULL, (void *)8, no_access_page(),
			     (void *)0xffff888000000000UL };
	int fd = open(SCIF_DEV, O_RDWR);
	size_t i, j;

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, bad_ptrs[2]);
	for (i = 0; i < sizeof(ptr_cmds) / sizeof(ptr_cmds[0]); i++) {
		for (j = 0; j < sizeof(bad_ptrs) / sizeof(bad_ptrs[0]); j++) {
			errno = 0;
			EXPECT_EQ(-1, ioctl(fd, ptr_cmds[i], bad_ptrs[j]));
			EXPECT_EQ(EFAULT, errno)
				TH_LOG("cmd %#lx ptr %p", ptr_cmds[i], bad_ptrs[j]);
		}
	}
	munmap(bad_ptrs[2], 4096);
	close(fd);
}

TEST(get_node_ids)
{
	__u16 nodes[4] = { 0xffff, 0xffff, 0xffff, 0xffff }, self = 0xffff;
	struct scifioctl_node_ids req = {
		.nodes = (unsigned long)nodes,
		.self = (unsigned long)&self,
		.len = 4,
	};
	int fd = open(SCIF_DEV, O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, SCIF_GET_NODEIDS, &req));
	EXPECT_EQ(1, req.len);
	EXPECT_EQ(0, self);
	EXPECT_EQ(0, nodes[0]);
	EXPECT_EQ(0xffff, nodes[1]);	/* nothing past the online count */

	/* No room: nothing is stored in nodes, the count still comes back. */
	nodes[0] = 0xffff;
	req.len = 0;
	ASSERT_EQ(0, ioctl(fd, SCIF_GET_NODEIDS, &req));
	EXPECT_EQ(1, req.len);
	EXPECT_EQ(0xffff, nodes[0]);

	req.len = -5;
	ASSERT_EQ(0, ioctl(fd, SCIF_GET_NODEIDS, &req));
	EXPECT_EQ(1, req.len);
	EXPECT_EQ(0xffff, nodes[0]);
	close(fd);
}

TEST(get_node_ids_bad_inner_pointers)
{
	__u16 nodes[1], self;
	struct scifioctl_node_ids req = {
		.nodes = 8, .self = (unsigned long)&self, .len = 1,
	};
	int fd = open(SCIF_DEV, O_RDWR);

	ASSERT_LE(0, fd);
	errno = 0;
	EXPECT_EQ(-1, ioctl(fd, SCIF_GET_NODEIDS, &req));
	EXPECT_EQ(EFAULT, errno);

	req.nodes = (unsigned long)nodes;
	req.self = 8;
	errno = 0;
	EXPECT_EQ(-1, ioctl(fd, SCIF_GET_NODEIDS, &req));
	EXPECT_EQ(EFAULT, errno);
	close(fd);
}

TEST(node_id_attribute)
{
	char buf[32];

	ASSERT_EQ(0, read_file("/sys/class/misc/scif/node_id", buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
}

FIXTURE(max_endpoints) {
	char saved[32];
};

FIXTURE_SETUP(max_endpoints)
{
	ASSERT_EQ(0, read_file(MAX_EPD_PARAM, self->saved, sizeof(self->saved)));
}

FIXTURE_TEARDOWN(max_endpoints)
{
	EXPECT_EQ(0, write_file(MAX_EPD_PARAM, self->saved));
}

TEST_F(max_endpoints, limit_gives_enfile)
{
	int base, a, b, c;
	char limit[32];

	/* Let endpoints of earlier tests go: the list must match the count. */
	base = settled_count(EPD_LIST, 0, 200);
	ASSERT_LE(0, base);
	snprintf(limit, sizeof(limit), "%d", base + 2);
	ASSERT_EQ(0, write_file(MAX_EPD_PARAM, limit));

	a = open(SCIF_DEV, O_RDWR);
	b = open(SCIF_DEV, O_RDWR);
	errno = 0;
	c = open(SCIF_DEV, O_RDWR);
	EXPECT_LE(0, a);
	EXPECT_LE(0, b);
	EXPECT_EQ(-1, c);
	EXPECT_EQ(ENFILE, errno);

	/* A slot freed is a slot usable again. */
	close(b);
	b = open(SCIF_DEV, O_RDWR);
	EXPECT_LE(0, b);
	close(a);
	close(b);
}

TEST_HARNESS_MAIN
