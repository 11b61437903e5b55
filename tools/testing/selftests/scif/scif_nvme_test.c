// SPDX-License-Identifier: GPL-2.0
/*
 * A drive's DMA into and out of a device window (Documentation/scif/
 * devices.rst, "Judging it in emulation"), on one node through its
 * loopback node: the project's own small user-space NVMe driver over
 * VFIO (no interrupts, one I/O queue pair, PRP lists) drives QEMU's
 * NVMe controller (1b36:0010; qemu/cluster.sh -I gives it a 16 MiB
 * drive the host filled with a known pattern, and a 1 MiB controller
 * memory buffer in BAR 2).  scif_nvme.sh binds the function to vfio-pci
 * (through scif_devmem_test.sh) and names it in SCIF_DEVMEM_BDF.
 *
 * Endpoint A registers the whole CMB as a device window (SCIF_REG_PCI);
 * endpoint B, its peer, reaches it by RMA (staged: the owner's serve
 * items copy into and out of the BAR).  Rows:
 *   nvme_setup             VFIO container, group, device; the controller
 *                          reset and enabled with its CMB at a controller
 *                          address of our choice (CMBMSC); namespace 1
 *                          identified; an I/O queue pair;
 *   read_local             1 MiB of blocks read into this process's
 *                          memory (mapped for the drive by the IOMMU):
 *                          the host's pattern, word for word;
 *   write_local            1 MiB written from memory, read back: equal;
 *   read_into_cmb          the drive reads 256 KiB of blocks into its own
 *                          CMB (data pointers in the CMB); B reads the
 *                          device window with scif_vreadfrom(): the host's
 *                          pattern, and the node served exactly those
 *                          bytes (stage_served_*);
 *   rma_into_cmb           B writes 256 KiB into the device window with
 *                          scif_vwriteto(); the drive writes them from the
 *                          CMB to blocks; read back into memory: B's bytes;
 *   cross_rma_into_cmb     the same with the other node of the cluster as
 *                          the writer (staged across the link);
 *   cross_read_from_peer_cmb  the other node's drive reads blocks into
 *                          its CMB; read from here with scif_vreadfrom();
 *   devmap_refusals, devmap_vfio_map, read_into_remote,
 *   write_from_remote, revoke_unregister, devmap_release_unpins,
 *   devmap_owner           the drive's DMA into and out of a RAM window of
 *                          the other node through a device-map file
 *                          (t_remote() says what each checks).
 * Mode "loss" (scif_devmap_loss.sh): node 1 leaves while node 0 holds a
 * device-map file of its window.  Mode "bench" ["quick"]
 * (scif_nvme_bench.sh, scripts/bench-nvme.sh): node 0's drive reads and
 * writes blocks into and from node 1's window through a device-map file,
 * beside its own memory and the CPU path, and prints the figures as
 * "# nvme-bench" lines; rows bench_setup, bench_{read,write}_{local,
 * remote,cpu} (every figure's bytes) and, on node 1, bench_window_served.
 * Mode "image FILE PEER", on the host once the cluster is over
 * (scripts/check.sh): whether a node's drive image FILE holds, where
 * write_from_remote wrote them, the bytes of node PEER's window.
 * One TAP line per row; a failed row says what it saw.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/vfio.h>
#include "scif.h"
#include "scif_rows.h"

#define NVME_PORT	2390
#define PG		4096UL
#define CMB_BAR		2
#define CMB_LEN		(1024 * 1024UL)
/* Where the controller sees its CMB (CMBMSC.CBA): far from our IOVAs. */
#define CMB_CBA		(1ULL << 40)
#define IOVA_BASE	0x10000000ULL
#define QDEPTH		64
#define XFER_MAX	(128 * 1024UL)	/* one PRP list page covers it */
#define DATA_LEN	(2 * 1024 * 1024UL)
/* Layout of the DMA area, from IOVA_BASE. */
#define OFF_ASQ		0x0000
#define OFF_ACQ		0x1000
#define OFF_IOSQ	0x2000
#define OFF_IOCQ	0x3000
#define OFF_IDENT	0x4000
#define OFF_PRP		0x5000
#define OFF_DATA	0x10000
#define AREA_LEN	(OFF_DATA + DATA_LEN)

/* Controller registers (NVMe base specification). */
#define REG_CAP		0x00
#define REG_CC		0x14
#define REG_CSTS	0x1c
#define REG_AQA		0x24
#define REG_ASQ		0x28
#define REG_ACQ		0x30
#define REG_CMBLOC	0x38
#define REG_CMBSZ	0x3c
#define REG_CMBMSC	0x50
#define REG_DBS		0x1000

struct nvme_sqe {
	uint32_t cdw0, nsid, cdw2, cdw3;
	uint64_t mptr, prp1, prp2;
	uint32_t cdw10, cdw11, cdw12, cdw13, cdw14, cdw15;
};

struct nvme_cqe {
	uint32_t dw0, dw1, dw2, dw3;
};

struct nvme_q {
	volatile void *ring;
	uint16_t qid, tail, head;
	int phase;
};

struct nvme {
	int container, dev;
	uint64_t bar0;		/* BAR 0's offset in the device file */
	unsigned int dstrd;
	uint32_t to_ms;
	uint8_t *area;		/* IOMMU-mapped at IOVA_BASE */
	struct nvme_q aq, ioq;
	uint16_t cid;
	unsigned int lba_shift;
	uint64_t nsze;
};


/* The host's pattern (qemu/cluster.sh): word w of block b. */
static uint64_t host_word(uint64_t b, unsigned int w)
{
	return 0x5c1f360000000000ULL | b << 8 | w;
}

/* First word of @len bytes at @p, blocks from @lba on, off the pattern. */
static long off_pattern(const uint8_t *p, uint64_t lba, size_t len)
{
	uint64_t v;

	for (size_t i = 0; i < len; i += 8) {
		memcpy(&v, p + i, 8);
		if (v != host_word(lba + i / 512, (i % 512) / 8))
			return (long)i;
	}
	return -1;
}

/* ---- the NVMe driver: registers through the VFIO device file ---- */

static uint32_t rd32(struct nvme *n, uint32_t reg)
{
	uint32_t v = ~0U;

	if (pread(n->dev, &v, 4, n->bar0 + reg) != 4)
		return ~0U;
	return v;
}

static void wr32(struct nvme *n, uint32_t reg, uint32_t v)
{
	if (pwrite(n->dev, &v, 4, n->bar0 + reg) != 4)
		expect(false, "register %#x: errno %d", reg, errno);
}

/* The high half first: the low half's write is what QEMU acts on. */
static void wr64(struct nvme *n, uint32_t reg, uint64_t v)
{
	wr32(n, reg + 4, v >> 32);
	wr32(n, reg, (uint32_t)v);
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static bool wait_ready(struct nvme *n, bool ready)
{
	uint64_t end = ms_now() + n->to_ms;

	while (((rd32(n, REG_CSTS) & 1) != 0) != ready) {
		if (ms_now() > end)
			return expect(false, "CSTS.RDY not %d after %u ms", ready,
				      n->to_ms);
		usleep(1000);
	}
	return true;
}

static uint32_t doorbell(struct nvme *n, uint16_t qid, bool cq)
{
	return REG_DBS + (2 * qid + cq) * (4U << n->dstrd);
}

/* Submit @sqe on @q and poll for its completion: 0 or the status. */
static int submit(struct nvme *n, struct nvme_q *q, struct nvme_sqe *sqe)
{
	volatile struct nvme_sqe *sq = q->ring;
	volatile struct nvme_cqe *cq;
	uint64_t end = ms_now() + 5000;
	uint32_t dw3;

	/* Each completion queue is the page after its submission queue. */
	cq = (volatile void *)((volatile uint8_t *)q->ring + PG);
	sqe->cdw0 = (sqe->cdw0 & 0xffff) | (uint32_t)++n->cid << 16;
	memcpy((void *)&sq[q->tail], sqe, sizeof(*sqe));
	q->tail = (q->tail + 1) % QDEPTH;
	__sync_synchronize();
	wr32(n, doorbell(n, q->qid, false), q->tail);
	for (;;) {
		dw3 = cq[q->head].dw3;
		if (((dw3 >> 16) & 1) == (uint32_t)q->phase)
			break;
		if (ms_now() > end) {
			expect(false, "command %#x: no completion in 5 s",
			       sqe->cdw0 & 0xff);
			return -1;
		}
	}
	__sync_synchronize();
	q->head = (q->head + 1) % QDEPTH;
	if (!q->head)
		q->phase ^= 1;
	wr32(n, doorbell(n, q->qid, true), q->head);
	if ((dw3 & 0xffff) != n->cid)
		return expect(false, "completion for cid %u, not %u",
			      dw3 & 0xffff, n->cid), -1;
	if (dw3 >> 17)
		expect(false, "command %#x: status %#x", sqe->cdw0 & 0xff,
		       dw3 >> 17);
	return (int)(dw3 >> 17);
}

static int vfio_open(struct nvme *n, const char *bdf)
{
	struct vfio_group_status st = { .argsz = sizeof(st) };
	struct vfio_region_info ri = { .argsz = sizeof(ri) };
	struct vfio_iommu_type1_dma_map m = { .argsz = sizeof(m) };
	char path[160], link[128], *grp;
	ssize_t len;
	uint16_t cmd;
	int g;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group",
		 bdf);
	len = readlink(path, link, sizeof(link) - 1);
	if (len < 0)
		return expect(false, "%s: errno %d", path, errno), -1;
	link[len] = '\0';
	grp = strrchr(link, '/');
	snprintf(path, sizeof(path), "/dev/vfio/%s", grp ? grp + 1 : link);
	n->container = open("/dev/vfio/vfio", O_RDWR);
	g = open(path, O_RDWR);
	if (n->container < 0 || g < 0)
		return expect(false, "open %s: errno %d", path, errno), -1;
	if (ioctl(g, VFIO_GROUP_GET_STATUS, &st) < 0 ||
	    !(st.flags & VFIO_GROUP_FLAGS_VIABLE) ||
	    ioctl(g, VFIO_GROUP_SET_CONTAINER, &n->container) < 0 ||
	    ioctl(n->container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU) < 0)
		return expect(false, "group %s: errno %d", path, errno), -1;
	n->dev = ioctl(g, VFIO_GROUP_GET_DEVICE_FD, bdf);
	if (n->dev < 0)
		return expect(false, "device %s: errno %d", bdf, errno), -1;
	ri.index = VFIO_PCI_BAR0_REGION_INDEX;
	if (ioctl(n->dev, VFIO_DEVICE_GET_REGION_INFO, &ri) < 0)
		return expect(false, "BAR 0: errno %d", errno), -1;
	n->bar0 = ri.offset;
	/* Memory decoding and bus mastering: the command register. */
	ri.index = VFIO_PCI_CONFIG_REGION_INDEX;
	if (ioctl(n->dev, VFIO_DEVICE_GET_REGION_INFO, &ri) < 0 ||
	    pread(n->dev, &cmd, 2, ri.offset + 4) != 2)
		return expect(false, "config space: errno %d", errno), -1;
	cmd |= 0x6;
	if (pwrite(n->dev, &cmd, 2, ri.offset + 4) != 2)
		return expect(false, "command register: errno %d", errno), -1;
	n->area = mmap(NULL, AREA_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (n->area == MAP_FAILED)
		return expect(false, "mmap: errno %d", errno), -1;
	memset(n->area, 0, AREA_LEN);
	m.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE;
	m.vaddr = (uintptr_t)n->area;
	m.iova = IOVA_BASE;
	m.size = AREA_LEN;
	if (ioctl(n->container, VFIO_IOMMU_MAP_DMA, &m) < 0)
		return expect(false, "VFIO_IOMMU_MAP_DMA: errno %d", errno), -1;
	return 0;
}

static int admin(struct nvme *n, uint8_t opc, uint32_t nsid, uint64_t prp1,
		 uint32_t cdw10, uint32_t cdw11)
{
	struct nvme_sqe sqe = {
		.cdw0 = opc, .nsid = nsid, .prp1 = prp1,
		.cdw10 = cdw10, .cdw11 = cdw11,
	};

	return submit(n, &n->aq, &sqe);
}

static int nvme_init(struct nvme *n, const char *bdf)
{
	uint64_t cap;
	uint8_t *id;

	if (vfio_open(n, bdf))
		return -1;
	cap = rd32(n, REG_CAP) | (uint64_t)rd32(n, REG_CAP + 4) << 32;
	n->dstrd = (cap >> 32) & 0xf;
	n->to_ms = ((cap >> 24) & 0xff) * 500 + 1000;
	if (!((cap >> 57) & 1))
		return expect(false, "CAP %#llx: no CMBS",
			      (unsigned long long)cap), -1;
	wr32(n, REG_CC, 0);
	if (!wait_ready(n, false))
		return -1;
	/* The CMB at CMB_CBA for the controller (CRE | CMSE). */
	wr64(n, REG_CMBMSC, CMB_CBA | 3);
	if (((rd32(n, REG_CMBSZ) >> 3) & 3) != 3 ||
	    (rd32(n, REG_CMBLOC) & 7) != CMB_BAR)
		return expect(false, "CMBSZ %#x CMBLOC %#x: no read and write data in BAR %d",
			      rd32(n, REG_CMBSZ), rd32(n, REG_CMBLOC),
			      CMB_BAR), -1;
	wr32(n, REG_AQA, (QDEPTH - 1) << 16 | (QDEPTH - 1));
	wr64(n, REG_ASQ, IOVA_BASE + OFF_ASQ);
	wr64(n, REG_ACQ, IOVA_BASE + OFF_ACQ);
	n->aq = (struct nvme_q){ .ring = n->area + OFF_ASQ, .phase = 1 };
	/* IOCQES 4, IOSQES 6, 4 KiB pages, NVM command set, enabled. */
	wr32(n, REG_CC, 4 << 20 | 6 << 16 | 1);
	if (!wait_ready(n, true) || (rd32(n, REG_CSTS) & 2))
		return expect(false, "CSTS %#x", rd32(n, REG_CSTS)), -1;
	/* Identify namespace 1: its size and block size. */
	if (admin(n, 0x06, 1, IOVA_BASE + OFF_IDENT, 0, 0))
		return -1;
	id = n->area + OFF_IDENT;
	memcpy(&n->nsze, id, 8);
	n->lba_shift = id[128 + 4 * (id[26] & 0xf) + 2];
	if (!n->nsze || n->lba_shift != 9)
		return expect(false, "namespace 1: %llu blocks, shift %u",
			      (unsigned long long)n->nsze, n->lba_shift), -1;
	/* An I/O completion queue and submission queue, 1, polled. */
	if (admin(n, 0x05, 0, IOVA_BASE + OFF_IOCQ, (QDEPTH - 1) << 16 | 1,
		  1) ||
	    admin(n, 0x01, 0, IOVA_BASE + OFF_IOSQ, (QDEPTH - 1) << 16 | 1,
		  1 << 16 | 1))
		return -1;
	n->ioq = (struct nvme_q){ .ring = n->area + OFF_IOSQ, .qid = 1,
				  .phase = 1 };
	return 0;
}

/*
 * READ (0x02) or WRITE (0x01) @len bytes at block @lba, the data at the
 * controller address @addr (page aligned: our IOVAs or the CMB's).
 */
static int nvme_rw(struct nvme *n, uint8_t opc, uint64_t lba, uint64_t addr,
		   size_t len)
{
	uint64_t *prp = (uint64_t *)(n->area + OFF_PRP);
	struct nvme_sqe sqe;
	size_t chunk, i;

	while (len) {
		chunk = len < XFER_MAX ? len : XFER_MAX;
		memset(&sqe, 0, sizeof(sqe));
		sqe.cdw0 = opc;
		sqe.nsid = 1;
		sqe.prp1 = addr;
		if (chunk > 2 * PG) {
			for (i = 1; i < chunk / PG; i++)
				prp[i - 1] = addr + i * PG;
			sqe.prp2 = IOVA_BASE + OFF_PRP;
		} else if (chunk > PG) {
			sqe.prp2 = addr + PG;
		}
		sqe.cdw10 = (uint32_t)lba;
		sqe.cdw11 = lba >> 32;
		sqe.cdw12 = (chunk >> n->lba_shift) - 1;
		if (submit(n, &n->ioq, &sqe))
			return -1;
		lba += chunk >> n->lba_shift;
		addr += chunk;
		len -= chunk;
	}
	return 0;
}

/* ---- SCIF: a pair through the loopback node, the CMB a window ---- */

struct accept_arg {
	int lep, epd;
};

static void *accept_one(void *arg)
{
	struct accept_arg *aa = arg;
	struct scif_port_id from;

	if (scif_accept(aa->lep, &from, &aa->epd, SCIF_ACCEPT_SYNC) < 0)
		aa->epd = -1;
	return NULL;
}

static int connect_pair(int *a, int *b)
{
	struct scif_port_id dst = { .port = NVME_PORT };
	struct accept_arg aa = { .epd = -1 };
	pthread_t t;
	int err;

	if (scif_get_nodeIDs(NULL, 0, &dst.node) < 0)
		return -1;
	aa.lep = scif_open();
	if (aa.lep < 0 || scif_bind(aa.lep, NVME_PORT) < 0 ||
	    scif_listen(aa.lep, 1) < 0 ||
	    pthread_create(&t, NULL, accept_one, &aa))
		return -1;
	*a = scif_open();
	err = *a < 0 || scif_connect(*a, &dst) < 0;
	pthread_join(t, NULL);
	scif_close(aa.lep);
	*b = aa.epd;
	return err || *b < 0 ? -1 : 0;
}

static off_t reg_cmb(int epd, const char *bdf)
{
	struct scifioctl_reg_pci r = {
		.bar = CMB_BAR, .len = CMB_LEN,
		.prot = SCIF_PROT_READ | SCIF_PROT_WRITE,
	};
	unsigned int d, b, v, f;

	if (sscanf(bdf, "%x:%x:%x.%x", &d, &b, &v, &f) != 4)
		return -1;
	r.domain = d;
	r.bus = b;
	r.devfn = v << 3 | f;
	if (ioctl(epd, SCIF_REG_PCI, &r) < 0)
		return -1;
	return r.out_offset;
}

#define LOCAL_LEN	(1024 * 1024UL)
#define CMB_XFER	(256 * 1024UL)
#define LBA_READ_CMB	2048
#define LBA_WRITE	8192
#define LBA_FROM_CMB	16384

static void t_cmb(struct nvme *n, const char *bdf)
{
	uint8_t *data = n->area + OFF_DATA, *got = malloc(CMB_XFER);
	uint8_t *want = malloc(CMB_XFER);
	long served, bad;
	int a = -1, b = -1;
	off_t dw = -1;

	if (!got || !want || connect_pair(&a, &b)) {
		expect(false, "connect: errno %d", errno);
	} else {
		dw = reg_cmb(a, bdf);
		expect(dw >= 0, "SCIF_REG_PCI: errno %d", errno);
	}

	/* The drive reads blocks into its CMB; B reads the window. */
	served = served_bytes();
	bad = -2;
	if (dw >= 0 && !nvme_rw(n, 0x02, LBA_READ_CMB, CMB_CBA, CMB_XFER) &&
	    expect(!scif_vreadfrom(b, got, CMB_XFER, dw, SCIF_RMA_SYNC),
		   "scif_vreadfrom: errno %d", errno))
		bad = off_pattern(got, LBA_READ_CMB, CMB_XFER);
	served = served_bytes() - served;
	result("read_into_cmb",
	       expect(bad == -1, "word at byte %ld off the pattern", bad) &&
	       expect(served == (long)CMB_XFER, "stage_served_* moved by %ld",
		      served));

	/* B writes into the window; the drive writes that to blocks. */
	fill(want, CMB_XFER, 36);
	bad = -2;
	if (dw >= 0 &&
	    expect(!scif_vwriteto(b, want, CMB_XFER, dw + CMB_XFER,
				  SCIF_RMA_SYNC),
		   "scif_vwriteto: errno %d", errno) &&
	    !nvme_rw(n, 0x01, LBA_FROM_CMB, CMB_CBA + CMB_XFER, CMB_XFER)) {
		memset(data, 0, CMB_XFER);
		if (!nvme_rw(n, 0x02, LBA_FROM_CMB, IOVA_BASE + OFF_DATA,
			     CMB_XFER))
			bad = differs(want, data, CMB_XFER);
	}
	result("rma_into_cmb", expect(bad == -1, "byte %ld differs", bad));
	if (a >= 0)
		scif_close(a);
	if (b >= 0)
		scif_close(b);
	free(got);
	free(want);
}

static void t_remote(struct nvme *n, uint16_t self, uint16_t peer);

/* ---- across nodes: the peer's RMA into this drive's CMB ---- */

#define XPORT		2391
#define LBA_X_WRITE	20480
#define LBA_X_READ	4096
#define X_WRITE_OFF	(512 * 1024UL)
#define X_READ_OFF	(768 * 1024UL)

struct cross {
	struct nvme *n;
	const char *bdf;
	uint16_t self, peer;
	bool owner_ok, peer_ok;
	char owner_why[256], peer_why[256];
};

static bool xfer(int epd, void *p, int len, bool send)
{
	int r = send ? scif_send(epd, p, len, SCIF_SEND_BLOCK) :
		       scif_recv(epd, p, len, SCIF_RECV_BLOCK);

	return r == len;
}

/*
 * The owner: the peer connects, is told the CMB window's offset, writes
 * into it; the drive writes that to blocks, which read back must be
 * the peer's bytes.  Then the drive reads blocks into the CMB for the
 * peer to read.
 */
static void *cross_owner(void *arg)
{
	struct cross *x = arg;
	uint8_t *data = x->n->area + OFF_DATA, *want = malloc(CMB_XFER);
	struct scif_port_id from;
	int lep = scif_open(), epd = -1;
	off_t off = -1;
	long bad = -2;
	char c = 0;

	if (!want || lep < 0 || scif_bind(lep, XPORT) < 0 ||
	    scif_listen(lep, 1) < 0 ||
	    scif_accept(lep, &from, &epd, SCIF_ACCEPT_SYNC) < 0) {
		snprintf(x->owner_why, 256, "accept: errno %d", errno);
		goto out;
	}
	off = reg_cmb(epd, x->bdf);
	if (off < 0 || !xfer(epd, &off, sizeof(off), true) ||
	    !xfer(epd, &c, 1, false) || c != 'w') {
		snprintf(x->owner_why, 256, "window %lld: errno %d",
			 (long long)off, errno);
		goto out;
	}
	fill(want, CMB_XFER, 200 + from.node);
	if (!nvme_rw(x->n, 0x01, LBA_X_WRITE, CMB_CBA + X_WRITE_OFF,
		     CMB_XFER)) {
		memset(data, 0, CMB_XFER);
		if (!nvme_rw(x->n, 0x02, LBA_X_WRITE, IOVA_BASE + OFF_DATA,
			     CMB_XFER))
			bad = differs(want, data, CMB_XFER);
	}
	snprintf(x->owner_why, 256, "node %u's bytes: byte %ld differs",
		 from.node, bad);
	x->owner_ok = bad == -1;
	c = 'r';
	if (nvme_rw(x->n, 0x02, LBA_X_READ, CMB_CBA + X_READ_OFF, CMB_XFER) ||
	    !xfer(epd, &c, 1, true) || !xfer(epd, &c, 1, false))
		snprintf(x->owner_why + strlen(x->owner_why),
			 256 - strlen(x->owner_why), "; read for the peer failed");
out:
	if (epd >= 0)
		scif_close(epd);
	if (lep >= 0)
		scif_close(lep);
	free(want);
	return NULL;
}

/* The peer: into the other node's CMB window, and out of it. */
static void *cross_peer(void *arg)
{
	struct scif_port_id dst = { .port = XPORT };
	uint8_t *buf = malloc(CMB_XFER);
	struct cross *x = arg;
	int epd = scif_open(), tries;
	off_t off = -1;
	long bad = -2;
	char c = 'w';

	dst.node = x->peer;
	for (tries = 0; epd >= 0 && tries < 300; tries++) {
		if (scif_connect(epd, &dst) >= 0)
			break;
		usleep(100 * 1000);
	}
	if (!buf || epd < 0 || tries == 300 ||
	    !xfer(epd, &off, sizeof(off), false)) {
		snprintf(x->peer_why, 256, "connect to node %u: errno %d",
			 x->peer, errno);
		goto out;
	}
	fill(buf, CMB_XFER, 200 + x->self);
	if (scif_vwriteto(epd, buf, CMB_XFER, off + X_WRITE_OFF,
			  SCIF_RMA_SYNC) || !xfer(epd, &c, 1, true) ||
	    !xfer(epd, &c, 1, false) || c != 'r') {
		snprintf(x->peer_why, 256, "scif_vwriteto: errno %d", errno);
		goto out;
	}
	memset(buf, 0, CMB_XFER);
	if (!scif_vreadfrom(epd, buf, CMB_XFER, off + X_READ_OFF,
			    SCIF_RMA_SYNC))
		bad = off_pattern(buf, LBA_X_READ, CMB_XFER);
	snprintf(x->peer_why, 256,
		 "node %u's drive: word at byte %ld off the pattern (errno %d)",
		 x->peer, bad, errno);
	x->peer_ok = bad == -1;
	xfer(epd, &c, 1, true);
out:
	if (epd >= 0)
		scif_close(epd);
	free(buf);
	return NULL;
}

/*
 * Each node of the cluster owns its drive and is the other's peer:
 * cross_rma_into_cmb (the peer's scif_vwriteto() into this node's CMB
 * window, then written to blocks by this node's drive) and
 * cross_read_from_peer_cmb (the other node's drive read blocks into its
 * CMB, read here with scif_vreadfrom()).  Both windows are staged
 * across the link, so the owners' serve items copy.
 */
static void t_cross(struct nvme *n, const char *bdf)
{
	struct cross x = { .n = n, .bdf = bdf };
	uint16_t nodes[8];
	pthread_t to, tp;
	int nr, i;

	nr = scif_get_nodeIDs(nodes, 8, &x.self);
	for (i = 0; i < nr && i < 8; i++)
		if (nodes[i] != x.self)
			x.peer = nodes[i];
	if (nr != 2 || x.peer == x.self) {
		expect(false, "%d nodes: not a 2-node cluster", nr);
		result("cross_rma_into_cmb", false);
		return;
	}
	if (pthread_create(&to, NULL, cross_owner, &x) ||
	    pthread_create(&tp, NULL, cross_peer, &x))
		exit(1);
	pthread_join(to, NULL);
	pthread_join(tp, NULL);
	result("cross_rma_into_cmb", expect(x.owner_ok, "%s", x.owner_why));
	result("cross_read_from_peer_cmb", expect(x.peer_ok, "%s", x.peer_why));
	t_remote(n, x.self, x.peer);
}

/* ---- across nodes: the drive's DMA into the peer's window ---- */

#define RPORT		2392
#define R_LEN		(1024 * 1024UL)
#define R_XFER		(256 * 1024UL)
#define IOVA_REMOTE	0x40000000ULL
#define LBA_R_READ	6144
#define LBA_R_WRITE	24576

struct remote {
	struct nvme *n;
	uint16_t self, peer;
	bool ok[8];
	char why[8][400];
};

enum { R_REFUSE, R_VFIO, R_READ, R_WRITE, R_REVOKE, R_RELEASE, R_OWNER };

static const char *const r_rows[] = {
	"devmap_refusals", "devmap_vfio_map", "read_into_remote",
	"write_from_remote", "revoke_unregister", "devmap_release_unpins",
	"devmap_owner",
};

/* This process's pinned pages (VmPin, kB), or -1. */
static long vm_pin_kb(void)
{
	char line[128];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/*
 * The counters of every copy this node's driver makes (by the CPU or its
 * DMA engine, for RMA or for serving staged requests), and its RMA
 * bytes with @peer, as one line.
 */
static void copy_counts(char *buf, size_t len, uint16_t self, uint16_t peer)
{
	char path[96];
	long rb[2] = { -1, -1 };
	uint16_t ids[2] = { self, peer };
	FILE *f;

	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path),
			 "/sys/class/misc/scif/nodes/%u/rma_bytes", ids[i]);
		f = fopen(path, "r");
		if (f && fscanf(f, "%ld", &rb[i]) != 1)
			rb[i] = -1;
		if (f)
			fclose(f);
	}
	snprintf(buf, len, "staged %ld dma %ld served %ld/%ld rma %ld/%ld",
		 rma_stat("staged_bytes"), rma_stat("dma_bytes"),
		 rma_stat("stage_served_dma"), rma_stat("stage_served_cpu"),
		 rb[0], rb[1]);
}

/* Say why row @row failed: @fmt with @v. */
static long rwhy(struct remote *r, int row, const char *fmt, long v)
{
	snprintf(r->why[row], sizeof(r->why[row]), fmt, v);
	return v;
}

/*
 * The owner of a RAM window the other node's drive reads into and writes
 * from, through a device-map file; commands from the peer: 'r' check
 * the pattern, 'w' fill, 'u' unregister, 'c' wait for the pages to be
 * let go of.
 */
static void *remote_owner(void *arg)
{
	struct remote *r = arg;
	long pin0 = vm_pin_kb(), res[3], t;
	struct scif_port_id from;
	int lep = scif_open(), epd = -1;
	uint8_t *buf = NULL;
	off_t off = -1;
	char c;

	r->ok[R_OWNER] = false;
	if (posix_memalign((void **)&buf, PG, R_LEN) || lep < 0 ||
	    scif_bind(lep, RPORT) < 0 || scif_listen(lep, 1) < 0 ||
	    scif_accept(lep, &from, &epd, SCIF_ACCEPT_SYNC) < 0) {
		rwhy(r, R_OWNER, "accept: errno %ld", errno);
		goto out;
	}
	memset(buf, 0, R_LEN);
	off = scif_register(epd, buf, R_LEN, 0,
			    SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	if (off < 0 || !xfer(epd, &off, sizeof(off), true)) {
		rwhy(r, R_OWNER, "scif_register: errno %ld", errno);
		goto out;
	}
	while (xfer(epd, &c, 1, false)) {
		res[0] = res[1] = res[2] = 0;
		if (c == 'r') {
			res[0] = off_pattern(buf, LBA_R_READ, R_XFER);
		} else if (c == 'w') {
			fill(buf + R_XFER, R_XFER, 50 + r->self);
		} else if (c == 'u') {
			t = (long)ms_now();
			res[0] = scif_unregister(epd, off, R_LEN) ? errno : 0;
			res[1] = (long)ms_now() - t;
			res[2] = vm_pin_kb() - pin0;
		} else if (c == 'c') {
			/* devmap_linger_ms (1 s) after the peer's close. */
			for (t = 0; t < 50 && vm_pin_kb() != pin0; t++)
				usleep(100 * 1000);
			res[0] = vm_pin_kb() - pin0;
		}
		if (!xfer(epd, res, sizeof(res), true) || c == 'c')
			break;
	}
	r->ok[R_OWNER] = c == 'c';
	rwhy(r, R_OWNER, "the peer's commands stopped (errno %ld)", errno);
out:
	if (epd >= 0)
		scif_close(epd);
	if (lep >= 0)
		scif_close(lep);
	free(buf);
	return NULL;
}

/* Ask the owner @c; its three answers in @res. */
static bool ask(int epd, char c, long *res)
{
	return xfer(epd, &c, 1, true) && xfer(epd, res, 3 * sizeof(long), false);
}

/* SCIF_DEVMAP_OPEN of @off, @len, @prot (@flags): the fd, or -errno. */
static int devmap(int epd, off_t off, uint64_t len, int prot, uint32_t flags)
{
	struct scifioctl_devmap d = {
		.offset = off, .len = len, .prot = prot, .flags = flags,
	};

	return ioctl(epd, SCIF_DEVMAP_OPEN, &d) < 0 ? -errno : d.fd;
}

/* The refusals: every errno the design names for a bad request. */
static bool devmap_refusals(struct remote *r, int epd, off_t off)
{
	int rw = SCIF_PROT_READ | SCIF_PROT_WRITE, e[5], st = -1;
	pid_t pid;

	e[0] = devmap(epd, off + 1, PG, rw, 0);
	e[1] = devmap(epd, off, 0, rw, 0);
	e[2] = devmap(epd, off, PG, rw, 1);
	e[3] = devmap(epd, off + R_LEN, PG, rw, 0);
	e[4] = devmap(epd, off, PG, 0, 0);
	pid = fork();
	if (!pid)
		_exit(setuid(65534) ? 1 :
		      devmap(epd, off, PG, rw, 0) == -EPERM ? 0 : 2);
	if (pid > 0)
		waitpid(pid, &st, 0);
	snprintf(r->why[R_REFUSE], sizeof(r->why[0]),
		 "%d %d %d %d %d (want -22 -22 -22 -6 -22), unprivileged %d",
		 e[0], e[1], e[2], e[3], e[4], st);
	return e[0] == -EINVAL && e[1] == -EINVAL && e[2] == -EINVAL &&
	       e[3] == -ENXIO && e[4] == -EINVAL && WIFEXITED(st) &&
	       !WEXITSTATUS(st);
}

/* mmap the device-map file; refusals first.  The mapping, or NULL. */
static uint8_t *devmap_mmap(struct remote *r, int fd)
{
	int rw = PROT_READ | PROT_WRITE;
	void *p, *q;

	q = mmap(NULL, R_LEN + PG, rw, MAP_SHARED, fd, 0);
	if (q != MAP_FAILED || errno != ENXIO) {
		rwhy(r, R_VFIO, "mmap past the end: errno %ld", errno);
		return NULL;
	}
	q = mmap(NULL, PG, rw, MAP_PRIVATE, fd, 0);
	if (q != MAP_FAILED || errno != EINVAL) {
		rwhy(r, R_VFIO, "MAP_PRIVATE: errno %ld", errno);
		return NULL;
	}
	p = mmap(NULL, R_LEN, rw, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		rwhy(r, R_VFIO, "mmap: errno %ld", errno);
		return NULL;
	}
	return p;
}

/* The drive reads blocks into the peer's window, then writes from it. */
static void remote_rw(struct remote *r, int epd, uint8_t *p)
{
	char before[160], after[160] = "";
	uint8_t *data = r->n->area + OFF_DATA, *want = malloc(R_XFER);
	long res[3] = { -2 }, bad = -2, cpu;

	copy_counts(before, sizeof(before), r->self, r->peer);
	if (!nvme_rw(r->n, 0x02, LBA_R_READ, IOVA_REMOTE, R_XFER))
		copy_counts(after, sizeof(after), r->self, r->peer);
	if (ask(epd, 'r', res)) {
		cpu = off_pattern(p, LBA_R_READ, R_XFER);
		r->ok[R_READ] = res[0] == -1 && cpu == -1 &&
				!strcmp(before, after);
		snprintf(r->why[R_READ], sizeof(r->why[0]),
			 "at the owner: word %ld off; through the mapping: %ld; copies %s -> %s",
			 res[0], cpu, before, after);
	}
	if (!want || !ask(epd, 'w', res))
		goto out;
	fill(want, R_XFER, 50 + r->peer);
	copy_counts(before, sizeof(before), r->self, r->peer);
	if (!nvme_rw(r->n, 0x01, LBA_R_WRITE, IOVA_REMOTE + R_XFER, R_XFER)) {
		copy_counts(after, sizeof(after), r->self, r->peer);
		memset(data, 0, R_XFER);
		if (!nvme_rw(r->n, 0x02, LBA_R_WRITE, IOVA_BASE + OFF_DATA,
			     R_XFER))
			bad = differs(want, data, R_XFER);
	}
	r->ok[R_WRITE] = bad == -1 && !strcmp(before, after);
	snprintf(r->why[R_WRITE], sizeof(r->why[0]), "byte %ld differs; copies %s -> %s",
		 bad, before, after);
out:
	free(want);
}

/* The owner unregisters: the file is revoked, the pages stay pinned. */
static void remote_revoke(struct remote *r, int epd, int fd)
{
	struct scifioctl_devmap_status st = { -1, -1 };
	struct pollfd pfd = { .fd = fd, .events = POLLPRI };
	long res[3] = { -1 };
	void *q;
	int pr;

	if (!ask(epd, 'u', res))
		return;
	pr = poll(&pfd, 1, 5000);
	ioctl(fd, SCIF_DEVMAP_STATUS, &st);
	q = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, 0);
	r->ok[R_REVOKE] = !res[0] && res[2] > 0 && pr == 1 &&
			  (pfd.revents & (POLLPRI | POLLERR)) ==
			  (POLLPRI | POLLERR) && st.state == 1 &&
			  st.why == ENXIO && q == MAP_FAILED && errno == ENXIO;
	snprintf(r->why[R_REVOKE], sizeof(r->why[0]),
		 "unregister %ld in %ld ms, %ld kB still pinned; poll %d revents %#x; state %d why %d; mmap %s",
		 res[0], res[1], res[2], pr, pfd.revents, st.state, st.why,
		 q == MAP_FAILED ? "refused" : "allowed");
}

static void *remote_reader(void *arg)
{
	struct vfio_iommu_type1_dma_unmap um = { .argsz = sizeof(um) };
	struct vfio_iommu_type1_dma_map m = { .argsz = sizeof(m) };
	struct scif_port_id dst = { .port = RPORT };
	struct remote *r = arg;
	int epd = scif_open(), fd = -1, tries;
	long res[3] = { -1 };
	uint8_t *p = NULL;
	off_t off = -1;

	dst.node = r->peer;
	for (tries = 0; epd >= 0 && tries < 300; tries++) {
		if (scif_connect(epd, &dst) >= 0)
			break;
		usleep(100 * 1000);
	}
	if (epd < 0 || tries == 300 || !xfer(epd, &off, sizeof(off), false)) {
		rwhy(r, R_REFUSE, "connect: errno %ld", errno);
		goto out;
	}
	r->ok[R_REFUSE] = devmap_refusals(r, epd, off);
	fd = devmap(epd, off, R_LEN, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	if (fd < 0) {
		rwhy(r, R_VFIO, "SCIF_DEVMAP_OPEN: %ld", fd);
		goto out;
	}
	p = devmap_mmap(r, fd);
	m.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE;
	m.vaddr = (uintptr_t)p;
	m.iova = IOVA_REMOTE;
	m.size = R_LEN;
	if (!p || ioctl(r->n->container, VFIO_IOMMU_MAP_DMA, &m) < 0) {
		if (p)
			rwhy(r, R_VFIO, "VFIO_IOMMU_MAP_DMA: errno %ld", errno);
		goto out;
	}
	r->ok[R_VFIO] = true;
	remote_rw(r, epd, p);
	remote_revoke(r, epd, fd);
	um.iova = IOVA_REMOTE;
	um.size = R_LEN;
	ioctl(r->n->container, VFIO_IOMMU_UNMAP_DMA, &um);
	munmap(p, R_LEN);
	p = NULL;
	close(fd);
	fd = -1;
	if (ask(epd, 'c', res))
		r->ok[R_RELEASE] = !res[0];
	rwhy(r, R_RELEASE, "%ld kB still pinned at the owner 5 s after the close",
	     res[0]);
out:
	if (p)
		munmap(p, R_LEN);
	if (fd >= 0)
		close(fd);
	if (epd >= 0)
		scif_close(epd);
	return NULL;
}

/*
 * Each node's drive reads blocks into a RAM window of the other node and
 * writes blocks from it, through a device-map file of that window mapped
 * into the drive's IOMMU domain (read_into_remote, write_from_remote:
 * checked at the owner, through the mapping and by reading the blocks
 * back; this node's RMA counters do not move: no CPU copy here); the
 * owner's unregistration revokes the file (revoke_unregister) and the
 * pages are let go of only after the close (devmap_release_unpins).
 */
static void t_remote(struct nvme *n, uint16_t self, uint16_t peer)
{
	struct remote r = { .n = n, .self = self, .peer = peer };
	pthread_t to, tr;
	unsigned int i;

	for (i = 0; i < 7; i++)
		snprintf(r.why[i], sizeof(r.why[0]), "not reached");
	if (pthread_create(&to, NULL, remote_owner, &r) ||
	    pthread_create(&tr, NULL, remote_reader, &r))
		exit(1);
	pthread_join(tr, NULL);
	pthread_join(to, NULL);
	for (i = 0; i < 7; i++)
		result(r_rows[i], expect(r.ok[i], "%s", r.why[i]));
}

/* ---- node loss with a device-map file open (mode "loss") ---- */

#define LPORT		2393
#define LBA_HELD	12288

/*
 * Node 1: a window for node 0's drive; once told, this node leaves (its
 * bus unloaded) and comes back (loaded again, a new life), and must be
 * let in again by node 0 only once node 0 released its device-map file.
 */
static void loss_owner(uint16_t peer)
{
	struct scif_port_id from;
	int lep = scif_open(), epd = -1, rc = -1;
	uint8_t *buf = NULL;
	off_t off = -1;
	char c = 0;

	if (!posix_memalign((void **)&buf, PG, R_LEN) && lep >= 0 &&
	    scif_bind(lep, LPORT) >= 0 && scif_listen(lep, 1) >= 0 &&
	    scif_accept(lep, &from, &epd, SCIF_ACCEPT_SYNC) >= 0) {
		memset(buf, 0, R_LEN);
		off = scif_register(epd, buf, R_LEN, 0,
				    SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	}
	if (off >= 0 && xfer(epd, &off, sizeof(off), true) &&
	    xfer(epd, &c, 1, false) && c == 'x')
		rc = system("rmmod scif_ivshmem && sleep 1 && insmod /modules/scif_ivshmem.ko $(tr ' ' '\\n' < /proc/cmdline | sed -n 's/^scif_ivshmem\\.//p')");
	result("loss_left_and_back",
	       expect(c == 'x' && rc == 0, "told %c, the bus's reload: %d",
		      c ? c : '-', rc));
	result("loss_let_in_after_release",
	       expect(rc == 0 && wait_node(peer, true, 60000),
		      "node %u not online 60 s after this node came back",
		      peer));
	/*
	 * The buffer's pages are this process's still (unpinned when the
	 * endpoint went, not freed): node 0's drive wrote into them through
	 * its device-map file before this node left, and again while this
	 * node was held, through the closed aperture.  That second write
	 * must not have landed.
	 */
	result("held_dma_did_not_land",
	       expect(rc == 0 && off_pattern(buf, LBA_R_READ, R_XFER) == -1,
		      "word at byte %ld is not the first read's (LBA %u: %ld)",
		      off_pattern(buf, LBA_R_READ, R_XFER), LBA_HELD,
		      off_pattern(buf, LBA_HELD, R_XFER)));
	if (epd >= 0)
		scif_close(epd);
	if (lep >= 0)
		scif_close(lep);
	free(buf);
}

/* Node 0: the device-map file of node 1's window, kept while it goes. */
static void loss_reader(struct nvme *n, uint16_t peer)
{
	struct vfio_iommu_type1_dma_unmap um = { .argsz = sizeof(um) };
	struct vfio_iommu_type1_dma_map m = { .argsz = sizeof(m) };
	struct scifioctl_devmap_status st = { -1, -1 };
	struct scif_port_id dst = { .port = LPORT, .node = peer };
	int epd = scif_open(), fd = -1, tries, pr = -1, rc = -1;
	struct pollfd pfd = { .events = POLLPRI };
	char state[32] = "", held[32] = "";
	uint8_t *p = MAP_FAILED;
	off_t off = -1;

	for (tries = 0; epd >= 0 && tries < 300; tries++) {
		if (scif_connect(epd, &dst) >= 0)
			break;
		usleep(100 * 1000);
	}
	if (tries < 300 && xfer(epd, &off, sizeof(off), false))
		fd = devmap(epd, off, R_LEN, SCIF_PROT_READ | SCIF_PROT_WRITE,
			    0);
	if (fd >= 0)
		p = mmap(NULL, R_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 0);
	m.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE;
	m.vaddr = (uintptr_t)p;
	m.iova = IOVA_REMOTE;
	m.size = R_LEN;
	if (p != MAP_FAILED && !ioctl(n->container, VFIO_IOMMU_MAP_DMA, &m))
		rc = nvme_rw(n, 0x02, LBA_R_READ, IOVA_REMOTE, R_XFER);
	result("loss_read_into_remote",
	       expect(!rc && off_pattern(p, LBA_R_READ, R_XFER) == -1,
		      "devmap %d, read %d (errno %d)", fd, rc, errno));
	if (rc)
		goto out;
	xfer(epd, "x", 1, true);
	pfd.fd = fd;
	pr = poll(&pfd, 1, 15000);
	ioctl(fd, SCIF_DEVMAP_STATUS, &st);
	result("revoke_node_loss",
	       expect(pr == 1 && st.state == 1 && st.why == ENODEV,
		      "poll %d revents %#x, state %d why %d", pr, pfd.revents,
		      st.state, st.why));
	/* Node 1 is back by now, but held out while the file is open. */
	sleep(4);
	node_file(peer, "state", state, sizeof(state));
	node_file(peer, "held_mappings", held, sizeof(held));
	result("node_held_while_mapped",
	       expect(!node_online(peer) && !strcmp(state, "held") &&
		      !strcmp(held, "1"),
		      "node %u online %d, state %s, held_mappings %s", peer,
		      node_online(peer), state, held));
	/*
	 * The aperture is closed: the drive's DMA into it goes nowhere (node
	 * 1 checks that its buffer still holds the first read's blocks).
	 */
	printf("# the drive's read into the closed aperture: %d\n",
	       nvme_rw(n, 0x02, LBA_HELD, IOVA_REMOTE, R_XFER));
out:
	um.iova = IOVA_REMOTE;
	um.size = R_LEN;
	if (p != MAP_FAILED) {
		ioctl(n->container, VFIO_IOMMU_UNMAP_DMA, &um);
		munmap(p, R_LEN);
	}
	if (fd >= 0)
		close(fd);
	result("node_back_after_release",
	       expect(!rc && wait_node(peer, true, 30000),
		      "node %u not online 30 s after the release", peer));
	node_file(peer, "held_mappings", held, sizeof(held));
	result("held_mappings_back_to_0",
	       expect(!strcmp(held, "0"), "held_mappings %s", held));
	if (epd >= 0)
		scif_close(epd);
}

/* ---- figures (mode "bench"): the drive into a remote window ---- */

#define BPORT		2394
#define B_QD		4		/* the deeper of the two depths */
#define B_XFER_MAX	(1024 * 1024UL)
#define B_LEN		(B_QD * B_XFER_MAX)
#define B_PRP(i)	(B_LEN + (i) * PG)	/* PRP list pages, after it */
#define B_MAP_LEN	(B_LEN + B_QD * PG)
#define IOVA_BLOCAL	0x20000000ULL
#define B_LBA_READ	0
#define B_LBA_WRITE	16384
#define B_ROW_US	200000		/* each figure: 0.2 s of commands */

enum { B_LOCAL, B_REMOTE, B_CPU, B_VIAS };
static const char *const b_via[B_VIAS] = { "local", "remote", "cpu" };

/*
 * The reader's side: its own buffer (IOMMU-mapped at IOVA_BLOCAL, with
 * the PRP list pages after it) and the other node's window (through
 * the device-map file, IOMMU-mapped at IOVA_REMOTE), its endpoint and
 * the window's offset for the CPU path's RMA.
 */
struct bench {
	struct nvme *n;
	uint8_t *buf, *win, *want;
	int epd;
	off_t off;
	size_t mdts;		/* the controller's largest command, bytes */
	bool quick;
	char why[B_VIAS][2][160];
};

static uint64_t us_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

/*
 * @qd READs or WRITEs (@opc) of @size bytes each, blocks from @lba on,
 * data from the controller address @addr on, submitted together (one
 * doorbell), then their completions polled: 0, or -1 said.
 */
static int nvme_batch(struct bench *b, uint8_t opc, uint64_t lba,
		      uint64_t addr, size_t size, unsigned int qd)
{
	struct nvme *n = b->n;
	struct nvme_q *q = &n->ioq;
	volatile struct nvme_sqe *sq = q->ring;
	volatile struct nvme_cqe *cq;
	uint64_t *prp, a, end;
	unsigned int i, j, done = 0;
	struct nvme_sqe sqe;
	uint32_t dw3, st = 0;

	cq = (volatile void *)((volatile uint8_t *)q->ring + PG);
	for (i = 0; i < qd; i++) {
		a = addr + i * size;
		memset(&sqe, 0, sizeof(sqe));
		sqe.cdw0 = opc | (uint32_t)++n->cid << 16;
		sqe.nsid = 1;
		sqe.prp1 = a;
		if (size > 2 * PG) {
			prp = (uint64_t *)(b->buf + B_PRP(i));
			for (j = 1; j < size / PG; j++)
				prp[j - 1] = a + j * PG;
			sqe.prp2 = IOVA_BLOCAL + B_PRP(i);
		} else if (size > PG) {
			sqe.prp2 = a + PG;
		}
		sqe.cdw10 = (uint32_t)(lba + i * (size >> n->lba_shift));
		sqe.cdw12 = (size >> n->lba_shift) - 1;
		memcpy((void *)&sq[q->tail], &sqe, sizeof(sqe));
		q->tail = (q->tail + 1) % QDEPTH;
	}
	__sync_synchronize();
	wr32(n, doorbell(n, q->qid, false), q->tail);
	end = ms_now() + 5000;
	while (done < qd) {
		dw3 = cq[q->head].dw3;
		if (((dw3 >> 16) & 1) != (uint32_t)q->phase) {
			if (ms_now() > end)
				return expect(false, "%u of %u commands: no completion in 5 s",
					      qd - done, qd), -1;
			continue;
		}
		st |= dw3 >> 17;
		q->head = (q->head + 1) % QDEPTH;
		if (!q->head)
			q->phase ^= 1;
		done++;
	}
	__sync_synchronize();
	wr32(n, doorbell(n, q->qid, true), q->head);
	if (st)
		return expect(false, "command %#x: status %#x", opc, st), -1;
	return 0;
}

/* Where the drive's data is, for @via; what it reads or writes. */
static uint8_t *bench_data(struct bench *b, int via)
{
	return via == B_LOCAL ? b->buf : b->win;
}

/* Before a figure: the destination cleared, or the source filled. */
static void bench_prepare(struct bench *b, int via, bool rd, size_t len,
			  uint32_t seed)
{
	if (rd) {
		memset(b->buf, 0, len);
		memset(b->win, 0, len);
		return;
	}
	fill(b->want, len, seed);
	memcpy(bench_data(b, via), b->want, len);
}

/* After a figure: the bytes where they should be.  -1, or the offset. */
static long bench_verify(struct bench *b, int via, bool rd, size_t size,
			 unsigned int qd)
{
	if (rd)
		return off_pattern(bench_data(b, via), B_LBA_READ, size * qd);
	memset(b->buf, 0, size * qd);
	if (nvme_batch(b, 0x02, B_LBA_WRITE, IOVA_BLOCAL, size, qd))
		return -2;
	return differs(b->want, b->buf, size * qd);
}

/*
 * One figure: @qd commands of @size bytes at a time, by @via, for
 * B_ROW_US (one batch if quick); printed as "# nvme-bench VIA OP SIZE QD
 * BATCHES MB/s US" (US: the time of a batch, at depth 1 a command's
 * latency).  False, said in b->why, if a command failed or the bytes
 * are wrong.
 */
static bool bench_row(struct bench *b, int via, bool rd, size_t size,
		      unsigned int qd)
{
	uint64_t addr = via == B_REMOTE ? IOVA_REMOTE : IOVA_BLOCAL;
	uint64_t lba = rd ? B_LBA_READ : B_LBA_WRITE, t0, t, nb = 0;
	uint8_t opc = rd ? 0x02 : 0x01;
	size_t len = size * qd;
	char *why = b->why[via][rd];
	long rc = 0, bad;

	bench_prepare(b, via, rd, B_LEN, (uint32_t)(size + qd + via));
	t0 = us_now();
	do {
		if (via == B_CPU && !rd)
			rc = scif_vreadfrom(b->epd, b->buf, len, b->off,
					    SCIF_RMA_SYNC);
		if (!rc)
			rc = nvme_batch(b, opc, lba, addr, size, qd);
		if (!rc && via == B_CPU && rd)
			rc = scif_vwriteto(b->epd, b->buf, len, b->off,
					   SCIF_RMA_SYNC);
		nb++;
		t = us_now() - t0;
	} while (!rc && !b->quick && t < B_ROW_US);
	if (rc) {
		snprintf(why, sizeof(b->why[0][0]), "%zu x %u: errno %d", size,
			 qd, errno);
		return false;
	}
	printf("# nvme-bench %s %s %zu %u %llu %.1f %.1f\n", b_via[via],
	       rd ? "read" : "write", size, qd, (unsigned long long)nb,
	       (double)(nb * len) / (t ? t : 1), (double)t / nb);
	bad = bench_verify(b, via, rd, size, qd);
	if (bad != -1)
		snprintf(why, sizeof(b->why[0][0]), "%zu x %u: byte %ld wrong",
			 size, qd, bad);
	return bad == -1;
}

/*
 * Node 1: the window node 0's drive reads into and writes from.  Told
 * 'c' (node 0 closed its file), it unregisters and waits for the pages
 * to be let go of (the file's linger), then answers: node 0 is not left
 * holding a mapping of a node that has gone.
 */
static void bench_owner(void)
{
	struct scif_port_id from;
	int lep = scif_open(), epd = -1, t;
	long pin0 = vm_pin_kb();
	uint8_t *buf = NULL;
	char c = 0, freed = 0;
	off_t off = -1;

	if (!posix_memalign((void **)&buf, PG, B_LEN) && lep >= 0 &&
	    scif_bind(lep, BPORT) >= 0 && scif_listen(lep, 1) >= 0 &&
	    scif_accept(lep, &from, &epd, SCIF_ACCEPT_SYNC) >= 0) {
		memset(buf, 0, B_LEN);
		off = scif_register(epd, buf, B_LEN, 0,
				    SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	}
	if (off >= 0 && xfer(epd, &off, sizeof(off), true) &&
	    xfer(epd, &c, 1, false) && c == 'c') {
		scif_unregister(epd, off, B_LEN);
		for (t = 0; t < 50 && vm_pin_kb() != pin0; t++)
			usleep(100 * 1000);
		freed = vm_pin_kb() == pin0;
		xfer(epd, &freed, 1, true);
	}
	result("bench_window_served",
	       expect(c == 'c' && freed, "window %lld, told %c (errno %d), %ld kB still pinned",
		      (long long)off, c ? c : '-', errno, vm_pin_kb() - pin0));
	if (epd >= 0)
		scif_close(epd);
	if (lep >= 0)
		scif_close(lep);
	free(buf);
}

/* Map @len bytes at @p for the drive at @iova. */
static bool bench_map(struct nvme *n, void *p, uint64_t iova, size_t len)
{
	struct vfio_iommu_type1_dma_map m = {
		.argsz = sizeof(m), .vaddr = (uintptr_t)p, .iova = iova,
		.size = len,
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
	};

	return p != MAP_FAILED && !ioctl(n->container, VFIO_IOMMU_MAP_DMA, &m);
}

static void bench_unmap(struct nvme *n, uint64_t iova, size_t len)
{
	struct vfio_iommu_type1_dma_unmap um = {
		.argsz = sizeof(um), .iova = iova, .size = len,
	};

	ioctl(n->container, VFIO_IOMMU_UNMAP_DMA, &um);
}

/* Every figure, by every path, each size up to the controller's MDTS. */
static void bench_rows(struct bench *b)
{
	static const size_t full[] = { 4096, 16384, 65536, 262144, 1048576 };
	static const size_t quick[] = { 4096, 1048576 };
	static const unsigned int qds[] = { 1, B_QD };
	const size_t *sz = b->quick ? quick : full;
	size_t nsz = b->quick ? 2 : 5;
	bool ok[B_VIAS][2];
	int via, rd;

	for (via = 0; via < B_VIAS; via++)
		for (rd = 0; rd < 2; rd++) {
			ok[via][rd] = true;
			snprintf(b->why[via][rd], sizeof(b->why[0][0]), "no size");
		}
	printf("# nvme-bench via op size qd batches MB/s us-per-batch (largest command %zu)\n",
	       b->mdts);
	for (size_t i = 0; i < nsz && sz[i] <= b->mdts; i++)
		for (int q = 0; q < 2; q++)
			for (via = 0; via < B_VIAS; via++)
				for (rd = 1; rd >= 0; rd--)
					ok[via][rd] &= bench_row(b, via, rd,
								 sz[i], qds[q]);
	for (via = 0; via < B_VIAS; via++)
		for (rd = 1; rd >= 0; rd--) {
			char row[40];

			snprintf(row, sizeof(row), "bench_%s_%s",
				 rd ? "read" : "write", b_via[via]);
			result(row, expect(ok[via][rd] && b->mdts >= sz[0],
					   "%s", b->why[via][rd]));
		}
}

/*
 * Node 0: its drive reads blocks into and writes blocks from node 1's
 * window through a device-map file (remote), the same into and from
 * this process's memory (local), and into memory then on to the window
 * by RMA, or back (cpu); every figure's bytes checked.
 */
static void bench_reader(struct nvme *n, uint16_t peer, bool quick)
{
	struct scif_port_id dst = { .port = BPORT, .node = peer };
	struct bench b = { .n = n, .epd = scif_open(), .off = -1,
			   .quick = quick };
	uint8_t *id = n->area + OFF_IDENT, *w = MAP_FAILED;
	int fd = -1, tries;
	char c = 'c';
	bool ok;

	b.buf = mmap(NULL, B_MAP_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b.want = malloc(B_LEN);
	/* Identify controller: MDTS, in pages of CAP.MPSMIN (4 KiB). */
	if (!admin(n, 0x06, 0, IOVA_BASE + OFF_IDENT, 1, 0))
		b.mdts = id[77] ? PG << id[77] : B_XFER_MAX;
	for (tries = 0; b.epd >= 0 && tries < 300; tries++) {
		if (scif_connect(b.epd, &dst) >= 0)
			break;
		usleep(100 * 1000);
	}
	if (tries < 300 && xfer(b.epd, &b.off, sizeof(b.off), false))
		fd = devmap(b.epd, b.off, B_LEN,
			    SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
	if (fd >= 0)
		w = mmap(NULL, B_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	b.win = w;
	ok = b.want && bench_map(n, b.buf, IOVA_BLOCAL, B_MAP_LEN) &&
	     bench_map(n, w, IOVA_REMOTE, B_LEN);
	result("bench_setup", expect(ok, "window %lld, devmap %d, mapping: errno %d",
				     (long long)b.off, fd, errno));
	if (ok)
		bench_rows(&b);
	bench_unmap(n, IOVA_REMOTE, B_LEN);
	bench_unmap(n, IOVA_BLOCAL, B_MAP_LEN);
	if (w != MAP_FAILED)
		munmap(w, B_LEN);
	if (fd >= 0)
		close(fd);
	if (b.epd >= 0) {
		/* The owner's answer: its pages let go of. */
		if (xfer(b.epd, &c, 1, true))
			xfer(b.epd, &c, 1, false);
		scif_close(b.epd);
	}
	if (b.buf != MAP_FAILED)
		munmap(b.buf, B_MAP_LEN);
	free(b.want);
}

/*
 * The host's view of a drive's blocks: the image holds at LBA_R_WRITE
 * the R_XFER bytes that write_from_remote wrote from @peer's window.
 * Exit status 0 if so.
 */
static int image_check(const char *file, uint16_t peer)
{
	uint8_t *want = malloc(R_XFER), *got = malloc(R_XFER);
	FILE *f = fopen(file, "rb");
	long bad = -2;

	if (want && got && f && !fseek(f, LBA_R_WRITE * 512L, SEEK_SET) &&
	    fread(got, 1, R_XFER, f) == R_XFER) {
		fill(want, R_XFER, 50 + peer);
		bad = differs(want, got, R_XFER);
	}
	if (bad != -1)
		fprintf(stderr, "%s: %s at block %d: %ld\n", file,
			bad == -2 ? "unreadable" : "first byte differing",
			LBA_R_WRITE, bad);
	if (f)
		fclose(f);
	free(want);
	free(got);
	return bad == -1 ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *bdf = getenv("SCIF_DEVMEM_BDF");
	struct nvme n = { .container = -1, .dev = -1 };
	uint8_t *data, *want;
	long bad;

	if (argc == 4 && !strcmp(argv[1], "image"))
		return image_check(argv[2], atoi(argv[3]));
	printf("TAP version 13\n");
	alarm(120);	/* a hang is a failure, not the cluster's timeout */
	if (!bdf) {
		printf("1..1\nnot ok 1 nvme_setup # no SCIF_DEVMEM_BDF\n");
		return 1;
	}
	result("nvme_setup", nvme_init(&n, bdf) == 0);
	if (nr_fail) {
		printf("1..%d\n", nr_test);
		return 1;
	}
	printf("# namespace 1: %llu blocks of %u bytes\n",
	       (unsigned long long)n.nsze, 1U << n.lba_shift);
	data = n.area + OFF_DATA;
	if (argc > 1 && !strcmp(argv[1], "loss")) {
		uint16_t self;

		scif_get_nodeIDs(NULL, 0, &self);
		if (self)
			loss_owner(0);
		else
			loss_reader(&n, 1);
		goto done;
	}
	if (argc > 1 && !strcmp(argv[1], "bench")) {
		uint16_t self;

		alarm(300);
		scif_get_nodeIDs(NULL, 0, &self);
		if (self)
			bench_owner();
		else
			bench_reader(&n, 1, argc > 2 && !strcmp(argv[2], "quick"));
		goto done;
	}

	bad = -2;
	if (!nvme_rw(&n, 0x02, 0, IOVA_BASE + OFF_DATA, LOCAL_LEN))
		bad = off_pattern(data, 0, LOCAL_LEN);
	result("read_local",
	       expect(bad == -1, "word at byte %ld off the pattern", bad));

	want = malloc(LOCAL_LEN);
	bad = -2;
	if (want) {
		fill(want, LOCAL_LEN, 7);
		memcpy(data, want, LOCAL_LEN);
		if (!nvme_rw(&n, 0x01, LBA_WRITE, IOVA_BASE + OFF_DATA,
			     LOCAL_LEN)) {
			memset(data, 0, LOCAL_LEN);
			if (!nvme_rw(&n, 0x02, LBA_WRITE, IOVA_BASE + OFF_DATA,
				     LOCAL_LEN))
				bad = differs(want, data, LOCAL_LEN);
		}
	}
	result("write_local", expect(bad == -1, "byte %ld differs", bad));
	free(want);

	t_cmb(&n, bdf);
	t_cross(&n, bdf);
done:
	/* Disabled again: nothing of ours is DMA'd into after we exit. */
	wr32(&n, REG_CC, 0);
	wait_ready(&n, false);
	printf("1..%d\n", nr_test);
	return nr_fail ? 1 : 0;
}
