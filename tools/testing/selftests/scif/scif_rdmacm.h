/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the verbs test programs (scif_verbs_inline, scif_verbs_dmabuf,
 * scif_verbs_direct) share: the rdma_cm endpoint (one connection, its QP
 * made with the program's attributes when the connection is made), a
 * thread's seccomp filter against the uverbs commands, and waiting for
 * an asynchronous event.
 */
#ifndef SCIF_RDMACM_H
#define SCIF_RDMACM_H

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

/*
 * A listening (@passive) or connecting rdma_cm id for @addr, @port; the
 * connecting one has its QP made from @qa.  NULL on failure (said).
 */
static inline struct rdma_cm_id *rdmacm_endpoint(const char *addr,
						 const char *port, int passive,
						 struct ibv_qp_init_attr *qa)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct rdma_cm_id *id;
	int ret;

	if (passive)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(addr, port, &hints, &res)) {
		perror("rdma_getaddrinfo");
		return NULL;
	}
	ret = rdma_create_ep(&id, res, NULL, passive ? NULL : qa);
	rdma_freeaddrinfo(res);
	if (ret) {
		perror("rdma_create_ep");
		return NULL;
	}
	return id;
}

/*
 * Forbid the calling thread ioctl, read and write (EPERM), the system
 * calls of every uverbs command.  Return: 1 if filtered, 0 if the kernel
 * has no seccomp (the debug kernel's configuration leaves it out), or
 * -errno.
 */
static inline int rdmacm_deny_uverbs(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_read, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (!prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return 1;
	return errno == EINVAL ? 0 : -errno;
}

/* Whether @id's device reports @type within 20 s (the events printed). */
static inline int rdmacm_event_seen(struct rdma_cm_id *id,
				    enum ibv_event_type type, const char *who)
{
	struct pollfd pfd = { .fd = id->verbs->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int seen = 0;

	while (!seen && poll(&pfd, 1, 20000) == 1 &&
	       !ibv_get_async_event(id->verbs, &ev)) {
		seen = ev.event_type == type;
		printf("# %s: async event %s\n", who,
		       ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	return seen;
}

#endif /* SCIF_RDMACM_H */
