// SPDX-License-Identifier: GPL-2.0
/*
 * A peer's pages are never handed to a device behind SCIF's back
 * (Documentation/scif/security.rst): VFIO_IOMMU_MAP_DMA of what SCIF maps
 * into a process must fail, since the IOMMU would keep the page frames
 * after SCIF revoked the mapping and the peer reused its pages.  Run on
 * every node of a cluster whose nodes have an emulated IOMMU and a spare
 * PCI device bound to vfio-pci (scif_vfio_test.sh sets it up and gives
 * its IOMMU group in SCIF_VFIO_GROUP).  Against each peer:
 *
 *   - a VFIO container on the group, type1 (v2) IOMMU;
 *   - an anonymous buffer is mapped for the device (so that a refusal
 *     below is the mapping's own, not a broken container);
 *   - the peer's window, mapped with mmap() of the endpoint, reads the
 *     bytes the peer wrote (through the aperture: the page frames VFIO
 *     would follow if the VMA let it);
 *   - VFIO_IOMMU_MAP_DMA of that mapping fails with EFAULT;
 *   - likewise for the fast-path file's half of the peer (its pages
 *     through the aperture) and its counter page (this node's).
 *
 * A mapping VFIO took is reported as EBADMSG, with a comment line.
 */
#include "scif_cluster_util.h"
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/vfio.h>
#include "scif_fp_raw.h"

#define VFIO_PORT	2310
#define WIN		(64 * 1024L)
#define IOVA_ANON	0x100000ULL
#define IOVA_SCIF	0x10000000ULL

enum { C_CONNECT, C_CONTAINER, C_ANON, C_READ, C_WINDOW, C_FP_REMOTE,
       C_FP_CTL, NR_CHECKS };

static const char *const checks[NR_CHECKS] = {
	"connect", "vfio_container", "vfio_maps_anonymous",
	"mmap_reads_peer", "vfio_refuses_remote_window",
	"vfio_refuses_fp_remote_half", "vfio_refuses_fp_counters",
};

static int results[CLUSTER_MAX_NODES][NR_CHECKS];
static int container = -1;

static uint8_t pattern(uint16_t node, long i)
{
	return (uint8_t)(node * 131 + i * 7 + (i >> 12));
}

/* Serve one peer: a window of our pattern, kept until it says done. */
static int serve_one(scif_epd_t epd)
{
	uint8_t *win = mmap(NULL, WIN, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int32_t r = 0;

	if (win == MAP_FAILED ||
	    scif_register(epd, win, WIN, 0, SCIF_PROT_READ | SCIF_PROT_WRITE,
			  SCIF_MAP_FIXED) != 0)
		return -1;
	for (long i = 0; i < WIN; i++)
		win[i] = pattern(self, i);
	if (scif_send(epd, &r, sizeof(r), SCIF_SEND_BLOCK) != sizeof(r) ||
	    scif_recv(epd, &r, sizeof(r), SCIF_RECV_BLOCK) != sizeof(r))
		return -1;
	return 0;
}

static int serve(int lep, int peers)
{
	return cluster_serve(lep, peers, 120, serve_one);
}

/* The container on SCIF_VFIO_GROUP, once; 0 or an errno. */
static int vfio_container(void)
{
	const char *group = getenv("SCIF_VFIO_GROUP");
	struct vfio_group_status st = { .argsz = sizeof(st) };
	char path[64];
	int g;

	if (container >= 0)
		return 0;
	if (!group)
		return ENODEV;
	snprintf(path, sizeof(path), "/dev/vfio/%s", group);
	container = open("/dev/vfio/vfio", O_RDWR);
	g = open(path, O_RDWR);
	if (container < 0 || g < 0)
		return errno;
	if (ioctl(container, VFIO_GET_API_VERSION) != VFIO_API_VERSION ||
	    ioctl(container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) != 1 ||
	    ioctl(g, VFIO_GROUP_GET_STATUS, &st) < 0 ||
	    !(st.flags & VFIO_GROUP_FLAGS_VIABLE))
		return EINVAL;
	if (ioctl(g, VFIO_GROUP_SET_CONTAINER, &container) < 0 ||
	    ioctl(container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU) < 0)
		return errno;
	return 0;
}

/* VFIO_IOMMU_MAP_DMA of @len bytes at @va, read and write: 0 or errno. */
static int vfio_map(void *va, size_t len, uint64_t iova)
{
	struct vfio_iommu_type1_dma_map m = {
		.argsz = sizeof(m),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uintptr_t)va, .iova = iova, .size = len,
	};
	struct vfio_iommu_type1_dma_unmap u = {
		.argsz = sizeof(u), .iova = iova, .size = len,
	};

	if (ioctl(container, VFIO_IOMMU_MAP_DMA, &m) < 0)
		return errno;
	ioctl(container, VFIO_IOMMU_UNMAP_DMA, &u);
	return 0;
}

/* 0 if VFIO refused @len bytes at @va with EFAULT, else why not. */
static int vfio_refuses(void *va, size_t len)
{
	int err = vfio_map(va, len, IOVA_SCIF);

	if (!err)
		printf("# VFIO_IOMMU_MAP_DMA took %zu bytes of SCIF's at %p\n",
		       len, va);
	return err == EFAULT ? 0 : err ? err : EBADMSG;
}

static int check_window(scif_epd_t epd, uint16_t node, int *res)
{
	uint8_t *map = mmap(NULL, WIN, PROT_READ | PROT_WRITE, MAP_SHARED,
			    epd, 0);

	if (map == MAP_FAILED)
		return res[C_READ] = errno;
	res[C_READ] = 0;
	for (long i = 0; i < WIN && !res[C_READ]; i++)
		if (map[i] != pattern(node, i))
			res[C_READ] = EIO;
	res[C_WINDOW] = vfio_refuses(map, WIN);
	munmap(map, WIN);
	return res[C_READ];
}

static void check_fp(scif_epd_t epd, int *res)
{
	struct rawfp r;

	if (rawfp_open(epd, &r)) {
		res[C_FP_REMOTE] = res[C_FP_CTL] = errno;
		return;
	}
	res[C_FP_REMOTE] = vfio_refuses(r.remote, r.req.remote_len);
	res[C_FP_CTL] = vfio_refuses(r.ctl, sysconf(_SC_PAGESIZE));
	rawfp_close(&r);
}

static void run_checks(int idx)
{
	int *res = results[idx];
	scif_epd_t epd = -1;
	void *anon;
	int32_t r;

	for (int c = 0; c < NR_CHECKS; c++)
		res[c] = ECANCELED;
	res[C_CONNECT] = cluster_connect(peers[idx], VFIO_PORT, &epd);
	if (res[C_CONNECT])
		return;
	if (scif_recv(epd, &r, sizeof(r), SCIF_RECV_BLOCK) != sizeof(r) || r) {
		res[C_CONNECT] = EPROTO;
		goto out;
	}
	res[C_CONTAINER] = vfio_container();
	if (res[C_CONTAINER])
		goto out;
	anon = mmap(NULL, WIN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	res[C_ANON] = anon == MAP_FAILED ? errno :
		      vfio_map(anon, WIN, IOVA_ANON);
	if (res[C_ANON])
		goto out;
	munmap(anon, WIN);
	if (!check_window(epd, peers[idx], res))
		check_fp(epd, res);
out:
	r = 0;
	scif_send(epd, &r, sizeof(r), SCIF_SEND_BLOCK);
	scif_close(epd);
}

int main(void)
{
	static const struct cluster_test ct = {
		.prefix = "vfio",
		.port = VFIO_PORT,
		.checks = checks,
		.nr_checks = NR_CHECKS,
		.results = &results[0][0],
		.serve = serve,
		.run_checks = run_checks,
		.sequential = true,
	};

	return cluster_main(&ct);
}
