// SPDX-License-Identifier: GPL-2.0
/*
 * fence-signal: a producer hands batches of data to a consumer with
 * asynchronous RMAs and one fence signal per batch.  The consumer
 * registers a window and watches a flag at its end; the producer copies
 * a batch into the window with COPIES scif_writeto() calls that return
 * at once, then calls scif_fence_signal() to have the batch number
 * written into the flag once every one of those copies has completed.
 * The consumer never waits on a message or a system call for the data:
 * when it sees the flag change, the whole batch is there.
 *
 *   fence-signal [ROUNDS]
 *
 * Both ends run on this node (the consumer is a child process), over the
 * loopback bus; across nodes only the node the producer connects to
 * changes.  The consumer checks every byte of every batch and tells the
 * producer (by message) when it may reuse the window.  Exits 0 if every
 * batch arrived whole, before its flag never.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <scif.h>

#define PORT	2450
#define COPIES	100		/* asynchronous RMAs per batch */
#define PIECE	1024		/* bytes per RMA */
#define DATA	(COPIES * PIECE)
#define FLAG	DATA		/* the flag follows the data */
#define WIN	(DATA + 4096)	/* registered size, a page multiple */

/* The byte at @i of batch @round. */
static uint8_t byte_of(long round, long i)
{
	return (uint8_t)(round * 131 + i * 7 + (i >> 8));
}

/* Spin (politely) until *@flag is not @old; -1 after about five seconds. */
static int flag_wait(volatile uint64_t *flag, uint64_t old, uint64_t *v)
{
	time_t end = time(NULL) + 5;

	while ((*v = __atomic_load_n(flag, __ATOMIC_ACQUIRE)) == old)
		if (sched_yield(), time(NULL) > end)
			return -1;
	return 0;
}

static int consumer(scif_epd_t lep, long rounds)
{
	struct scif_port_id peer;
	uint64_t v, seen = 0;
	scif_epd_t epd;
	uint8_t *win;
	int ok = 0;

	if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC) < 0)
		return 1;
	win = mmap(NULL, WIN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (win == MAP_FAILED ||
	    scif_register(epd, win, WIN, 0, SCIF_PROT_READ | SCIF_PROT_WRITE,
			  SCIF_MAP_FIXED) < 0 ||
	    scif_send(epd, &ok, sizeof(ok), SCIF_SEND_BLOCK) < 0)
		return 1;
	for (long r = 1; r <= rounds; r++) {
		if (flag_wait((volatile uint64_t *)(win + FLAG), seen, &v) ||
		    v != (uint64_t)r) {
			fprintf(stderr, "fence-signal: batch %ld: flag %llu\n",
				r, (unsigned long long)v);
			return 1;
		}
		seen = v;
		/* The flag came after the batch: all of it is here. */
		for (long i = 0; i < DATA; i++) {
			if (win[i] != byte_of(r, i)) {
				fprintf(stderr, "fence-signal: batch %ld: byte %ld early\n",
					r, i);
				return 1;
			}
		}
		/*
		 * Done with the window after the last batch: closing would
		 * unregister it too, but said here it is seen (and traced),
		 * while the producer still waits for the word below.
		 */
		if (r == rounds && scif_unregister(epd, 0, WIN)) {
			perror("fence-signal: unregister");
			return 1;
		}
		if (scif_send(epd, &ok, sizeof(ok), SCIF_SEND_BLOCK) < 0)
			return 1;
	}
	scif_close(epd);
	return 0;
}

static int producer(uint16_t node, long rounds)
{
	struct scif_port_id dst = { .node = node, .port = PORT };
	scif_epd_t epd = scif_open();
	struct timespec t0, t1;
	uint8_t *src;
	int ok;

	if (epd < 0 || scif_connect(epd, &dst) < 0 ||
	    scif_recv(epd, &ok, sizeof(ok), SCIF_RECV_BLOCK) < 0) {
		perror("fence-signal: connect");
		return 1;
	}
	src = mmap(NULL, WIN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/*
	 * Registered writable although the RMAs only read it: pinned for
	 * writing, the pages are this process's own from the start, not
	 * the shared zero page that later writes would copy away from.
	 */
	if (src == MAP_FAILED ||
	    scif_register(epd, src, WIN, 0, SCIF_PROT_READ | SCIF_PROT_WRITE,
			  SCIF_MAP_FIXED) < 0) {
		perror("fence-signal: register");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long r = 1; r <= rounds; r++) {
		for (long i = 0; i < DATA; i++)
			src[i] = byte_of(r, i);
		/* Asynchronous: each call returns once the copy is queued. */
		for (long k = 0; k < COPIES; k++) {
			if (scif_writeto(epd, k * PIECE, PIECE, k * PIECE, 0)) {
				perror("fence-signal: scif_writeto");
				return 1;
			}
		}
		/* Write r at FLAG once all of the copies above completed. */
		if (scif_fence_signal(epd, 0, 0, FLAG, r,
				      SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_REMOTE)) {
			perror("fence-signal: scif_fence_signal");
			return 1;
		}
		/* The consumer checked the batch: src may change again. */
		if (scif_recv(epd, &ok, sizeof(ok), SCIF_RECV_BLOCK) < 0) {
			fprintf(stderr, "fence-signal: batch %ld refused\n", r);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("fence-signal: %ld batches of %d RMAs to node %u, %.1f us each\n",
	       rounds, COPIES, node, ((t1.tv_sec - t0.tv_sec) * 1e6 +
				      (t1.tv_nsec - t0.tv_nsec) / 1e3) / rounds);
	scif_close(epd);
	return 0;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100;
	uint16_t self, nodes[1];
	int status = -1, ret;
	scif_epd_t lep;
	pid_t pid;

	if (rounds <= 0 || scif_get_nodeIDs(nodes, 1, &self) < 0) {
		fprintf(stderr, "usage: fence-signal [ROUNDS] (scif loaded)\n");
		return 2;
	}
	lep = scif_open();
	if (lep < 0 || scif_bind(lep, PORT) < 0 || scif_listen(lep, 1) < 0) {
		perror("fence-signal: listen");
		return 1;
	}
	pid = fork();
	if (pid == 0)
		_exit(consumer(lep, rounds));
	scif_close(lep);
	ret = producer(self, rounds);
	waitpid(pid, &status, 0);
	return ret || !WIFEXITED(status) || WEXITSTATUS(status);
}
