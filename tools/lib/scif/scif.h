/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libscif: the user-space interface to SCIF endpoints.
 *
 * An endpoint is an open file of /dev/scif, and scif_epd_t is that file
 * descriptor, so endpoints work with poll(2), fcntl(2) and close(2) too.
 * Every call returns -1 (SCIF_OPEN_FAILED, SCIF_REGISTER_FAILED or
 * SCIF_MMAP_FAILED where the return type asks for it) and sets errno on
 * failure.  Flag values and struct scif_port_id come from the driver's
 * user ABI header, installed as <scif/scif_ioctl.h>.  See scif_open(3)
 * and the pages it refers to.
 *
 * The names MPSS's <scif.h> offered besides (the SCIF_POLL* events,
 * scif_portID_t and portID_t, the deprecated flag aliases, the ports MPSS
 * reserved for its services) are here too, so that programs written for
 * MPSS compile unchanged; define SCIF_NO_MPSS_COMPAT before including this
 * header to leave them out.  Documentation/scif/porting.rst lists what
 * differs from MPSS.
 */
#ifndef _SCIF_H
#define _SCIF_H

#include <stddef.h>
#include <stdint.h>
#include <poll.h>
#include <sys/types.h>
#include <scif/scif_ioctl.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int scif_epd_t;

#define SCIF_OPEN_FAILED	((scif_epd_t)-1)
#define SCIF_REGISTER_FAILED	((off_t)-1)
#define SCIF_MMAP_FAILED	((void *)-1)

/* The name older programs use for struct scif_port_id. */
#define scif_portID		scif_port_id

#ifndef SCIF_NO_MPSS_COMPAT
typedef struct scif_port_id scif_portID_t;

/*
 * MPSS's deprecated spellings: struct portID and portID_t for the port
 * id, and the flag names without the SCIF_ prefix.
 */
#define portID			scif_portID
typedef struct scif_port_id portID_t;
#define ACCEPT_SYNC		SCIF_ACCEPT_SYNC
#define SEND_BLOCK		SCIF_SEND_BLOCK
#define RECV_BLOCK		SCIF_RECV_BLOCK

/*
 * Fence flags MPSS used for its RAS agent.  Declared so that such code
 * compiles; this driver has no RAS agent, and scif_fence_mark() and
 * scif_fence_signal() fail with EINVAL when given them.
 */
#define SCIF_FENCE_RAS_SELF	(1 << 2)
#define SCIF_FENCE_RAS_PEER	(1 << 3)

/* Events of struct scif_pollepd: those of poll(2). */
#define SCIF_POLLIN		POLLIN
#define SCIF_POLLOUT		POLLOUT
#define SCIF_POLLERR		POLLERR
#define SCIF_POLLHUP		POLLHUP
#define SCIF_POLLNVAL		POLLNVAL

/*
 * Ports MPSS reserved for its own services, ten of each (_0 to _9).
 * Below SCIF_ADMIN_PORT_END only a privileged process may bind them, here
 * as there; nothing in this driver listens on them.
 */
/* offload (COI) daemons */
#define SCIF_COI_PORT_0	40
#define SCIF_COI_PORT_1	41
#define SCIF_COI_PORT_2	42
#define SCIF_COI_PORT_3	43
#define SCIF_COI_PORT_4	44
#define SCIF_COI_PORT_5	45
#define SCIF_COI_PORT_6	46
#define SCIF_COI_PORT_7	47
#define SCIF_COI_PORT_8	48
#define SCIF_COI_PORT_9	49
/* InfiniBand verbs over SCIF */
#define SCIF_OFED_PORT_0	60
#define SCIF_OFED_PORT_1	61
#define SCIF_OFED_PORT_2	62
#define SCIF_OFED_PORT_3	63
#define SCIF_OFED_PORT_4	64
#define SCIF_OFED_PORT_5	65
#define SCIF_OFED_PORT_6	66
#define SCIF_OFED_PORT_7	67
#define SCIF_OFED_PORT_8	68
#define SCIF_OFED_PORT_9	69
/* virtual network device */
#define SCIF_NETDEV_PORT_0	80
#define SCIF_NETDEV_PORT_1	81
#define SCIF_NETDEV_PORT_2	82
#define SCIF_NETDEV_PORT_3	83
#define SCIF_NETDEV_PORT_4	84
#define SCIF_NETDEV_PORT_5	85
#define SCIF_NETDEV_PORT_6	86
#define SCIF_NETDEV_PORT_7	87
#define SCIF_NETDEV_PORT_8	88
#define SCIF_NETDEV_PORT_9	89
/* reliability agent */
#define SCIF_RAS_PORT_0	100
#define SCIF_RAS_PORT_1	101
#define SCIF_RAS_PORT_2	102
#define SCIF_RAS_PORT_3	103
#define SCIF_RAS_PORT_4	104
#define SCIF_RAS_PORT_5	105
#define SCIF_RAS_PORT_6	106
#define SCIF_RAS_PORT_7	107
#define SCIF_RAS_PORT_8	108
#define SCIF_RAS_PORT_9	109
/* power management */
#define SCIF_PM_PORT_0	120
#define SCIF_PM_PORT_1	121
#define SCIF_PM_PORT_2	122
#define SCIF_PM_PORT_3	123
#define SCIF_PM_PORT_4	124
#define SCIF_PM_PORT_5	125
#define SCIF_PM_PORT_6	126
#define SCIF_PM_PORT_7	127
#define SCIF_PM_PORT_8	128
#define SCIF_PM_PORT_9	129
/* board tools */
#define SCIF_BT_PORT_0	130
#define SCIF_BT_PORT_1	131
#define SCIF_BT_PORT_2	132
#define SCIF_BT_PORT_3	133
#define SCIF_BT_PORT_4	134
#define SCIF_BT_PORT_5	135
#define SCIF_BT_PORT_6	136
#define SCIF_BT_PORT_7	137
#define SCIF_BT_PORT_8	138
#define SCIF_BT_PORT_9	139
/* shared virtual memory (MYO) */
#define SCIF_MYO_PORT_0	1025
#define SCIF_MYO_PORT_1	1026
#define SCIF_MYO_PORT_2	1027
#define SCIF_MYO_PORT_3	1028
#define SCIF_MYO_PORT_4	1029
#define SCIF_MYO_PORT_5	1030
#define SCIF_MYO_PORT_6	1031
#define SCIF_MYO_PORT_7	1032
#define SCIF_MYO_PORT_8	1033
#define SCIF_MYO_PORT_9	1034
/* software tools */
#define SCIF_ST_PORT_0	1044
#define SCIF_ST_PORT_1	1045
#define SCIF_ST_PORT_2	1046
#define SCIF_ST_PORT_3	1047
#define SCIF_ST_PORT_4	1048
#define SCIF_ST_PORT_5	1049
#define SCIF_ST_PORT_6	1050
#define SCIF_ST_PORT_7	1051
#define SCIF_ST_PORT_8	1052
#define SCIF_ST_PORT_9	1053
#endif /* SCIF_NO_MPSS_COMPAT */

/* Laid out exactly like struct pollfd. */
struct scif_pollepd {
	scif_epd_t epd;
	short events;
	short revents;
};

scif_epd_t scif_open(void);
int scif_close(scif_epd_t epd);
int scif_bind(scif_epd_t epd, uint16_t pn);
int scif_listen(scif_epd_t epd, int backlog);
int scif_connect(scif_epd_t epd, struct scif_port_id *dst);
int scif_accept(scif_epd_t epd, struct scif_port_id *peer,
		scif_epd_t *newepd, int flags);
int scif_send(scif_epd_t epd, void *msg, int len, int flags);
int scif_recv(scif_epd_t epd, void *msg, int len, int flags);
off_t scif_register(scif_epd_t epd, void *addr, size_t len, off_t offset,
		    int prot_flags, int map_flags);
int scif_unregister(scif_epd_t epd, off_t offset, size_t len);
void *scif_mmap(void *addr, size_t len, int prot_flags, int map_flags,
		scif_epd_t epd, off_t offset);
int scif_munmap(void *addr, size_t len);
int scif_readfrom(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
		  int rma_flags);
int scif_writeto(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
		 int rma_flags);
int scif_vreadfrom(scif_epd_t epd, void *addr, size_t len, off_t roffset,
		   int rma_flags);
int scif_vwriteto(scif_epd_t epd, void *addr, size_t len, off_t roffset,
		  int rma_flags);
int scif_fence_mark(scif_epd_t epd, int flags, int *mark);
int scif_fence_wait(scif_epd_t epd, int mark);
int scif_fence_signal(scif_epd_t epd, off_t loff, uint64_t lval, off_t roff,
		      uint64_t rval, int flags);
int scif_get_nodeIDs(uint16_t *nodes, int len, uint16_t *self);
int scif_get_fd(scif_epd_t epd);
int scif_poll(struct scif_pollepd *epds, unsigned int nepds, long timeout);

/*
 * Devices across the fabric (Documentation/scif/devices.rst): which
 * lent PCI functions scif_get_device_list() gives.  pci_class and
 * class_mask: (class code & class_mask) == pci_class; vendor, device:
 * 0xffff for any; flags: SCIF_DEV_FREE for those borrowable now.
 */
struct scif_dev_filter {
	uint32_t pci_class;
	uint32_t class_mask;
	uint16_t vendor;
	uint16_t device;
	uint32_t flags;
};

int scif_get_device_list(uint16_t node, const struct scif_dev_filter *filter,
			 struct scif_dev_entry *entries, int max);
int scif_borrow_device(uint64_t fdid, int flags);
int scif_get_device_info(int bfd, struct scif_dev_entry *entry);
int scif_return_device(int bfd);
off_t scif_register_pci(scif_epd_t epd, const char *pci_name, int bar,
			off_t bar_offset, size_t len, off_t offset,
			int prot_flags, int map_flags);

#ifdef __cplusplus
}
#endif

#endif /* _SCIF_H */
