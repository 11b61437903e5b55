// SPDX-License-Identifier: GPL-2.0
/*
 * dma-buf export of windows (devices.rst, "dma-buf export"):
 * SCIF_DMABUF_EXPORT of a range of this endpoint's windows (local) and
 * of its peer's (remote), read through mmap() of the dma-buf, written by
 * the test importer (scif_dmabuf_import.ko, whose software DMA channel
 * copies a pattern into the dma-buf's DMA addresses) and checked at the
 * owner: in this process's memory for a local range, through
 * scif_vreadfrom() for a remote one; the refused exports; and the
 * revocations: by the peer's unregistration, by the end of the
 * connection, by this endpoint's own unregistration.
 *
 *   scif_dmabuf_test                 the peer is a child process on this
 *                                    node (its loopback node)
 *   scif_dmabuf_test -p NODE         the peer is "scif_dmabuf_test -s"
 *                                    on node NODE
 *   scif_dmabuf_test -s              serve: the peer of another node's
 *                                    run, until it says quit
 *   scif_dmabuf_test -l NODE         node loss: this node's bus unloaded
 *                                    and loaded again while the importer
 *                                    maps NODE's window (its server, as
 *                                    for -p, gets the run's last quit)
 *
 * The peer's side is a server driven by messages on each connection:
 * register a window (filled with a pattern), unregister it (answering
 * once scif_unregister() returned), close the connection, quit.
 * Needs root, scif_soft_dma.ko and scif_dmabuf_import.ko loaded
 * (scif_dmabuf_test.sh loads them).
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/dma-buf.h>
#include "scif.h"
#include "scif_rows.h"

#define PORT		2436
#define PG		4096L
#define WLEN		(64 * 1024L)
#define W_OFF		0x100000L	/* the peer's read-write window */
#define W_RO_OFF	0x200000L	/* the peer's read-only page */
#define L_OFF		0x100000L	/* this endpoint's read-write window */
#define L_RO_OFF	0x300000L	/* this endpoint's read-only page */
#define CTL		"/sys/kernel/debug/scif_dmabuf_import/ctl"
#define STATE		"/sys/kernel/debug/scif_dmabuf_import/state"
#define BUDGET		256

enum { OP_REG = 1, OP_UNREG, OP_CLOSE, OP_QUIT };

struct req {
	int32_t op;
	int32_t prot;
	int64_t off;
	int64_t len;
	uint32_t seed;
	uint32_t pad;
};

static uint16_t peer_node;
static int a = -1;		/* this side's endpoint */
static uint8_t *lmem;		/* the local window's memory */

/* Byte @i of the importer's pattern of @seed. */
static uint8_t ipat(uint32_t seed, uint64_t i)
{
	return (uint8_t)(seed + i * 7);
}

static int send_all(int ep, const void *p, int len)
{
	return scif_send(ep, (void *)p, len, SCIF_SEND_BLOCK) == len ? 0 : -1;
}

static int recv_all(int ep, void *p, int len)
{
	return scif_recv(ep, p, len, SCIF_RECV_BLOCK) == len ? 0 : -1;
}

/* The server of one connection: 1 if told to quit. */
static int serve_conn(int ep)
{
	struct req r;
	int32_t res;
	void *mem;

	while (!recv_all(ep, &r, sizeof(r))) {
		res = 0;
		switch (r.op) {
		case OP_REG:
			mem = mmap(NULL, r.len, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (mem == MAP_FAILED) {
				res = -ENOMEM;
				break;
			}
			fill(mem, r.len, r.seed);
			if (scif_register(ep, mem, r.len, r.off, r.prot,
					  SCIF_MAP_FIXED) != r.off)
				res = -errno;
			break;
		case OP_UNREG:
			if (scif_unregister(ep, r.off, r.len))
				res = -errno;
			break;
		case OP_CLOSE:
			scif_close(ep);
			return 0;
		case OP_QUIT:
			scif_close(ep);
			return 1;
		}
		if (send_all(ep, &res, sizeof(res)))
			break;
	}
	scif_close(ep);
	return 0;
}

static int serve(void)
{
	struct scif_port_id from;
	int lep, ep;

	lep = scif_open();
	if (lep < 0 || scif_bind(lep, PORT) < 0 || scif_listen(lep, 4) < 0) {
		perror("serve");
		return 1;
	}
	for (;;) {
		struct scif_pollepd pe = { .epd = lep, .events = POLLIN };

		/* A client that never comes (or never says quit): 5 min. */
		if (scif_poll(&pe, 1, 300000) <= 0) {
			fprintf(stderr, "# serve: no client\n");
			return 1;
		}
		if (scif_accept(lep, &from, &ep, SCIF_ACCEPT_SYNC) < 0) {
			perror("accept");
			return 1;
		}
		if (serve_conn(ep))
			break;
	}
	scif_close(lep);
	return 0;
}

/* A request to the peer; its answer (0 or -errno), or -EPIPE. */
static int ask(int op, int64_t off, int64_t len, int prot, uint32_t seed)
{
	struct req r = { .op = op, .prot = prot, .off = off, .len = len,
			 .seed = seed };
	int32_t res;

	if (send_all(a, &r, sizeof(r)))
		return -EPIPE;
	if (op == OP_CLOSE || op == OP_QUIT)
		return 0;
	return recv_all(a, &res, sizeof(res)) ? -EPIPE : res;
}

/* Connect a new @a to the peer, retrying for 60 s (it may start late). */
static int connect_peer(void)
{
	struct scif_port_id dst = { .node = peer_node, .port = PORT };

	for (int i = 0; i < 600; i++) {
		a = scif_open();
		if (a < 0)
			return -1;
		if (scif_connect(a, &dst) >= 0)
			return 0;
		scif_close(a);
		a = -1;
		usleep(100000);
	}
	return -1;
}

/* The peer's two windows on a new connection. */
static int peer_windows(uint32_t seed)
{
	if (connect_peer())
		return -1;
	if (ask(OP_REG, W_OFF, WLEN, SCIF_PROT_READ | SCIF_PROT_WRITE, seed) ||
	    ask(OP_REG, W_RO_OFF, PG, SCIF_PROT_READ, seed))
		return -1;
	return 0;
}

static int export(int ep, int64_t off, uint64_t len, int prot, uint32_t flags)
{
	struct scifioctl_dmabuf d = { .offset = off, .len = len, .prot = prot,
				      .flags = flags, .fd = -1 };

	if (ioctl(ep, SCIF_DMABUF_EXPORT, &d) < 0)
		return -errno;
	return d.fd;
}

/* An importer command; 0 or -errno. */
static int imp(const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int fd, ret = 0;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fd = open(CTL, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, strlen(buf)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* A field of the importer's state, or -1. */
static long imp_state(const char *key)
{
	char buf[128];
	const char *p = file_field(STATE, key, buf, sizeof(buf));

	return p ? atol(p) : -1;
}

/* A 64-bit field of the importer's state, or 0. */
static uint64_t imp_state_u64(const char *key)
{
	char buf[128];
	const char *p = file_field(STATE, key, buf, sizeof(buf));

	return p ? strtoull(p, NULL, 10) : 0;
}

/* Wait up to 5 s for the importer's move_notify count to reach @n. */
static bool moves_reach(long n)
{
	for (int i = 0; i < 500; i++) {
		if (imp_state("moves") >= n)
			return true;
		usleep(10000);
	}
	return false;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Whether @len bytes at @p follow the importer's pattern of @seed. */
static long ipat_differs(const uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != ipat(seed, i))
			return (long)i;
	return -1;
}

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(bus_jmp, 1);
}

/* Whether reading @p raises SIGBUS. */
static bool read_sigbus(volatile uint8_t *p)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old;
	bool bus = false;

	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(bus_jmp, 1))
		bus = true;
	else
		(void)*p;
	sigaction(SIGBUS, &old, NULL);
	return bus;
}

static void t_refused(void)
{
	static const struct {
		const char *name;
		int64_t off;
		uint64_t len;
		int prot;
		uint32_t flags, reserved;
		int err;
	} bad[] = {
		{ "export_einval_len_0", L_OFF, 0, 3, 0, 0, EINVAL },
		{ "export_einval_offset_unaligned", L_OFF + 8, PG, 3, 0, 0, EINVAL },
		{ "export_einval_len_unaligned", L_OFF, PG + 8, 3, 0, 0, EINVAL },
		{ "export_einval_offset_negative", -PG, PG, 3, 0, 0, EINVAL },
		{ "export_einval_prot_0", L_OFF, PG, 0, 0, 0, EINVAL },
		{ "export_einval_prot_unknown", L_OFF, PG, 7, 0, 0, EINVAL },
		{ "export_einval_flags_unknown", L_OFF, PG, 3, 2, 0, EINVAL },
		{ "export_einval_reserved", L_OFF, PG, 3, 0, 1, EINVAL },
		{ "export_einval_overflow", INT64_MAX & ~(PG - 1), 2 * PG, 3, 0, 0, EINVAL },
		{ "export_eacces_local_read_only", L_RO_OFF, PG, 3, 0, 0, EACCES },
		{ "export_eacces_remote_read_only", W_RO_OFF, PG, 3, 1, 0, EACCES },
		{ "export_enxio_local_past_window", L_OFF, WLEN + PG, 3, 0, 0, ENXIO },
		{ "export_enxio_remote_past_window", W_OFF, WLEN + PG, 3, 1, 0, ENXIO },
		{ "export_enxio_local_no_window", 0x40000000L, PG, 3, 0, 0, ENXIO },
	};
	struct scifioctl_dmabuf d;
	pid_t pid;
	int st, r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&d, 0, sizeof(d));
		d.offset = bad[i].off;
		d.len = bad[i].len;
		d.prot = bad[i].prot;
		d.flags = bad[i].flags;
		d.reserved = bad[i].reserved;
		d.fd = -1;
		r = ioctl(a, SCIF_DMABUF_EXPORT, &d);
		result(bad[i].name,
		       expect(r < 0 && errno == bad[i].err,
			      "ioctl %d errno %d, want %d", r,
			      r < 0 ? errno : 0, bad[i].err));
		if (r == 0)
			close(d.fd);
	}

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(2);
		r = export(a, W_OFF, PG, 3, SCIF_DMABUF_REMOTE);
		if (r != -EPERM)
			_exit(3);
		/* A local range is the caller's own memory: any user. */
		r = export(a, L_OFF, PG, 3, 0);
		_exit(r >= 0 ? 0 : 4);
	}
	waitpid(pid, &st, 0);
	result("export_remote_eperm_unprivileged_local_allowed",
	       expect(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "child status %#x", st));
}

static void t_mmap(void)
{
	uint8_t *want = malloc(WLEN), *got = malloc(WLEN);
	uint8_t *m;
	int fd;

	/* Local: the dma-buf shows this process's window, and writes go in. */
	fd = export(a, L_OFF, WLEN, 3, 0);
	m = fd >= 0 ? mmap(NULL, WLEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			   0) : MAP_FAILED;
	result("mmap_local_bytes",
	       expect(fd >= 0, "export %d", fd) &&
	       expect(m != MAP_FAILED, "mmap errno %d", errno) &&
	       expect(differs(m, lmem, WLEN) < 0, "differs at %ld",
		      differs(m, lmem, WLEN)));
	if (m != MAP_FAILED) {
		m[5] ^= 0xff;
		result("mmap_local_write_reaches_window",
		       expect(lmem[5] == m[5], "window %#x mapping %#x",
			      lmem[5], m[5]));
		m[5] ^= 0xff;
		munmap(m, WLEN);
	}
	if (fd >= 0)
		close(fd);

	/* Remote: the peer's pattern. */
	fill(want, WLEN, 11);
	fd = export(a, W_OFF, WLEN, 3, SCIF_DMABUF_REMOTE);
	m = fd >= 0 ? mmap(NULL, WLEN, PROT_READ, MAP_SHARED, fd, 0) :
		      MAP_FAILED;
	result("mmap_remote_bytes",
	       expect(fd >= 0, "export %d", fd) &&
	       expect(m != MAP_FAILED, "mmap errno %d", errno) &&
	       expect(differs(m, want, WLEN) < 0, "differs at %ld",
		      differs(m, want, WLEN)));
	if (m != MAP_FAILED)
		munmap(m, WLEN);
	if (fd >= 0)
		close(fd);

	/* A read-only export cannot be mapped for writing. */
	fd = export(a, L_OFF, PG, SCIF_PROT_READ, 0);
	m = fd >= 0 ? mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			   0) : MAP_FAILED;
	result("mmap_write_of_read_only_export_eacces",
	       expect(fd >= 0, "export %d", fd) &&
	       expect(m == MAP_FAILED && errno == EACCES, "mmap errno %d",
		      m == MAP_FAILED ? errno : 0));
	if (m != MAP_FAILED)
		munmap(m, PG);
	if (fd >= 0)
		close(fd);
	(void)got;
	free(want);
	free(got);
}

static void t_import(void)
{
	uint8_t *got = malloc(WLEN);
	int fd, r;

	/* Local: the importer's DMA lands in this process's window. */
	fd = export(a, L_OFF, WLEN, 3, 0);
	r = imp("import %d", fd);
	result("import_local_mapped",
	       expect(fd >= 0, "export %d", fd) &&
	       expect(r == 0, "import %d", r) &&
	       expect(imp_state("mapped") == 1, "mapped %ld",
		      imp_state("mapped")));
	r = imp("copy 21");
	result("import_local_dma_reaches_owner",
	       expect(r == 0, "copy %d", r) &&
	       expect(ipat_differs(lmem, WLEN, 21) < 0, "differs at %ld",
		      ipat_differs(lmem, WLEN, 21)));
	r = imp("vmap");
	{
		uint64_t head;

		memcpy(&head, lmem, sizeof(head));
		result("vmap_local_bytes",
		       expect(r == 0, "vmap %d", r) &&
		       expect((uint64_t)imp_state_u64("vhead") == head,
			      "vhead %llx, window %llx",
			      (unsigned long long)imp_state_u64("vhead"),
			      (unsigned long long)head));
	}
	imp("release");
	r = imp("static %d", fd);
	result("static_attach_local_allowed", expect(r == 0, "static %d", r));
	if (fd >= 0)
		close(fd);

	/* Remote: the importer's DMA lands in the peer's window. */
	fd = export(a, W_OFF, WLEN, 3, SCIF_DMABUF_REMOTE);
	r = imp("static %d", fd);
	result("static_attach_remote_eopnotsupp",
	       expect(r == -EOPNOTSUPP, "static %d", r));
	r = imp("nop2p %d", fd);
	result("nop2p_attach_remote_eopnotsupp",
	       expect(r == -EOPNOTSUPP, "nop2p %d", r));
	r = imp("import %d", fd);
	result("import_remote_mapped",
	       expect(fd >= 0, "export %d", fd) &&
	       expect(r == 0, "import %d", r) &&
	       expect(imp_state("mapped") == 1, "mapped %ld",
		      imp_state("mapped")));
	r = imp("copy 33");
	memset(got, 0, WLEN);
	result("import_remote_dma_reaches_peer",
	       expect(r == 0, "copy %d", r) &&
	       expect(scif_vreadfrom(a, got, WLEN, W_OFF, SCIF_RMA_SYNC) == 0,
		      "vreadfrom errno %d", errno) &&
	       expect(ipat_differs(got, WLEN, 33) < 0, "differs at %ld",
		      ipat_differs(got, WLEN, 33)));
	imp("release");
	if (fd >= 0)
		close(fd);
	free(got);
}

static void t_budget(void)
{
	int fds[BUDGET], n = 0, r;

	while (n < BUDGET) {
		fds[n] = export(a, L_OFF, PG, 3, 0);
		if (fds[n] < 0)
			break;
		n++;
	}
	r = export(a, L_OFF, PG, 3, 0);
	result("export_budget_emfile",
	       expect(n == BUDGET, "%d exported, %d", n,
		      n < BUDGET ? fds[n] : 0) &&
	       expect(r == -EMFILE, "export %d past the budget", r));
	if (r >= 0)
		close(r);
	while (n--)
		close(fds[n]);
	r = export(a, L_OFF, PG, 3, 0);
	result("export_budget_back", expect(r >= 0, "export %d", r));
	if (r >= 0)
		close(r);
}

/* Revocation by the peer's scif_unregister(), with a lazy importer. */
static void t_revoke_unregister(void)
{
	long held, moves = imp_state("moves");
	struct dma_buf_sync sync = { .flags = DMA_BUF_SYNC_START |
				     DMA_BUF_SYNC_READ };
	double t0, took;
	uint8_t *m;
	int fd, r;

	fd = export(a, W_OFF, WLEN, 3, SCIF_DMABUF_REMOTE);
	m = fd >= 0 ? mmap(NULL, WLEN, PROT_READ, MAP_SHARED, fd, 0) :
		      MAP_FAILED;
	r = imp("import %d lazy", fd);
	held = rma_stat("remote_windows");
	t0 = now();
	r = r ? r : ask(OP_UNREG, W_OFF, WLEN, 0, 0);
	took = now() - t0;
	result("revoke_unregister_peer_returns",
	       expect(fd >= 0, "export %d", fd) &&
	       expect(m != MAP_FAILED, "mmap errno %d", errno) &&
	       expect(r == 0, "import or unregister %d", r) &&
	       expect(took < 5, "unregister took %.1f s", took));
	result("revoke_unregister_move_notify",
	       expect(moves_reach(moves + 1), "moves %ld, was %ld",
		      imp_state("moves"), moves));
	result("revoke_unregister_cpu_mapping_sigbus",
	       expect(m != MAP_FAILED && read_sigbus(m), "no SIGBUS"));
	r = ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync);
	result("revoke_unregister_cpu_access_enodev",
	       expect(r < 0 && errno == ENODEV, "sync %d errno %d", r, errno));
	r = export(a, W_OFF, WLEN, 3, SCIF_DMABUF_REMOTE);
	result("revoke_unregister_new_export_enxio",
	       expect(r == -ENXIO, "export %d", r));
	if (r >= 0)
		close(r);
	/* The lazy importer still maps it: the window is held. */
	result("revoke_unregister_window_held_while_mapped",
	       expect(rma_stat("remote_windows") == held,
		      "remote_windows %ld, was %ld",
		      rma_stat("remote_windows"), held));
	if (m != MAP_FAILED)
		munmap(m, WLEN);
	if (fd >= 0)
		close(fd);
	imp("release");
	result("revoke_unregister_window_released_with_dmabuf",
	       expect(rma_stat("remote_windows") == held - 1,
		      "remote_windows %ld, was %ld",
		      rma_stat("remote_windows"), held));
}

/* Revocation by the end of the connection (the peer closes it). */
static void t_revoke_close(void)
{
	long moves = imp_state("moves"), before;
	int fd, r;

	r = ask(OP_REG, W_OFF, WLEN, SCIF_PROT_READ | SCIF_PROT_WRITE, 13);
	result("revoke_close_peer_registers_again", expect(r == 0, "reg %d", r));
	fd = export(a, W_OFF, WLEN, 3, SCIF_DMABUF_REMOTE);
	r = imp("import %d", fd);
	before = rma_stat("remote_windows");
	ask(OP_CLOSE, 0, 0, 0, 0);
	result("revoke_close_move_notify_unmapped",
	       expect(fd >= 0, "export %d", fd) &&
	       expect(r == 0, "import %d", r) &&
	       expect(moves_reach(moves + 1), "moves %ld, was %ld",
		      imp_state("moves"), moves) &&
	       expect(imp_state("mapped") == 0, "mapped %ld",
		      imp_state("mapped")));
	r = imp("map");
	result("revoke_close_map_enodev", expect(r == -ENODEV, "map %d", r));
	r = imp("copy 1");
	result("revoke_close_copy_refused", expect(r == -ENODEV, "copy %d", r));
	imp("release");
	if (fd >= 0)
		close(fd);
	result("revoke_close_windows_released",
	       expect(rma_stat("remote_windows") < before,
		      "remote_windows %ld, was %ld",
		      rma_stat("remote_windows"), before));
	scif_close(a);
	a = -1;
}

/* Revocation by this endpoint's own unregistration of a local window. */
static void t_revoke_local(void)
{
	long moves = imp_state("moves");
	int fd, r;

	fd = export(a, L_OFF, WLEN, 3, 0);
	r = imp("import %d", fd);
	r = r ? r : scif_unregister(a, L_OFF, WLEN) ? -errno : 0;
	result("revoke_local_unregister_move_notify",
	       expect(fd >= 0, "export %d", fd) &&
	       expect(r == 0, "import or unregister %d", r) &&
	       expect(imp_state("moves") == moves + 1,
		      "moves %ld, was %ld (when scif_unregister returned)",
		      imp_state("moves"), moves) &&
	       expect(imp_state("mapped") == 0, "mapped %ld",
		      imp_state("mapped")));
	r = imp("map");
	result("revoke_local_map_enodev", expect(r == -ENODEV, "map %d", r));
	imp("release");
	if (fd >= 0)
		close(fd);
}

/*
 * Node loss (-l NODE): this node's bus is unloaded while the lazy
 * importer keeps a mapping of NODE's window, then loaded again; NODE must
 * stay out ("held") until the importer lets go, then come back.
 */
static void t_loss(void)
{
	struct dma_buf_sync sync = { .flags = DMA_BUF_SYNC_START |
				     DMA_BUF_SYNC_READ };
	char state[32], held[32];
	long moves;
	int fd, r;

	fd = export(a, W_OFF, WLEN, 3, SCIF_DMABUF_REMOTE);
	r = imp("import %d lazy", fd);
	moves = imp_state("moves");
	result("loss_imported",
	       expect(fd >= 0, "export %d", fd) &&
	       expect(r == 0, "import %d", r) &&
	       expect(imp_state("mapped") == 1, "mapped %ld",
		      imp_state("mapped")));
	r = system("rmmod scif_ivshmem");
	result("loss_move_notify",
	       expect(r == 0, "rmmod %d", r) &&
	       expect(moves_reach(moves + 1), "moves %ld, was %ld",
		      imp_state("moves"), moves));
	r = system("insmod /modules/scif_ivshmem.ko $(tr ' ' '\\n' "
		   "< /proc/cmdline | sed -n 's/^scif_ivshmem\\.//p')");
	/* Long enough for the peer's next life to have joined, if let. */
	sleep(4);
	node_file(peer_node, "state", state, sizeof(state));
	node_file(peer_node, "held_mappings", held, sizeof(held));
	result("loss_node_held_while_imported",
	       expect(r == 0, "insmod %d", r) &&
	       expect(!node_online(peer_node) && !strcmp(state, "held") &&
		      !strcmp(held, "1"), "online %d, state %s, held %s",
		      node_online(peer_node), state, held));
	r = ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync);
	result("loss_cpu_access_enodev",
	       expect(r < 0 && errno == ENODEV, "sync %d errno %d", r, errno));
	imp("release");
	if (fd >= 0)
		close(fd);
	node_file(peer_node, "held_mappings", held, sizeof(held));
	result("loss_node_back_after_release",
	       expect(wait_node(peer_node, true, 30000),
		      "node %u not online 30 s after the release",
		      peer_node) &&
	       expect(!strcmp(held, "0"), "held_mappings %s", held));
	scif_close(a);
	a = -1;
}

static int local_windows(void)
{
	void *ro;

	lmem = mmap(NULL, WLEN, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (lmem == MAP_FAILED || ro == MAP_FAILED)
		return -1;
	fill(lmem, WLEN, 7);
	if (scif_register(a, lmem, WLEN, L_OFF, SCIF_PROT_READ |
			  SCIF_PROT_WRITE, SCIF_MAP_FIXED) != L_OFF ||
	    scif_register(a, ro, PG, L_RO_OFF, SCIF_PROT_READ,
			  SCIF_MAP_FIXED) != L_RO_OFF)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	pid_t server = 0;
	bool loss = false;
	int opt, st;

	peer_node = (uint16_t)-1;
	while ((opt = getopt(argc, argv, "sp:l:")) != -1) {
		if (opt == 's')
			return serve();
		if (opt == 'p' || opt == 'l')
			peer_node = atoi(optarg);
		loss = opt == 'l';
	}
	printf("TAP version 13\n");
	if (peer_node == (uint16_t)-1) {
		if (scif_get_nodeIDs(NULL, 0, &peer_node) < 0) {
			printf("1..1\nnot ok 1 dmabuf_setup # no node id\n");
			return 1;
		}
		server = fork();
		if (server == 0)
			_exit(serve());
	}
	if (access(CTL, W_OK)) {
		printf("1..1\nnot ok 1 dmabuf_setup # no importer (%s)\n", CTL);
		return 1;
	}
	if (peer_windows(11) || local_windows()) {
		printf("1..1\nnot ok 1 dmabuf_setup # %s\n", strerror(errno));
		if (a >= 0)
			ask(OP_QUIT, 0, 0, 0, 0);
		if (server > 0)
			waitpid(server, &st, 0);
		return 1;
	}
	if (loss) {
		t_loss();
		goto quit;
	}
	t_refused();
	t_mmap();
	t_import();
	t_budget();
	t_revoke_local();
	t_revoke_unregister();
	t_revoke_close();
quit:
	/* A new connection, to tell the server to quit. */
	if (!connect_peer()) {
		ask(OP_QUIT, 0, 0, 0, 0);
		scif_close(a);
	}
	if (server > 0)
		waitpid(server, &st, 0);
	printf("1..%d\n", nr_test);
	return nr_fail ? 1 : 0;
}
