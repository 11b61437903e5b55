// SPDX-License-Identifier: GPL-2.0
/*
 * AF_VSOCK between two SCIF nodes (scif_vsock.ko), for scif_vsock_test.sh:
 *
 *   scif_vsock_peer serve PORT       echo every SOCK_STREAM connection
 *                                    back (a process each); runs until
 *                                    killed, and its children with it
 *                                    (their sockets would hold
 *                                    scif_vsock.ko)
 *   scif_vsock_peer echo CID PORT N  one connection: N random bytes sent,
 *                                    echoed back and compared; exit 0 if
 *                                    equal
 *   scif_vsock_peer small CID PORT N SIZE
 *                                    one connection: N messages of SIZE
 *                                    bytes, a send() each, from a child
 *                                    while this process reads the echo
 *                                    and compares it: far more packets
 *                                    in flight than scif_vsock's
 *                                    transmit budget (its senders must
 *                                    wait, not fail)
 *   scif_vsock_peer flood CID PORT S as echo, repeated for S seconds on
 *                                    one connection (traffic while the
 *                                    script tries rmmod)
 *   scif_vsock_peer connclose CID PORT S
 *                                    connect (again every 100 ms for S
 *                                    seconds at most) and close at once,
 *                                    sending nothing: exit 0 once a
 *                                    connection was made
 *   scif_vsock_peer loss CID PORT    connect and echo, have the launcher
 *                                    kill the peer (scif-cluster kill 1),
 *                                    then TAP: the socket reports
 *                                    ECONNRESET within 10 s (SO_ERROR,
 *                                    EPOLLERR), send() fails, a new
 *                                    connect() to the dead node fails;
 *                                    the peer restarted, a new connection
 *                                    echoes again; one line each,
 *                                    "PASS name" or "FAIL name", which
 *                                    the script turns into TAP
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#define CHUNK	65536

static int tap_failed;

static void tap(int ok, const char *name)
{
	if (!ok)
		tap_failed++;
	printf("%s %s\n", ok ? "PASS" : "FAIL", name);
	fflush(stdout);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int vs_connect(unsigned int cid, unsigned int port)
{
	struct sockaddr_vm sa = {
		.svm_family = AF_VSOCK, .svm_cid = cid, .svm_port = port,
	};
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

static int xfer_all(int fd, char *buf, size_t len, int tx)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = tx ? send(fd, buf + done, len - done, MSG_NOSIGNAL) :
			 recv(fd, buf + done, len - done, 0);
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		done += n;
	}
	return 0;
}

/* Send @len random bytes in chunks and compare what comes back. */
static int echo_check(int fd, size_t len)
{
	static char out[CHUNK], in[CHUNK];
	size_t done, n, i;
	int err;

	for (done = 0; done < len; done += n) {
		n = len - done < CHUNK ? len - done : CHUNK;
		for (i = 0; i < n; i++)
			out[i] = random();
		err = xfer_all(fd, out, n, 1);
		if (!err)
			err = xfer_all(fd, in, n, 0);
		if (err)
			return err;
		if (memcmp(in, out, n))
			return -EBADMSG;
	}
	return 0;
}

static void echo_child(int fd)
{
	static char buf[CHUNK];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		if (xfer_all(fd, buf, n, 1))
			break;
	_exit(0);
}

static int serve(unsigned int port)
{
	struct sockaddr_vm sa = {
		.svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY,
		.svm_port = port,
	};
	int l = socket(AF_VSOCK, SOCK_STREAM, 0), fd;

	signal(SIGCHLD, SIG_IGN);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(l, 16)) {
		perror("serve");
		return 1;
	}
	for (;;) {
		fd = accept(l, NULL, NULL);
		if (fd < 0)
			continue;
		if (fork() == 0) {
			close(l);
			/* Killed with the server, even if it died first. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(0);
			echo_child(fd);
		}
		close(fd);
	}
}

static int echo(unsigned int cid, unsigned int port, size_t len)
{
	int fd = vs_connect(cid, port), err;

	if (fd < 0) {
		printf("# connect: %s\n", strerror(-fd));
		return 1;
	}
	err = echo_check(fd, len);
	printf("# %zu bytes echoed: %s\n", len, err ? strerror(-err) : "equal");
	close(fd);
	return !!err;
}

/* The byte at offset @i of the small mode's stream. */
static unsigned char pattern(size_t i)
{
	return (i * 131 + (i >> 9)) & 0xff;
}

static void small_sender(int fd, long count, size_t size)
{
	static char buf[CHUNK];
	size_t off = 0, i;
	long k;

	for (k = 0; k < count; k++, off += size) {
		for (i = 0; i < size; i++)
			buf[i] = pattern(off + i);
		if (xfer_all(fd, buf, size, 1)) {
			printf("# send of message %ld: %s\n", k, strerror(errno));
			_exit(1);
		}
	}
	_exit(0);
}

static int small(unsigned int cid, unsigned int port, long count,
		 size_t size)
{
	static char buf[CHUNK];
	size_t total = count * size, done = 0, i;
	int fd, err = 0, status = 0;
	ssize_t n;
	pid_t pid;

	if (count <= 0 || size == 0 || size > CHUNK)
		return 2;
	fd = vs_connect(cid, port);
	if (fd < 0) {
		printf("# connect: %s\n", strerror(-fd));
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		small_sender(fd, count, size);
	while (pid > 0 && !err && done < total) {
		n = recv(fd, buf, total - done < CHUNK ? total - done : CHUNK, 0);
		if (n <= 0) {
			err = n < 0 ? -errno : -EPIPE;
			break;
		}
		for (i = 0; i < (size_t)n; i++)
			if ((unsigned char)buf[i] != pattern(done + i))
				err = -EBADMSG;
		done += n;
	}
	if (pid < 0)
		err = -errno;
	else if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		 WEXITSTATUS(status))
		err = err ? err : -EIO;
	printf("# %ld messages of %zu bytes, %zu bytes echoed: %s\n", count,
	       size, done, err ? strerror(-err) : "equal");
	close(fd);
	return !!err;
}

static int flood(unsigned int cid, unsigned int port, int seconds)
{
	long end = now_ms() + seconds * 1000L;
	size_t total = 0;
	int fd = vs_connect(cid, port), err = 0;

	if (fd < 0) {
		printf("# connect: %s\n", strerror(-fd));
		return 1;
	}
	while (!err && now_ms() < end) {
		err = echo_check(fd, 1 << 20);
		total += 1 << 20;
	}
	printf("# flood: %zu bytes echoed, %s\n", total,
	       err ? strerror(-err) : "all equal");
	close(fd);
	return !!err;
}

/* Wait for the socket to report an error; returns SO_ERROR or -1. */
static int wait_reset(int fd, long limit_ms, long *took)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	long start = now_ms();
	socklen_t sl;
	int soerr = 0;

	for (;;) {
		p.revents = 0;
		if (poll(&p, 1, 100) > 0 && (p.revents & (POLLERR | POLLHUP)))
			break;
		if (now_ms() - start > limit_ms)
			return -1;
	}
	*took = now_ms() - start;
	sl = sizeof(soerr);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl))
		return -1;
	return soerr;
}

static int loss(unsigned int cid, unsigned int port)
{
	char byte = 'x';
	long took = 0, start;
	int fd, soerr, n, ok;

	fd = vs_connect(cid, port);
	tap(fd >= 0, "connect");
	if (fd < 0)
		return 1;
	tap(!echo_check(fd, 256 << 10), "echo_256KiB_before_the_kill");
	tap(system("scif-cluster kill 1") == 0, "node_1_killed");
	soerr = wait_reset(fd, 10000, &took);
	printf("# SO_ERROR %d (%s) %ld ms after the kill\n", soerr,
	       soerr > 0 ? strerror(soerr) : "-", took);
	tap(soerr == ECONNRESET, "socket_reset_ECONNRESET_within_10s");
	n = send(fd, &byte, 1, MSG_NOSIGNAL);
	printf("# send after the reset: %d (%s)\n", n,
	       n < 0 ? strerror(errno) : "-");
	tap(n < 0, "send_fails_after_the_reset");
	close(fd);
	start = now_ms();
	fd = vs_connect(cid, port);
	printf("# connect to the dead node: %s after %ld ms\n",
	       fd < 0 ? strerror(-fd) : "connected", now_ms() - start);
	tap(fd < 0, "connect_to_dead_node_fails");
	if (fd >= 0)
		close(fd);
	tap(system("scif-cluster restart 1") == 0, "node_1_restarted");
	/* Its echo server comes back with its new life's steps. */
	start = now_ms();
	do {
		fd = vs_connect(cid, port);
		if (fd < 0)
			usleep(500000);
	} while (fd < 0 && now_ms() - start < 180000);
	printf("# reconnected after %ld ms\n", now_ms() - start);
	ok = fd >= 0 && !echo_check(fd, 1 << 20);
	tap(ok, "echo_1MiB_after_restart");
	if (fd >= 0)
		close(fd);
	return tap_failed ? 1 : 0;
}

/* One connection made within @secs, then closed at once. */
static int connclose(unsigned int cid, unsigned int port, int secs)
{
	long start = now_ms();
	int fd, tries = 0;

	do {
		fd = vs_connect(cid, port);
		tries++;
		if (fd < 0)
			usleep(100000);
	} while (fd < 0 && now_ms() - start < secs * 1000L);
	printf("# connect: %s after %d tries, %ld ms\n",
	       fd < 0 ? strerror(-fd) : "connected", tries, now_ms() - start);
	if (fd < 0)
		return 1;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	srandom(getpid());
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "echo"))
		return echo(atoi(argv[2]), atoi(argv[3]), atol(argv[4]));
	if (argc == 6 && !strcmp(argv[1], "small"))
		return small(atoi(argv[2]), atoi(argv[3]), atol(argv[4]),
			     atol(argv[5]));
	if (argc == 5 && !strcmp(argv[1], "flood"))
		return flood(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "connclose"))
		return connclose(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "loss"))
		return loss(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: see the comment at the top of %s.c\n", argv[0]);
	return 2;
}
