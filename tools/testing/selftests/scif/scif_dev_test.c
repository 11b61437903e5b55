// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/scif as a device: open and close, one endpoint per open file,
 * ENOTTY for unknown ioctls, EFAULT for bad pointers, node enumeration,
 * the node_id attribute and the max_endpoints limit, and EFAULT when a
 * result cannot be written back (with the call's effect undone where the
 * caller could not otherwise know of it).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
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
	/* The driver's 0666, or the packages' udev rule's 0660 (group scif). */
	EXPECT_TRUE((st.st_mode & 0777) == 0666 || (st.st_mode & 0777) == 0660)
		TH_LOG("mode %o", st.st_mode & 0777);
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

#define RO_PORT		3077
#define RO_WIN		0x100000UL

/* A page of arguments that the kernel can read but not write. */
static void *read_only_copy(const void *arg, size_t len)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, arg, len);
	if (mprotect(p, 4096, PROT_READ)) {
		munmap(p, 4096);
		return NULL;
	}
	return p;
}

static int ro_ioctl_errno(int fd, unsigned long cmd, const void *arg,
			  size_t len)
{
	void *ro = read_only_copy(arg, len);
	int ret;

	if (!ro)
		return -1;
	errno = 0;
	ret = ioctl(fd, cmd, ro) ? errno : 0;
	munmap(ro, 4096);
	return ret;
}

struct ro_connector {
	pthread_t thread;
	int fd;
	int err;	/* errno of the connect, 0 if it succeeded */
	bool ro;	/* connect with a read-only argument */
};

static void *ro_connect_fn(void *data)
{
	struct scifioctl_connect req = { .peer = { .node = 0, .port = RO_PORT } };
	struct ro_connector *c = data;

	if (c->ro)
		c->err = ro_ioctl_errno(c->fd, SCIF_CONNECT, &req, sizeof(req));
	else
		c->err = ioctl(c->fd, SCIF_CONNECT, &req) ? errno : 0;
	return NULL;
}

static int ro_connect_start(struct ro_connector *c, bool ro)
{
	c->ro = ro;
	c->fd = open(SCIF_DEV, O_RDWR);
	if (c->fd < 0)
		return -1;
	c->err = -1;
	return pthread_create(&c->thread, NULL, ro_connect_fn, c);
}

TEST(read_only_results_efault)
{
	struct scifioctl_accept acc = { .flags = SCIF_ACCEPT_SYNC };
	__u16 nodes[4], self, port = 0;
	struct scifioctl_node_ids ids = {
		.nodes = (unsigned long)nodes, .self = (unsigned long)&self,
		.len = 4,
	};
	struct scifioctl_reg reg = { .len = 4096, .offset = RO_WIN,
				     .prot = SCIF_PROT_READ,
				     .flags = SCIF_MAP_FIXED };
	struct scifioctl_fence_mark fm = { .flags = SCIF_FENCE_INIT_SELF };
	char data[8] = "efault!";
	struct scifioctl_msg msg = { .msg = (unsigned long)data, .len = 8,
				     .flags = SCIF_SEND_BLOCK };
	struct ro_connector c;
	int lfd, bfd, nfd, mark = 0;
	void *win, *ro_mark;

	bfd = open(SCIF_DEV, O_RDWR);
	lfd = open(SCIF_DEV, O_RDWR);
	nfd = open(SCIF_DEV, O_RDWR);
	ASSERT_LE(0, bfd);
	ASSERT_LE(0, lfd);
	ASSERT_LE(0, nfd);
	EXPECT_EQ(EFAULT, ro_ioctl_errno(bfd, SCIF_BIND, &port, sizeof(port)));
	EXPECT_EQ(EFAULT, ro_ioctl_errno(bfd, SCIF_GET_NODEIDS, &ids,
					 sizeof(ids)));

	port = RO_PORT;
	ASSERT_EQ(0, ioctl(lfd, SCIF_BIND, &port));
	ASSERT_EQ(0, ioctl(lfd, SCIF_LISTEN, 4));

	/* The connection is made; only the local port cannot be stored. */
	ASSERT_EQ(0, ro_connect_start(&c, true));
	ASSERT_EQ(0, ioctl(lfd, SCIF_ACCEPTREQ, &acc));
	ASSERT_EQ(0, ioctl(nfd, SCIF_ACCEPTREG, &acc.endpt));
	pthread_join(c.thread, NULL);
	EXPECT_EQ(EFAULT, c.err);
	close(c.fd);
	close(nfd);
	nfd = open(SCIF_DEV, O_RDWR);
	ASSERT_LE(0, nfd);

	/* The request that could not be handed out is refused. */
	ASSERT_EQ(0, ro_connect_start(&c, false));
	EXPECT_EQ(EFAULT, ro_ioctl_errno(lfd, SCIF_ACCEPTREQ, &acc,
					 sizeof(acc)));
	pthread_join(c.thread, NULL);
	EXPECT_EQ(ECONNREFUSED, c.err);
	close(c.fd);

	/* A connection, then results the kernel cannot store. */
	ASSERT_EQ(0, ro_connect_start(&c, false));
	ASSERT_EQ(0, ioctl(lfd, SCIF_ACCEPTREQ, &acc));
	ASSERT_EQ(0, ioctl(nfd, SCIF_ACCEPTREG, &acc.endpt));
	pthread_join(c.thread, NULL);
	ASSERT_EQ(0, c.err);

	EXPECT_EQ(EFAULT, ro_ioctl_errno(c.fd, SCIF_SEND, &msg, sizeof(msg)));
	msg.msg = 0xffff888000000000UL;
	EXPECT_EQ(EFAULT, ro_ioctl_errno(c.fd, SCIF_SEND, &msg, sizeof(msg)));
	/* The mark goes where fm.mark points: there, read-only. */
	ro_mark = read_only_copy(&mark, sizeof(mark));
	ASSERT_NE(NULL, ro_mark);
	fm.mark = (unsigned long)ro_mark;
	errno = 0;
	EXPECT_EQ(-1, ioctl(c.fd, SCIF_FENCE_MARK, &fm));
	EXPECT_EQ(EFAULT, errno);
	munmap(ro_mark, 4096);

	win = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, win);
	reg.addr = (unsigned long)win;
	EXPECT_EQ(EFAULT, ro_ioctl_errno(c.fd, SCIF_REG, &reg, sizeof(reg)));
	/* The window the caller never learnt of is gone: its range is free. */
	EXPECT_EQ(0, ioctl(c.fd, SCIF_REG, &reg));
	EXPECT_EQ(RO_WIN, reg.out_offset);

	/* The 8 bytes of the failed send arrived all the same. */
	msg.msg = (unsigned long)data;
	memset(data, 0, sizeof(data));
	msg.flags = 0;
	EXPECT_EQ(0, ioctl(nfd, SCIF_RECV, &msg));
	EXPECT_EQ(8, msg.out_len);
	EXPECT_EQ(0, memcmp(data, "efault!", 8));

	munmap(win, 4096);
	close(c.fd);
	close(nfd);
	close(lfd);
	close(bfd);
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
