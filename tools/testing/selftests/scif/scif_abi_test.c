// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/scif ioctl ABI: sizes, field offsets, ioctl numbers and flag
 * values must match the original SCIF driver's on x86_64 exactly, or
 * existing binaries and libscif.so.0 break.
 */
#include <stddef.h>
#include <linux/scif_ioctl.h>

#include "kselftest_harness.h"

#define EXPECT_LAYOUT(type, field, off) \
	EXPECT_EQ((size_t)(off), offsetof(struct type, field))

TEST(struct_sizes)
{
	EXPECT_EQ(4, sizeof(struct scif_port_id));
	EXPECT_EQ(8, sizeof(struct scifioctl_connect));
	EXPECT_EQ(16, sizeof(struct scifioctl_accept));
	EXPECT_EQ(24, sizeof(struct scifioctl_msg));
	EXPECT_EQ(40, sizeof(struct scifioctl_reg));
	EXPECT_EQ(16, sizeof(struct scifioctl_unreg));
	EXPECT_EQ(40, sizeof(struct scifioctl_copy));
	EXPECT_EQ(16, sizeof(struct scifioctl_fence_mark));
	EXPECT_EQ(40, sizeof(struct scifioctl_fence_signal));
	EXPECT_EQ(24, sizeof(struct scifioctl_node_ids));
}

TEST(field_offsets)
{
	EXPECT_LAYOUT(scif_port_id, node, 0);
	EXPECT_LAYOUT(scif_port_id, port, 2);
	EXPECT_LAYOUT(scifioctl_connect, self, 0);
	EXPECT_LAYOUT(scifioctl_connect, peer, 4);
	EXPECT_LAYOUT(scifioctl_accept, flags, 0);
	EXPECT_LAYOUT(scifioctl_accept, peer, 4);
	EXPECT_LAYOUT(scifioctl_accept, endpt, 8);
	EXPECT_LAYOUT(scifioctl_msg, msg, 0);
	EXPECT_LAYOUT(scifioctl_msg, len, 8);
	EXPECT_LAYOUT(scifioctl_msg, flags, 12);
	EXPECT_LAYOUT(scifioctl_msg, out_len, 16);
	EXPECT_LAYOUT(scifioctl_reg, addr, 0);
	EXPECT_LAYOUT(scifioctl_reg, len, 8);
	EXPECT_LAYOUT(scifioctl_reg, offset, 16);
	EXPECT_LAYOUT(scifioctl_reg, prot, 24);
	EXPECT_LAYOUT(scifioctl_reg, flags, 28);
	EXPECT_LAYOUT(scifioctl_reg, out_offset, 32);
	EXPECT_LAYOUT(scifioctl_unreg, offset, 0);
	EXPECT_LAYOUT(scifioctl_unreg, len, 8);
	EXPECT_LAYOUT(scifioctl_copy, loffset, 0);
	EXPECT_LAYOUT(scifioctl_copy, len, 8);
	EXPECT_LAYOUT(scifioctl_copy, roffset, 16);
	EXPECT_LAYOUT(scifioctl_copy, addr, 24);
	EXPECT_LAYOUT(scifioctl_copy, flags, 32);
	EXPECT_LAYOUT(scifioctl_fence_mark, flags, 0);
	EXPECT_LAYOUT(scifioctl_fence_mark, mark, 8);
	EXPECT_LAYOUT(scifioctl_fence_signal, loff, 0);
	EXPECT_LAYOUT(scifioctl_fence_signal, lval, 8);
	EXPECT_LAYOUT(scifioctl_fence_signal, roff, 16);
	EXPECT_LAYOUT(scifioctl_fence_signal, rval, 24);
	EXPECT_LAYOUT(scifioctl_fence_signal, flags, 32);
	EXPECT_LAYOUT(scifioctl_node_ids, nodes, 0);
	EXPECT_LAYOUT(scifioctl_node_ids, self, 8);
	EXPECT_LAYOUT(scifioctl_node_ids, len, 16);
}

TEST(ioctl_numbers)
{
	EXPECT_EQ(0xc0087301UL, (unsigned long)SCIF_BIND);
	EXPECT_EQ(0x40047302UL, (unsigned long)SCIF_LISTEN);
	EXPECT_EQ(0xc0087303UL, (unsigned long)SCIF_CONNECT);
	EXPECT_EQ(0xc0107304UL, (unsigned long)SCIF_ACCEPTREQ);
	EXPECT_EQ(0xc0087305UL, (unsigned long)SCIF_ACCEPTREG);
	EXPECT_EQ(0xc0187306UL, (unsigned long)SCIF_SEND);
	EXPECT_EQ(0xc0187307UL, (unsigned long)SCIF_RECV);
	EXPECT_EQ(0xc0287308UL, (unsigned long)SCIF_REG);
	EXPECT_EQ(0xc0107309UL, (unsigned long)SCIF_UNREG);
	EXPECT_EQ(0xc028730aUL, (unsigned long)SCIF_READFROM);
	EXPECT_EQ(0xc028730bUL, (unsigned long)SCIF_WRITETO);
	EXPECT_EQ(0xc028730cUL, (unsigned long)SCIF_VREADFROM);
	EXPECT_EQ(0xc028730dUL, (unsigned long)SCIF_VWRITETO);
	EXPECT_EQ(0xc018730eUL, (unsigned long)SCIF_GET_NODEIDS);
	EXPECT_EQ(0xc010730fUL, (unsigned long)SCIF_FENCE_MARK);
	EXPECT_EQ(0xc0047310UL, (unsigned long)SCIF_FENCE_WAIT);
	EXPECT_EQ(0xc0287311UL, (unsigned long)SCIF_FENCE_SIGNAL);
}

/*
 * The device-list extensions (Documentation/scif/devices.rst): not in
 * the original driver, so this pins the layout this driver chose.
 */
TEST(dev_extensions)
{
	EXPECT_EQ(128, sizeof(struct scif_dev_entry));
	EXPECT_EQ(40, sizeof(struct scifioctl_dev_list));
	EXPECT_EQ(24, sizeof(struct scifioctl_dev_borrow));
	EXPECT_LAYOUT(scif_dev_entry, pci_class, 8);
	EXPECT_LAYOUT(scif_dev_entry, node, 16);
	EXPECT_LAYOUT(scif_dev_entry, revision, 26);
	EXPECT_LAYOUT(scif_dev_entry, state, 29);
	EXPECT_LAYOUT(scif_dev_entry, bar_size, 32);
	EXPECT_LAYOUT(scif_dev_entry, bar_flags, 80);
	EXPECT_LAYOUT(scif_dev_entry, name, 96);
	EXPECT_LAYOUT(scif_dev_entry, reserved2, 112);
	EXPECT_LAYOUT(scifioctl_dev_list, node, 16);
	EXPECT_LAYOUT(scifioctl_dev_list, max, 20);
	EXPECT_LAYOUT(scifioctl_dev_list, entries, 24);
	EXPECT_LAYOUT(scifioctl_dev_list, count, 32);
	EXPECT_LAYOUT(scifioctl_dev_borrow, flags, 8);
	EXPECT_LAYOUT(scifioctl_dev_borrow, fd, 12);
	EXPECT_LAYOUT(scifioctl_dev_borrow, reserved, 16);
	EXPECT_EQ(0xc0287325UL, (unsigned long)SCIF_DEV_LIST);
	EXPECT_EQ(0xc0187326UL, (unsigned long)SCIF_DEV_BORROW);
	EXPECT_EQ(0x80807327UL, (unsigned long)SCIF_DEV_INFO);
}

/* Windows over device memory (devices.rst): the layout devices.rst gives. */
TEST(reg_pci)
{
	EXPECT_EQ(48, sizeof(struct scifioctl_reg_pci));
	EXPECT_LAYOUT(scifioctl_reg_pci, domain, 0);
	EXPECT_LAYOUT(scifioctl_reg_pci, bus, 4);
	EXPECT_LAYOUT(scifioctl_reg_pci, devfn, 5);
	EXPECT_LAYOUT(scifioctl_reg_pci, bar, 6);
	EXPECT_LAYOUT(scifioctl_reg_pci, reserved0, 7);
	EXPECT_LAYOUT(scifioctl_reg_pci, bar_offset, 8);
	EXPECT_LAYOUT(scifioctl_reg_pci, len, 16);
	EXPECT_LAYOUT(scifioctl_reg_pci, offset, 24);
	EXPECT_LAYOUT(scifioctl_reg_pci, prot, 32);
	EXPECT_LAYOUT(scifioctl_reg_pci, flags, 36);
	EXPECT_LAYOUT(scifioctl_reg_pci, out_offset, 40);
	EXPECT_EQ(0xc0307328UL, (unsigned long)SCIF_REG_PCI);
	EXPECT_EQ(0xc0207324UL, (unsigned long)SCIF_DMABUF_EXPORT);
	EXPECT_EQ(32, sizeof(struct scifioctl_dmabuf));
	EXPECT_LAYOUT(scifioctl_dmabuf, offset, 0);
	EXPECT_LAYOUT(scifioctl_dmabuf, len, 8);
	EXPECT_LAYOUT(scifioctl_dmabuf, prot, 16);
	EXPECT_LAYOUT(scifioctl_dmabuf, flags, 20);
	EXPECT_LAYOUT(scifioctl_dmabuf, fd, 24);
	EXPECT_LAYOUT(scifioctl_dmabuf, reserved, 28);
	EXPECT_EQ(1, SCIF_DMABUF_REMOTE);
}

TEST(flag_values)
{
	EXPECT_EQ(1, SCIF_ACCEPT_SYNC);
	EXPECT_EQ(1, SCIF_SEND_BLOCK);
	EXPECT_EQ(1, SCIF_RECV_BLOCK);
	EXPECT_EQ(1, SCIF_PROT_READ);
	EXPECT_EQ(2, SCIF_PROT_WRITE);
	EXPECT_EQ(0x10, SCIF_MAP_FIXED);
	EXPECT_EQ(0x20, SCIF_MAP_KERNEL);
	EXPECT_EQ(1, SCIF_FENCE_INIT_SELF);
	EXPECT_EQ(2, SCIF_FENCE_INIT_PEER);
	EXPECT_EQ(0x10, SCIF_SIGNAL_LOCAL);
	EXPECT_EQ(0x20, SCIF_SIGNAL_REMOTE);
	EXPECT_EQ(1, SCIF_RMA_USECPU);
	EXPECT_EQ(2, SCIF_RMA_USECACHE);
	EXPECT_EQ(4, SCIF_RMA_SYNC);
	EXPECT_EQ(8, SCIF_RMA_ORDERED);
	EXPECT_EQ(1024, SCIF_ADMIN_PORT_END);
	EXPECT_EQ(1088, SCIF_PORT_RSVD);
}

TEST_HARNESS_MAIN
