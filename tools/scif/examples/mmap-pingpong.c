// SPDX-License-Identifier: GPL-2.0
/*
 * mmap-pingpong: two processes ping-pong an 8-byte counter through SCIF
 * remote mapping.  The server registers a page of its memory as a window
 * and watches it; the client maps that window with scif_mmap() and
 * writes into it, then watches the answer come back through the same
 * mapping.  No message is sent per round trip.
 *
 *   mmap-pingpong [ROUNDS]
 *
 * Both ends run on this node (the server is a child process), over the
 * loopback bus; across nodes only the node the client connects to
 * changes.  Prints the mean round trip; exits 0 if every round came back.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <scif.h>

#define PORT	2400
#define PAGE	4096
#define PING	0	/* word the client writes */
#define PONG	8	/* word the server answers in: another cache line */

static volatile uint64_t *word(void *page, int idx)
{
	return (volatile uint64_t *)page + idx;
}

/* Spin until *@p is @v; -1 after about five seconds. */
static int wait_for(volatile uint64_t *p, uint64_t v)
{
	time_t end = time(NULL) + 5;
	unsigned long n = 0;

	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v)
		if (!(++n & 0xffff) && time(NULL) > end)
			return -1;
	return 0;
}

static int server(scif_epd_t lep, long rounds)
{
	struct scif_port_id peer;
	scif_epd_t epd;
	void *page;
	int ready = 0;

	if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC) < 0)
		return 1;
	page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	/* Window 0 of the connection: the client maps offset 0. */
	if (scif_register(epd, page, PAGE, 0, SCIF_PROT_READ | SCIF_PROT_WRITE,
			  SCIF_MAP_FIXED) < 0 ||
	    scif_send(epd, &ready, sizeof(ready), SCIF_SEND_BLOCK) < 0)
		return 1;
	for (long i = 1; i <= rounds; i++) {
		if (wait_for(word(page, PING), i))
			return 1;
		__atomic_store_n(word(page, PONG), i, __ATOMIC_RELEASE);
	}
	/* Wait for the client to be done before the window goes. */
	scif_recv(epd, &ready, sizeof(ready), SCIF_RECV_BLOCK);
	scif_close(epd);
	return 0;
}

static int client(uint16_t node, long rounds)
{
	struct scif_port_id dst = { .node = node, .port = PORT };
	struct timespec t0, t1;
	scif_epd_t epd = scif_open();
	void *map;
	int ready;

	if (epd < 0 || scif_connect(epd, &dst) < 0 ||
	    scif_recv(epd, &ready, sizeof(ready), SCIF_RECV_BLOCK) < 0) {
		perror("mmap-pingpong: connect");
		return 1;
	}
	map = scif_mmap(NULL, PAGE, SCIF_PROT_READ | SCIF_PROT_WRITE, 0, epd, 0);
	if (map == SCIF_MMAP_FAILED) {
		perror("mmap-pingpong: scif_mmap");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 1; i <= rounds; i++) {
		__atomic_store_n(word(map, PING), i, __ATOMIC_RELEASE);
		if (wait_for(word(map, PONG), i)) {
			fprintf(stderr, "mmap-pingpong: round %ld lost\n", i);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("mmap-pingpong: %ld round trips through node %u's window, %.2f us each\n",
	       rounds, node, ((t1.tv_sec - t0.tv_sec) * 1e6 +
			      (t1.tv_nsec - t0.tv_nsec) / 1e3) / rounds);
	scif_munmap(map, PAGE);
	scif_send(epd, &ready, sizeof(ready), SCIF_SEND_BLOCK);
	scif_close(epd);
	return 0;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1000;
	uint16_t self, nodes[1];
	int status = -1, ret;
	scif_epd_t lep;
	pid_t pid;

	if (rounds <= 0 || scif_get_nodeIDs(nodes, 1, &self) < 0) {
		fprintf(stderr, "usage: mmap-pingpong [ROUNDS] (scif loaded)\n");
		return 2;
	}
	lep = scif_open();
	if (lep < 0 || scif_bind(lep, PORT) < 0 || scif_listen(lep, 1) < 0) {
		perror("mmap-pingpong: listen");
		return 1;
	}
	pid = fork();
	if (pid == 0)
		_exit(server(lep, rounds));
	scif_close(lep);
	ret = client(self, rounds);
	waitpid(pid, &status, 0);
	return ret || !WIFEXITED(status) || WEXITSTATUS(status);
}
