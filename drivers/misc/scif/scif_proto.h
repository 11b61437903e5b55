/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF core: what crosses the link.  Both the memory layout that one side
 * of a queue pair exposes to its peer and the node messages are read by
 * another node, which treats every field as hostile until checked.
 * Fields are in the byte order of the host; all nodes of a SCIF network
 * share an architecture.
 */
#ifndef _SCIF_PROTO_H_
#define _SCIF_PROTO_H_

#include <linux/build_bug.h>
#include <linux/types.h>

/**
 * struct scif_qp_shm - one side's half of a queue pair, in its own memory
 * @rx_write: written by the peer: bytes it has put into @rx_data
 *	(free running; the position is rx_write modulo the ring size)
 * @rx_waiting: written by the peer: non-zero while it waits for room in
 *	@rx_data and wants a doorbell when there is some
 * @tx_read: written by the peer: bytes it has taken out of its own
 *	rx_data, which this side fills
 * @rx_data: the receive ring, a power of two in size
 *
 * Each side writes only into the peer's half and reads only its own, so
 * nothing is read across the link on the data path.
 */
struct scif_qp_shm {
	u32 rx_write;
	u32 rx_waiting;
	u8 pad0[56];
	u32 tx_read;
	u8 pad1[60];
	u8 rx_data[];
};

static_assert(sizeof(struct scif_qp_shm) == 128);

/**
 * enum scif_msg_op - node message types
 * @SCIF_MSG_CONNECT: src asks to connect; arg[0] destination port,
 *	arg[1] source port, arg[2] address of src's queue pair half,
 *	arg[3] its ring size
 * @SCIF_MSG_ACCEPT: src accepted dst's request; arg[0], arg[1] as arg[2],
 *	arg[3] of CONNECT
 * @SCIF_MSG_REJECT: dst's request was refused
 * @SCIF_MSG_DISCONNECT: src closed its end of the connection with dst
 * @SCIF_MSG_DISC_ACK: the receiver will no longer touch dst's memory
 * @SCIF_MSG_DATA: there is new data in dst's receive ring
 * @SCIF_MSG_SPACE: there is new room in the ring dst sends into
 * @SCIF_MSG_NR: number of message types
 */
enum scif_msg_op {
	SCIF_MSG_CONNECT = 1,
	SCIF_MSG_ACCEPT,
	SCIF_MSG_REJECT,
	SCIF_MSG_DISCONNECT,
	SCIF_MSG_DISC_ACK,
	SCIF_MSG_DATA,
	SCIF_MSG_SPACE,
	SCIF_MSG_NR
};

/**
 * struct scif_msg - a node message, one slot of a node queue pair
 * @op: enum scif_msg_op
 * @pad: zero
 * @dst: handle of the endpoint the message is for, or 0
 * @src: handle of the endpoint that sent it, or 0
 * @arg: arguments, by type
 */
struct scif_msg {
	u32 op;
	u32 pad;
	u64 dst;
	u64 src;
	u64 arg[5];
};

static_assert(sizeof(struct scif_msg) == 64);

#endif /* _SCIF_PROTO_H_ */
