// SPDX-License-Identifier: GPL-2.0
/*
 * RMA and remote mmap into RAM above 4 GiB, across a cluster of guests
 * with more than 2 GiB each (qemu/cluster.sh -m 4G): such RAM is not at
 * the file offset equal to its address, and a peer reaches it only by
 * translating with the layout its owner published (ivshmem.rst).
 *
 * Every node serves, on a port, a window made only of pages that
 * /proc/self/pagemap (root) shows at or above 4 GiB, checked again
 * once the window pins them, and at the same time writes into and
 * reads from every other node's window (scif_vwriteto, scif_vreadfrom,
 * scif_writeto from a window of its own, scif_mmap), comparing bytes;
 * the serving node checks what landed in its memory.  Run as root, in a
 * cluster (scif.nodes=N); TAP, one line per (peer, check).
 */
#include "scif_cluster_util.h"
#include <fcntl.h>
#include <sys/mman.h>

#define HM_PORT		2300
#define HM_PAGES	64
#define HM_LEN		(HM_PAGES * 4096L)
#define HM_SEARCH	(256L << 20)
#define HM_4G		(1ULL << 32)

enum { CMD_CHECK = 1, CMD_FILL, CMD_DONE };

struct hm_cmd {
	uint32_t op;
	uint32_t seed;
};

/* The server's first message: 0 or an errno, and where its window is. */
struct hm_hello {
	int32_t err;
	uint32_t pad;
	uint64_t lowest;
	uint64_t highest;
};

static const char *const checks[] = {
	"connect", "window_above_4g", "vwriteto_above_4g",
	"vreadfrom_above_4g", "writeto_above_4g", "mmap_above_4g",
};
#define NR_CHECKS	(int)(sizeof(checks) / sizeof(checks[0]))

static int results[CLUSTER_MAX_NODES][NR_CHECKS];	/* 0 ok, else errno */
static struct hm_hello hellos[CLUSTER_MAX_NODES];

static void fill(uint8_t *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2246822519u + 7;

	for (size_t i = 0; i < len; i++) {
		x = x * 1664525u + 1013904223u;
		buf[i] = x >> 24;
	}
}

static int same(const uint8_t *buf, size_t len, uint32_t seed)
{
	uint8_t *ref = malloc(len);
	int err;

	if (!ref)
		return ENOMEM;
	fill(ref, len, seed);
	err = memcmp(buf, ref, len) ? EBADMSG : 0;
	free(ref);
	return err;
}

/*
 * The physical addresses of the @n pages at @va, from pagemap: 0 for a
 * page not present (or a PFN hidden from a non-root reader).
 */
static int phys_of(const void *va, long n, uint64_t *pa)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	off_t at = (uintptr_t)va / 4096 * sizeof(uint64_t);
	ssize_t want = n * sizeof(uint64_t);

	if (fd < 0)
		return errno;
	if (pread(fd, pa, want, at) != want) {
		close(fd);
		return EIO;
	}
	close(fd);
	for (long i = 0; i < n; i++)
		pa[i] = pa[i] >> 63 ? (pa[i] & ((1ULL << 55) - 1)) * 4096 : 0;
	return 0;
}

/*
 * HM_PAGES pages in a row, all at or above 4 GiB, out of a large buffer
 * touched in full; the rest of the buffer is given back.  NULL if none.
 */
static uint8_t *high_pages(void)
{
	static uint64_t pa[HM_SEARCH / 4096];
	long n = HM_SEARCH / 4096, run = 0, i;
	uint8_t *buf;

	buf = mmap(NULL, HM_SEARCH, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		return NULL;
	memset(buf, 0x5a, HM_SEARCH);
	if (phys_of(buf, n, pa))
		goto none;
	for (i = 0; i < n; i++) {
		run = pa[i] >= HM_4G ? run + 1 : 0;
		if (run == HM_PAGES)
			break;
	}
	if (i == n)
		goto none;
	i -= HM_PAGES - 1;
	if (i)
		munmap(buf, i * 4096);
	if ((i + HM_PAGES) * 4096 < HM_SEARCH)
		munmap(buf + (i + HM_PAGES) * 4096,
		       HM_SEARCH - (i + HM_PAGES) * 4096);
	return buf + i * 4096;
none:
	munmap(buf, HM_SEARCH);
	return NULL;
}

/* Register the window and say where it is (checked once pinned). */
static int hello(scif_epd_t epd, uint8_t *win)
{
	struct hm_hello h = { .err = ENOMEM, .lowest = UINT64_MAX };
	uint64_t pa[HM_PAGES];

	if (win && scif_register(epd, win, HM_LEN, 0,
				 SCIF_PROT_READ | SCIF_PROT_WRITE,
				 SCIF_MAP_FIXED) != 0)
		h.err = errno;
	else if (win)
		h.err = phys_of(win, HM_PAGES, pa);
	for (int i = 0; win && !h.err && i < HM_PAGES; i++) {
		if (pa[i] < h.lowest)
			h.lowest = pa[i];
		if (pa[i] > h.highest)
			h.highest = pa[i];
	}
	return scif_send(epd, &h, sizeof(h), SCIF_SEND_BLOCK) == sizeof(h) ?
	       0 : -1;
}

static int serve_one(scif_epd_t epd)
{
	uint8_t *win = high_pages();
	struct hm_cmd c;
	int32_t reply;

	if (hello(epd, win) || !win)
		return 1;
	while (scif_recv(epd, &c, sizeof(c), SCIF_RECV_BLOCK) == sizeof(c)) {
		if (c.op == CMD_DONE)
			return 0;
		reply = 0;
		if (c.op == CMD_CHECK)
			reply = same(win, HM_LEN, c.seed);
		else
			fill(win, HM_LEN, c.seed);
		if (scif_send(epd, &reply, sizeof(reply), SCIF_SEND_BLOCK) !=
		    sizeof(reply))
			return 1;
	}
	return 1;
}

static int serve(int lep, int peers)
{
	return cluster_serve(lep, peers, 240, serve_one);
}

/* Ask the server to check or fill its window; 0 or an errno. */
static int ask(scif_epd_t epd, uint32_t op, uint32_t seed)
{
	struct hm_cmd c = { .op = op, .seed = seed };
	int32_t reply;

	if (scif_send(epd, &c, sizeof(c), SCIF_SEND_BLOCK) != sizeof(c) ||
	    scif_recv(epd, &reply, sizeof(reply), SCIF_RECV_BLOCK) !=
	    sizeof(reply))
		return errno ? errno : EPIPE;
	return reply;
}

static int check_mmap(scif_epd_t epd, uint32_t seed)
{
	uint8_t *p = scif_mmap(NULL, HM_LEN, SCIF_PROT_READ | SCIF_PROT_WRITE,
			       0, epd, 0);
	int err;

	if (p == MAP_FAILED)
		return errno;
	err = ask(epd, CMD_FILL, seed);
	if (!err)
		err = same(p, HM_LEN, seed);
	if (!err) {
		fill(p, HM_LEN, seed + 1);
		err = ask(epd, CMD_CHECK, seed + 1);
	}
	scif_munmap(p, HM_LEN);
	return err;
}

static void run_checks(int idx)
{
	uint8_t *buf = mmap(NULL, HM_LEN, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct hm_hello *h = &hellos[idx];
	int *res = results[idx], c;
	uint32_t seed = 1000 * (self + 1) + peers[idx];
	struct hm_cmd done = { .op = CMD_DONE };
	scif_epd_t epd = -1;

	res[0] = buf == MAP_FAILED ? ENOMEM : cluster_connect(peers[idx],
							      HM_PORT, &epd);
	for (c = 1; res[0] && c < NR_CHECKS; c++)
		res[c] = res[0];
	if (res[0])
		return;
	if (scif_recv(epd, h, sizeof(*h), SCIF_RECV_BLOCK) != sizeof(*h))
		h->err = errno ? errno : EPIPE;
	res[1] = h->err ? h->err : h->lowest < HM_4G ? ERANGE : 0;
	for (c = 2; res[1] && c < NR_CHECKS; c++)
		res[c] = res[1];
	if (res[1])
		goto out;

	fill(buf, HM_LEN, seed);
	res[2] = scif_vwriteto(epd, buf, HM_LEN, 0, SCIF_RMA_SYNC) ? errno :
		 ask(epd, CMD_CHECK, seed);
	res[3] = ask(epd, CMD_FILL, seed + 10);
	if (!res[3]) {
		memset(buf, 0, HM_LEN);
		res[3] = scif_vreadfrom(epd, buf, HM_LEN, 0, SCIF_RMA_SYNC) ?
			 errno : same(buf, HM_LEN, seed + 10);
	}
	fill(buf, HM_LEN, seed + 20);
	if (scif_register(epd, buf, HM_LEN, 0x100000,
			  SCIF_PROT_READ | SCIF_PROT_WRITE, SCIF_MAP_FIXED) !=
	    0x100000)
		res[4] = errno;
	else
		res[4] = scif_writeto(epd, 0x100000, HM_LEN, 0, SCIF_RMA_SYNC) ?
			 errno : ask(epd, CMD_CHECK, seed + 20);
	res[5] = check_mmap(epd, seed + 30);
out:
	scif_send(epd, &done, sizeof(done), SCIF_SEND_BLOCK);
	scif_close(epd);
	munmap(buf, HM_LEN);
}

static void note(int idx)
{
	const struct hm_hello *h = &hellos[idx];

	if (!h->err && h->highest)
		printf("# node %u: window at physical %#llx..%#llx\n", peers[idx],
		       (unsigned long long)h->lowest,
		       (unsigned long long)h->highest + 4095);
}

/* Whether /proc/iomem (root) shows System RAM at or above 4 GiB. */
static bool ram_above_4g(void)
{
	FILE *f = fopen("/proc/iomem", "r");
	unsigned long long start, end;
	char line[256];
	bool found = false;

	while (f && fgets(line, sizeof(line), f))
		if (line[0] != ' ' && strstr(line, "System RAM") &&
		    sscanf(line, "%llx-%llx", &start, &end) == 2 &&
		    end >= HM_4G)
			found = true;
	if (f)
		fclose(f);
	return found;
}

int main(void)
{
	static const struct cluster_test ct = {
		.prefix = "highmem",
		.port = HM_PORT,
		.checks = checks,
		.nr_checks = NR_CHECKS,
		.results = &results[0][0],
		.serve = serve,
		.run_checks = run_checks,
		.note = note,
	};

	/*
	 * Every node of a cluster has the same RAM: all skip, or none.  One
	 * TAP line says why (the step lists of smaller clusters run it too).
	 */
	if (geteuid() != 0 || !ram_above_4g()) {
		printf("TAP version 13\n1..1\nok 1 highmem_above_4g # SKIP %s\n",
		       geteuid() ? "pagemap shows physical addresses to root only" :
		       "no RAM above 4 GiB (cluster.sh -m 4G)");
		return 4;
	}
	return cluster_main(&ct);
}
