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
#include <linux/limits.h>
#include <linux/string.h>
#include <linux/types.h>

/**
 * struct scif_qp_shm - one side's half of a queue pair, in its own memory
 * @rx_write: written by the peer: bytes it has put into @rx_data
 *	(free running; the position is rx_write modulo the ring size)
 * @rx_waiting: written by the peer: non-zero while it waits for room in
 *	@rx_data and wants a doorbell (SPACE on a connection) when there is
 *	some
 * @tx_wanted: written by the peer (connections only): non-zero while it
 *	may sleep waiting for data in its own rx_data, which this side
 *	fills; DATA is sent only then
 * @pad0: keeps @tx_read on a cache line of its own
 * @tx_read: written by the peer: bytes it has taken out of its own
 *	rx_data, which this side fills
 * @pad1: keeps @rx_data cache-line aligned
 * @rx_data: the receive ring, a power of two in size
 *
 * Each side writes only into the peer's half and reads only its own, so
 * nothing is read across the link on the data path.  A side that goes to
 * sleep sets @rx_waiting or @tx_wanted in the peer's half, then looks at
 * its ring once more; the peer moves data, then looks at the flag (full
 * barriers between on both sides), so either the sleeper sees the data
 * or the peer sees the flag and sends the message.  The sleeper's side
 * clears the flag when the message comes, before it wakes its waiters,
 * who set it again if they go back to sleep.  While both sides keep
 * moving data, no messages and no interrupts are needed.
 */
struct scif_qp_shm {
	u32 rx_write;
	u32 rx_waiting;
	u32 tx_wanted;
	u8 pad0[52];
	u32 tx_read;
	u8 pad1[60];
	u8 rx_data[];
};

static_assert(sizeof(struct scif_qp_shm) == 128);

/**
 * scif_qp_len() - size of one side's half of a queue pair
 * @rx_size: size of its receive ring
 *
 * Return: the bytes an area with a ring of @rx_size takes, as allocated,
 * published and mapped.
 */
static inline size_t scif_qp_len(u32 rx_size)
{
	return sizeof(struct scif_qp_shm) + rx_size;
}

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
 * @SCIF_MSG_REGISTER: src opened a window; arg[0] window id, arg[1]
 *	offset, arg[2] pages, arg[3] SCIF_PROT_* | runs << 32, arg[4]
 *	address of the first page of its run list (struct scif_runlist);
 *	or, for a window the link cannot reach, SCIF_PROT_* |
 *	SCIF_REGISTER_STAGED with no runs and arg[4] 0 (reached through
 *	STAGE_* messages only)
 * @SCIF_MSG_REGISTER_ACK: dst's window is known (arg[2] 0) or refused
 *	(arg[2] a positive errno); arg[0], arg[1] as in REGISTER.  The run
 *	list is not read any more.
 * @SCIF_MSG_UNREGISTER: src closes a window; arg[0], arg[1] as in REGISTER
 * @SCIF_MSG_UNREGISTER_ACK: the receiver will no longer touch that window
 *	of dst; arg[0], arg[1] as in REGISTER.  With arg[2]
 *	SCIF_UNREGISTER_WITHDRAWN: no new RMA or mapping will use it, but one
 *	still does; a second UNREGISTER_ACK (arg[2] 0) follows once the last
 *	lets go, and only then may dst reuse the offsets and pages
 * @SCIF_MSG_FENCE_MARK: src asks for a mark of the RMAs dst initiated so
 *	far; arg[0] request id
 * @SCIF_MSG_FENCE_WAIT: src asks dst to answer once its RMAs up to a mark
 *	completed; arg[0] request id, arg[1] the mark (31 bits)
 * @SCIF_MSG_FENCE_SIGNAL: src asks dst to write values once the RMAs dst
 *	initiated so far completed; arg[0] request id, arg[1] offset in
 *	dst's registered address space, arg[2] the value to write there,
 *	arg[3] offset in src's registered address space, arg[4] the value
 *	to write there; an offset of SCIF_FENCE_NO_OFF means no write
 * @SCIF_MSG_FENCE_ACK: answer to a FENCE_* request; arg[0] its id, arg[1]
 *	the mark (FENCE_MARK), arg[2] 0 or a positive errno
 * @SCIF_MSG_STAGE_WRITE: src asks dst to copy arg[3] bytes (at most
 *	SCIF_STAGE_LEN) from src's staging buffer, at address arg[4] (as
 *	dst reaches it), into dst's registered address space at offset
 *	arg[1]; arg[0] request id
 * @SCIF_MSG_STAGE_READ: the reverse: dst copies arg[3] bytes at offset
 *	arg[1] of its registered address space into src's staging buffer at
 *	arg[4]; arg[0] request id
 * @SCIF_MSG_STAGE_ACK: answer to a STAGE_* request, sent once the copy
 *	is done; arg[0] its id, arg[2] 0 or a positive errno
 * @SCIF_MSG_DEV_LIST: src asks for the first function it lends at index
 *	arg[3] or beyond that matches a filter; arg[0] request id, arg[1]
 *	class (bits 0..23) and class mask (24..47), arg[2] vendor (0..15),
 *	device (16..31), filter flags (32..63).  Names no endpoint.
 * @SCIF_MSG_DEV_LIST_ACK: answer to DEV_LIST: arg[0] its id, arg[1] the
 *	part: 0 to SCIF_DEV_LIST_PARTS - 1 carry bytes part * 24 onwards of
 *	the entry (struct scif_dev_entry) in arg[2..4], the last part
 *	carrying its last 8 bytes in arg[2] and the next cursor in arg[3];
 *	or SCIF_DEV_LIST_END alone: no entry, arg[2] 0 or a positive errno
 * @SCIF_MSG_DEV_BORROW: arg[0] request id, arg[1] fdid, arg[2] flags
 *	(SCIF_DEV_EXCLUSIVE), arg[3] the borrower's token (non-zero)
 * @SCIF_MSG_DEV_BORROW_ACK: arg[0] its id, arg[1] the borrow id (non-zero)
 *	or 0, arg[2] 0 or a positive errno
 * @SCIF_MSG_DEV_RETURN: arg[0] request id, arg[1] fdid, arg[2] borrow id,
 *	or 0 with arg[3] the token of a borrow whose answer never came
 * @SCIF_MSG_DEV_RETURN_ACK: arg[0] its id, arg[2] 0 or a positive errno
 * @SCIF_MSG_DEV_WITHDRAW: the lender takes a function back: arg[0]
 *	request id, arg[1] fdid, arg[2] borrow id, arg[3] why (positive errno)
 * @SCIF_MSG_DEV_WITHDRAW_ACK: the borrower no longer uses it: arg[0]
 *	id, arg[1] fdid, arg[2] borrow id
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
	SCIF_MSG_REGISTER,
	SCIF_MSG_REGISTER_ACK,
	SCIF_MSG_UNREGISTER,
	SCIF_MSG_UNREGISTER_ACK,
	SCIF_MSG_FENCE_MARK,
	SCIF_MSG_FENCE_WAIT,
	SCIF_MSG_FENCE_SIGNAL,
	SCIF_MSG_FENCE_ACK,
	SCIF_MSG_STAGE_WRITE,
	SCIF_MSG_STAGE_READ,
	SCIF_MSG_STAGE_ACK,
	SCIF_MSG_DEV_LIST,
	SCIF_MSG_DEV_LIST_ACK,
	SCIF_MSG_DEV_BORROW,
	SCIF_MSG_DEV_BORROW_ACK,
	SCIF_MSG_DEV_RETURN,
	SCIF_MSG_DEV_RETURN_ACK,
	SCIF_MSG_DEV_WITHDRAW,
	SCIF_MSG_DEV_WITHDRAW_ACK,
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

/**
 * scif_nodemsg_init() - start a node message
 * @msg: the message; every field this does not set is zeroed
 * @op: enum scif_msg_op
 * @dst: handle of the endpoint it is for, or 0
 * @src: handle of the endpoint that sends it, or 0
 *
 * Every node message the core sends is started here; the caller then
 * sets the arguments of @op (see enum scif_msg_op).
 */
static inline void scif_nodemsg_init(struct scif_msg *msg, u32 op, u64 dst,
				     u64 src)
{
	memset(msg, 0, sizeof(*msg));
	msg->op = op;
	msg->dst = dst;
	msg->src = src;
}

/* FENCE_SIGNAL: no value to write at this side. */
#define SCIF_FENCE_NO_OFF	U64_MAX

/* REGISTER arg[3]: the window is reached through staging only. */
#define SCIF_REGISTER_STAGED	0x100
/* UNREGISTER_ACK arg[2]: out of use, the final acknowledgment follows. */
#define SCIF_UNREGISTER_WITHDRAWN	1

/* STAGE_*: most bytes one request moves. */
#define SCIF_STAGE_LEN		(256 * 1024)

/* DEV_LIST_ACK: parts of 24 bytes that carry one 128-byte entry. */
#define SCIF_DEV_LIST_PARTS	6
#define SCIF_DEV_LIST_END	0xff

/* Size of one page of a run list; the peer maps them one at a time. */
#define SCIF_RUNLIST_PAGE	4096
#define SCIF_RUNLIST_RUNS	((SCIF_RUNLIST_PAGE - 16) / 16)

/**
 * struct scif_runlist - one page of a window's run list, in the memory of
 *	the node that registers the window, read by its peer
 * @next: address of the next page, as for a queue pair, or 0
 * @nr: runs in this page, at most SCIF_RUNLIST_RUNS
 * @run: the runs, in window order: @addr is the address the peer uses
 *	to reach the run, @len its length; both multiples of the page size
 *
 * The runs of a window follow each other in the window: the first
 * starts at offset 0 of the window and each starts where the previous
 * ended, so they cannot overlap in the window and must add up to its
 * size exactly.
 */
struct scif_runlist {
	u64 next;
	u64 nr;
	struct {
		u64 addr;
		u64 len;
	} run[SCIF_RUNLIST_RUNS];
};

static_assert(sizeof(struct scif_runlist) == SCIF_RUNLIST_PAGE);

#endif /* _SCIF_PROTO_H_ */
