/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCIF tracepoints (system "scif"): the life of endpoints, the data they
 * move, their windows, RMAs and fences, and the nodes.  Each event names
 * the endpoint by its handle, as debugfs and the protocol do.  The
 * fields are documented in Documentation/scif/observability.rst; they
 * are part of what perf, trace-cmd and bpftrace scripts rely on, so an
 * existing field keeps its name and meaning (new ones may be added).
 *
 * scif_main.c defines CREATE_TRACE_POINTS before including this file.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM scif

#if !defined(_SCIF_TRACE_H_) || defined(TRACE_HEADER_MULTI_READ)
#define _SCIF_TRACE_H_

#include <linux/tracepoint.h>
#include <linux/types.h>

/*
 * 6.10 dropped __assign_str()'s source: it is the one __string() names
 * (Kbuild defines SCIF_ASSIGN_STR_1 for such kernels).
 */
#ifdef SCIF_ASSIGN_STR_1
#define scif_assign_str(dst, src)	__assign_str(dst)
#else
#define scif_assign_str(dst, src)	__assign_str(dst, src)
#endif

/* connect: the endpoint, its port, where it connects, the result. */
TRACE_EVENT(scif_connect,
	    TP_PROTO(u64 handle, u16 port, u16 dnode, u16 dport,
		     int err),
	    TP_ARGS(handle, port, dnode, dport, err),
	    TP_STRUCT__entry(__field(u64, handle)
			     __field(u16, port)
			     __field(u16, dnode)
			     __field(u16, dport)
			     __field(int, err)),
	    TP_fast_assign(__entry->handle = handle;
			   __entry->port = port;
			   __entry->dnode = dnode;
			   __entry->dport = dport;
			   __entry->err = err;),
	    TP_printk("ep=%#llx port=%u dnode=%u dport=%u err=%d",
		      __entry->handle,
		      __entry->port,
		      __entry->dnode,
		      __entry->dport,
		      __entry->err)
);

/* accept: the new endpoint, its port, the peer's node and port. */
TRACE_EVENT(scif_accept,
	    TP_PROTO(u64 handle, u16 port, u16 pnode, u16 pport,
		     int err),
	    TP_ARGS(handle, port, pnode, pport, err),
	    TP_STRUCT__entry(__field(u64, handle)
			     __field(u16, port)
			     __field(u16, pnode)
			     __field(u16, pport)
			     __field(int, err)),
	    TP_fast_assign(__entry->handle = handle;
			   __entry->port = port;
			   __entry->pnode = pnode;
			   __entry->pport = pport;
			   __entry->err = err;),
	    TP_printk("ep=%#llx port=%u pnode=%u pport=%u err=%d",
		      __entry->handle,
		      __entry->port,
		      __entry->pnode,
		      __entry->pport,
		      __entry->err)
);

/* close by the owner: the state it was in and its byte counters. */
TRACE_EVENT(scif_close,
	    TP_PROTO(u64 handle, const char *state, u64 tx_bytes,
		     u64 rx_bytes),
	    TP_ARGS(handle, state, tx_bytes, rx_bytes),
	    TP_STRUCT__entry(__field(u64, handle)
			     __string(state, state)
			     __field(u64, tx_bytes)
			     __field(u64, rx_bytes)),
	    TP_fast_assign(__entry->handle = handle;
			   scif_assign_str(state, state);
			   __entry->tx_bytes = tx_bytes;
			   __entry->rx_bytes = rx_bytes;),
	    TP_printk("ep=%#llx state=%s tx_bytes=%llu rx_bytes=%llu",
		      __entry->handle,
		      __get_str(state),
		      __entry->tx_bytes,
		      __entry->rx_bytes)
);

/* send and recv: bytes asked for, flags, and bytes moved or -errno. */
DECLARE_EVENT_CLASS(scif_xfer,
		    TP_PROTO(u64 handle, size_t len, int flags, int ret),
		    TP_ARGS(handle, len, flags, ret),
		    TP_STRUCT__entry(__field(u64, handle)
				     __field(size_t, len)
				     __field(int, flags)
				     __field(int, ret)),
		    TP_fast_assign(__entry->handle = handle;
				   __entry->len = len;
				   __entry->flags = flags;
				   __entry->ret = ret;),
		    TP_printk("ep=%#llx len=%zu flags=%#x ret=%d",
			      __entry->handle,
			      __entry->len,
			      __entry->flags,
			      __entry->ret)
);

DEFINE_EVENT(scif_xfer, scif_send,
	     TP_PROTO(u64 handle, size_t len, int flags, int ret),
	     TP_ARGS(handle, len, flags, ret)
);

DEFINE_EVENT(scif_xfer, scif_recv,
	     TP_PROTO(u64 handle, size_t len, int flags, int ret),
	     TP_ARGS(handle, len, flags, ret)
);

/* register and unregister: the window's offset and length, result. */
DECLARE_EVENT_CLASS(scif_window,
		    TP_PROTO(u64 handle, s64 offset, u64 len, int ret),
		    TP_ARGS(handle, offset, len, ret),
		    TP_STRUCT__entry(__field(u64, handle)
				     __field(s64, offset)
				     __field(u64, len)
				     __field(int, ret)),
		    TP_fast_assign(__entry->handle = handle;
				   __entry->offset = offset;
				   __entry->len = len;
				   __entry->ret = ret;),
		    TP_printk("ep=%#llx offset=%#llx len=%llu ret=%d",
			      __entry->handle,
			      __entry->offset,
			      __entry->len,
			      __entry->ret)
);

DEFINE_EVENT(scif_window, scif_register,
	     TP_PROTO(u64 handle, s64 offset, u64 len, int ret),
	     TP_ARGS(handle, offset, len, ret)
);

DEFINE_EVENT(scif_window, scif_unregister,
	     TP_PROTO(u64 handle, s64 offset, u64 len, int ret),
	     TP_ARGS(handle, offset, len, ret)
);

/*
 * An RMA as asked for (write: to the peer, else from it; loffset -1 for
 * a buffer rather than a window).
 */
TRACE_EVENT(scif_rma_submit,
	    TP_PROTO(u64 handle, bool write, s64 loffset,
		     s64 roffset, u64 len, int flags),
	    TP_ARGS(handle, write, loffset, roffset, len, flags),
	    TP_STRUCT__entry(__field(u64, handle)
			     __field(bool, write)
			     __field(s64, loffset)
			     __field(s64, roffset)
			     __field(u64, len)
			     __field(int, flags)),
	    TP_fast_assign(__entry->handle = handle;
			   __entry->write = write;
			   __entry->loffset = loffset;
			   __entry->roffset = roffset;
			   __entry->len = len;
			   __entry->flags = flags;),
	    TP_printk("ep=%#llx write=%d loffset=%#llx roffset=%#llx len=%llu flags=%#x",
		      __entry->handle,
		      __entry->write,
		      __entry->loffset,
		      __entry->roffset,
		      __entry->len,
		      __entry->flags)
);

/*
 * One piece of an RMA copied (by its caller or the copy engine), or a
 * fence signal written (signal=1, 8 bytes): the pieces of an RMA add up
 * to its length.
 */
TRACE_EVENT(scif_rma_complete,
	    TP_PROTO(u64 handle, u64 len, bool signal,
		     bool engine, int err),
	    TP_ARGS(handle, len, signal, engine, err),
	    TP_STRUCT__entry(__field(u64, handle)
			     __field(u64, len)
			     __field(bool, signal)
			     __field(bool, engine)
			     __field(int, err)),
	    TP_fast_assign(__entry->handle = handle;
			   __entry->len = len;
			   __entry->signal = signal;
			   __entry->engine = engine;
			   __entry->err = err;),
	    TP_printk("ep=%#llx len=%llu signal=%d engine=%d err=%d",
		      __entry->handle,
		      __entry->len,
		      __entry->signal,
		      __entry->engine,
		      __entry->err)
);

/* fence mark, wait and signal: the mark (or value signalled), result. */
TRACE_EVENT(scif_fence,
	    TP_PROTO(u64 handle, const char *op, u64 value,
		     int flags, int ret),
	    TP_ARGS(handle, op, value, flags, ret),
	    TP_STRUCT__entry(__field(u64, handle)
			     __string(op, op)
			     __field(u64, value)
			     __field(int, flags)
			     __field(int, ret)),
	    TP_fast_assign(__entry->handle = handle;
			   scif_assign_str(op, op);
			   __entry->value = value;
			   __entry->flags = flags;
			   __entry->ret = ret;),
	    TP_printk("ep=%#llx op=%s value=%#llx flags=%#x ret=%d",
		      __entry->handle,
		      __get_str(op),
		      __entry->value,
		      __entry->flags,
		      __entry->ret)
);

/* A node came online, went (down), or was failed for an error (why). */
DECLARE_EVENT_CLASS(scif_node_event,
		    TP_PROTO(u16 node, const char *bus, u32 generation,
			     const char *why),
		    TP_ARGS(node, bus, generation, why),
		    TP_STRUCT__entry(__field(u16, node)
				     __string(bus, bus)
				     __field(u32, generation)
				     __string(why, why)),
		    TP_fast_assign(__entry->node = node;
				   scif_assign_str(bus, bus);
				   __entry->generation = generation;
				   scif_assign_str(why, why);),
		    TP_printk("node=%u bus=%s generation=%u why=%s",
			      __entry->node,
			      __get_str(bus),
			      __entry->generation,
			      __get_str(why))
);

DEFINE_EVENT(scif_node_event, scif_node_up,
	     TP_PROTO(u16 node, const char *bus, u32 generation,
		      const char *why),
	     TP_ARGS(node, bus, generation, why)
);

DEFINE_EVENT(scif_node_event, scif_node_down,
	     TP_PROTO(u16 node, const char *bus, u32 generation,
		      const char *why),
	     TP_ARGS(node, bus, generation, why)
);

DEFINE_EVENT(scif_node_event, scif_node_failed,
	     TP_PROTO(u16 node, const char *bus, u32 generation,
		      const char *why),
	     TP_ARGS(node, bus, generation, why)
);

#endif /* _SCIF_TRACE_H_ */

/* Out of the kernel tree: the header is found next to its users. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE scif_trace
#include <trace/define_trace.h>
