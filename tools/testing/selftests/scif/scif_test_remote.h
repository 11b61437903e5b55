/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Endpoints on another node, for the selftests that run with their peer
 * on another VM of a cluster.
 *
 * scif_peer_agent runs on the peer node and listens on AGENT_PORT.  A
 * test connects to it (one control connection per thread of the test)
 * and asks it to make SCIF calls on endpoints that live on the agent's
 * node: each request is one libscif call, each reply its result and
 * errno.  The test names such an endpoint by an int at or above
 * REMOTE_FD_BASE, which the ep_*() wrappers of scif_test_util.h send to
 * the agent, while smaller ints are local file descriptors.  So the same
 * test body drives a local pair or a pair split across two nodes.
 *
 * The agent closes the endpoints a control connection opened when that
 * connection ends, as the kernel closes a process's files when it exits.
 *
 * Wire format (host byte order; both nodes share an architecture): a
 * struct agent_req, then @len bytes of payload (RPC_SEND's data); a
 * struct agent_rep, then @len bytes (RPC_RECV's data).
 */
#ifndef SCIF_TEST_REMOTE_H
#define SCIF_TEST_REMOTE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "scif.h"

#define AGENT_PORT		2200
#define REMOTE_FD_BASE		(1 << 24)
#define AGENT_MAX_PAYLOAD	(64 << 20)

enum agent_op {
	RPC_OPEN = 1,		/* -> handle */
	RPC_CLOSE,		/* a0 handle */
	RPC_BIND,		/* a0 handle, a1 port -> port */
	RPC_LISTEN,		/* a0 handle, a1 backlog */
	RPC_CONNECT,		/* a0 handle, a1 node, a2 port -> port */
	RPC_ACCEPT,		/* a0 handle, a1 flags -> handle; v0 node, v1 port */
	RPC_ACCEPTREQ,		/* a0 handle -> v0 cookie, v1 node, v2 port */
	RPC_ACCEPTREG,		/* a0 handle, a1 cookie */
	RPC_SEND,		/* a0 handle, a1 flags, payload -> bytes */
	RPC_RECV,		/* a0 handle, a1 len, a2 flags -> bytes, payload */
	RPC_POLL,		/* a0 handle, a1 events, a2 ms -> n; v0 revents */
	RPC_EPCOUNT,		/* -> lines of the agent node's endpoint list */
	RPC_STOP,		/* the agent exits once this is answered */
};

struct agent_req {
	uint32_t op;
	uint32_t len;
	int64_t arg[3];
};

struct agent_rep {
	int64_t ret;
	int32_t err;
	uint32_t len;
	int64_t val[3];
};

/*
 * All of @len bytes over SCIF endpoint @fd, blocking: 0, or -1 with errno
 * (ECONNRESET for an orderly end).  An interrupted call is resumed with
 * @restart, else it fails with EINTR.
 */
static inline int agent_xfer_all(int fd, void *buf, size_t len, bool out,
				 bool restart)
{
	size_t done = 0;
	int n;

	while (done < len) {
		n = out ? scif_send(fd, (char *)buf + done, len - done,
				    SCIF_SEND_BLOCK) :
			  scif_recv(fd, (char *)buf + done, len - done,
				    SCIF_RECV_BLOCK);
		if (n < 0 && errno == EINTR && restart)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ECONNRESET;
			return -1;
		}
		done += n;
	}
	return 0;
}

#endif /* SCIF_TEST_REMOTE_H */
