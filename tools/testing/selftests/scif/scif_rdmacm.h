/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rdma_cm endpoint of the verbs test programs (scif_verbs_inline,
 * scif_verbs_dmabuf): one connection, its QP made with the program's
 * attributes when the connection is made.
 */
#ifndef SCIF_RDMACM_H
#define SCIF_RDMACM_H

#include <stdio.h>
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

#endif /* SCIF_RDMACM_H */
