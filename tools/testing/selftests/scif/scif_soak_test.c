// SPDX-License-Identifier: GPL-2.0
/*
 * The soak run (make soak, scripts/soak.sh): a cluster of 2 or more nodes
 * (qemu/cluster.sh) in which node 1, the victim, is killed and restarted
 * scif.soak_rounds= times (default 50) under mixed traffic.  Every other
 * node is a survivor.
 *
 * Each round, every survivor loads the victim with: two echo streams, a
 * connect storm (open, connect, close as fast as it goes), synchronous
 * RMAs into and out of the victim's window (bytes compared), fence waits
 * on its own asynchronous writetos into that window and on the victim's
 * writetos into its own window (a peer mark), and a mapping of the
 * victim's window that it reads.  Node 0 then has the launcher kill the
 * victim (scif-cluster kill 1).  Every call on a survivor must return
 * within BOUND_MS with the documented error: ECONNRESET for the streams,
 * ENODEV for the connect storm and a new connect, ECONNRESET or ENODEV
 * for RMAs and fence waits (rma.rst: ENODEV once the node is known lost,
 * ECONNRESET for a call that the reset itself ended), SIGBUS for the
 * mapping.  The time is measured from the moment node 0 asks for the
 * kill (just before it writes the request; other survivors: when node 0's
 * "kill" message reaches them, a few milliseconds later), so it includes
 * the launcher's reaction and the heartbeat timeout (hb_timeout_ms, 1000
 * on the ivshmem bus).  Then node 0 has the victim restarted and waits
 * for it to rejoin; every survivor, which closed everything it had with
 * the victim, must then be back to its <debugfs>/scif/rma counts of
 * before the round (pinned pages, windows, remote windows): not sooner,
 * as what a silent node may still write into stays pinned until it
 * restarts.
 *
 * With more than 2 nodes the survivors also talk to each other all along
 * (an echo stream with a window each way, RMAs both ways, bytes compared):
 * none of that may fail, and it must make progress while each loss is
 * being handled.
 *
 * At the end every survivor stops its traffic and compares its memory
 * with its baseline (taken before any traffic): pinned pages, windows and
 * remote windows exactly, unreclaimable slab (/proc/meminfo SUnreclaim,
 * after dropping caches) within SLAB_TOL_KB.  Node 0 prints TAP and the
 * figures as "# soak:" lines; scripts/soak.sh shows them.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include "scif.h"
#include "scif_mmap_test.h"
/* Only some of its helpers are used here, not its cluster_main(). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "scif_cluster_util.h"
#pragma GCC diagnostic pop

#define VICTIM		1
#define VPORT		2300	/* the victim's server */
#define SPORT		2301	/* every survivor's server for the others */
#define CPORT		2302	/* node 0's control connection to survivors */
#define BLOCK		4096
#define WIN		(256 * 1024L)
#define NSTREAMS	2
#define BOUND_MS	2000	/* from the kill request to every error */
#define JOIN_MS		30000	/* a thread still blocked then is a hang */
#define SLAB_TOL_KB	2048
#define MAX_ROUNDS	1000

static int nodes_want, rounds;

/* ---- what a survivor measures ---- */

enum kind { K_STREAM, K_STORM, K_RMA, K_FSELF, K_FPEER, K_SIGBUS, K_NEWCONN,
	    NR_KINDS };
static const char *const kind_name[NR_KINDS] = {
	"echo_streams", "connect_storm", "rma_both_ways", "fence_wait_self",
	"fence_wait_peer", "mapping_sigbus", "new_connect",
};
static const char *const kind_want[NR_KINDS] = {
	"ECONNRESET", "ENODEV", "ECONNRESET/ENODEV", "ECONNRESET/ENODEV",
	"ECONNRESET/ENODEV", "SIGBUS", "ENODEV",
};

struct rma_counts {
	long pinned, windows, rwindows;
};

struct memfig {
	struct rma_counts rma;
	long slab_kb, sunreclaim_kb, unevictable_kb, mlocked_kb;
};

/* Every control message, both ways, is one of these. */
struct ctl {
	char cmd[12];
	int32_t round;
	int32_t node;
	int32_t err[NR_KINDS];	/* 0: the documented error, else what came */
	int32_t ms[NR_KINDS];	/* from the kill to the error */
	int32_t moving;		/* 0: everything moved before the kill */
	int32_t hung;		/* a call on the victim never returned */
	int32_t pinned_back;	/* 0: rma counts back to the round's start,
				 * once the victim restarted (SETTLE) */
	int64_t peer_blocks;	/* survivor traffic during the loss */
	int32_t peer_err;	/* first error of the survivor traffic */
	struct memfig before, after;
};

static long read_key(const char *path, const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ' ') {
			v = atol(line + n + 1);
			break;
		} else if (!strncmp(line, key, n) && line[n] == ':') {
			v = atol(line + n + 1);
			break;
		}
	fclose(f);
	return v;
}

#define RMA_DEBUGFS "/sys/kernel/debug/scif/rma"

static void rma_counts(struct rma_counts *c)
{
	c->pinned = read_key(RMA_DEBUGFS, "pinned_pages");
	c->windows = read_key(RMA_DEBUGFS, "windows");
	c->rwindows = read_key(RMA_DEBUGFS, "remote_windows");
}

static bool rma_same(const struct rma_counts *a, const struct rma_counts *b)
{
	return a->pinned == b->pinned && a->windows == b->windows &&
	       a->rwindows == b->rwindows;
}

/* Up to 5 s for the counts to come back to @want. */
static bool rma_settle(const struct rma_counts *want, struct rma_counts *got)
{
	for (int i = 0; i < 50; i++) {
		rma_counts(got);
		if (rma_same(want, got))
			return true;
		usleep(100 * 1000);
	}
	return false;
}

static void mem_figures(struct memfig *m)
{
	FILE *f = fopen("/proc/sys/vm/drop_caches", "w");

	if (f) {
		fputs("3\n", f);
		fclose(f);
	}
	sleep(1);
	rma_counts(&m->rma);
	m->slab_kb = read_key("/proc/meminfo", "Slab");
	m->sunreclaim_kb = read_key("/proc/meminfo", "SUnreclaim");
	m->unevictable_kb = read_key("/proc/meminfo", "Unevictable");
	m->mlocked_kb = read_key("/proc/meminfo", "Mlocked");
}

static int send_ctl(scif_epd_t epd, struct ctl *c)
{
	return scif_send(epd, c, sizeof(*c), SCIF_SEND_BLOCK) == sizeof(*c) ?
	       0 : -1;
}

static int recv_ctl(scif_epd_t epd, struct ctl *c, const char *want)
{
	if (scif_recv(epd, c, sizeof(*c), SCIF_RECV_BLOCK) != sizeof(*c))
		return -1;
	return strncmp(c->cmd, want, sizeof(c->cmd)) ? -1 : 0;
}

static void set_cmd(struct ctl *c, const char *cmd)
{
	snprintf(c->cmd, sizeof(c->cmd), "%s", cmd);
}

static int send_word(scif_epd_t epd, const char *word)
{
	char buf[BLOCK] = { 0 };

	strncpy(buf, word, 8);
	return scif_send(epd, buf, BLOCK, SCIF_SEND_BLOCK) == BLOCK ? 0 : -1;
}

/* Wait up to @ms for @node to be listed (@present) or not. */
static bool node_listed(uint16_t node, bool present, int ms)
{
	long end = cluster_now_ms() + ms;
	uint16_t ids[CLUSTER_MAX_NODES], me;
	int n;

	for (;;) {
		bool found = false;

		n = scif_get_nodeIDs(ids, CLUSTER_MAX_NODES, &me);
		for (int i = 0; i < n && i < CLUSTER_MAX_NODES; i++)
			if (ids[i] == node)
				found = true;
		if (found == present)
			return true;
		if (cluster_now_ms() > end)
			return false;
		usleep(100 * 1000);
	}
}

/* ---- the victim ---- */

static void *victim_conn(void *arg)
{
	scif_epd_t epd = (intptr_t)arg;
	char buf[BLOCK], *win = NULL;

	if (scif_recv(epd, buf, BLOCK, SCIF_RECV_BLOCK) != BLOCK)
		goto out;
	if (!strcmp(buf, "QUIT")) {
		printf("# victim: told to quit\n");
		fflush(stdout);
		exit(0);
	}
	if (!strcmp(buf, "ECHO")) {
		while (scif_recv(epd, buf, BLOCK, SCIF_RECV_BLOCK) == BLOCK &&
		       scif_send(epd, buf, BLOCK, SCIF_SEND_BLOCK) == BLOCK)
			;
		goto out;
	}
	/* WIND and FENC: a window, then wait or copy into the peer's. */
	if (posix_memalign((void **)&win, 4096, WIN))
		goto out;
	memset(win, 0x5c, WIN);
	if (scif_register(epd, win, WIN, 0,
			  SCIF_PROT_READ | SCIF_PROT_WRITE, SCIF_MAP_FIXED) < 0 ||
	    scif_send(epd, buf, BLOCK, SCIF_SEND_BLOCK) != BLOCK)
		goto out;
	if (!strcmp(buf, "FENC"))
		while (!scif_writeto(epd, 0, WIN, 0, 0))
			;
	else
		scif_recv(epd, buf, BLOCK, SCIF_RECV_BLOCK);
out:
	scif_close(epd);
	free(win);
	return NULL;
}

static int victim(void)
{
	struct scif_port_id peer;
	scif_epd_t lep = scif_open(), epd;
	pthread_t th;

	if (lep < 0 || scif_bind(lep, VPORT) < 0 || scif_listen(lep, 64) < 0) {
		printf("# victim: listen: %s\n", strerror(errno));
		return 1;
	}
	printf("# victim: life %s serving\n", getenv("SCIF_RESTART"));
	fflush(stdout);
	for (;;) {
		if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC) < 0) {
			usleep(10 * 1000);
			continue;
		}
		if (pthread_create(&th, NULL, victim_conn,
				   (void *)(intptr_t)epd))
			scif_close(epd);
		else
			pthread_detach(th);
	}
}

/* ---- a survivor's load on the victim ---- */

struct worker {
	pthread_t th;
	scif_epd_t epd;
	long count;		/* calls that succeeded */
	int err;		/* errno of the call that failed */
	long failed_at;
	bool done;
	int peer;		/* fence worker: wait on the victim's RMAs */
};

struct vload {
	struct worker stream[NSTREAMS], storm, rma, fence[2];
	scif_epd_t wind, fenc;
	void *map;
	char *rma_buf;		/* 2 * WIN: out, then back */
	char *fence_buf;	/* WIN: the victim's writetos land here */
	struct rma_counts start;
};

static void worker_end(struct worker *w, int err)
{
	w->err = err;
	w->failed_at = cluster_now_ms();
	__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
}

static void *stream_fn(void *arg)
{
	struct worker *w = arg;
	char out[BLOCK], in[BLOCK];

	for (;;) {
		memset(out, (int)(w->count & 0xff), BLOCK);
		if (scif_send(w->epd, out, BLOCK, SCIF_SEND_BLOCK) != BLOCK ||
		    scif_recv(w->epd, in, BLOCK, SCIF_RECV_BLOCK) != BLOCK)
			break;
		if (memcmp(in, out, BLOCK)) {
			worker_end(w, EBADMSG);
			return NULL;
		}
		__atomic_add_fetch(&w->count, 1, __ATOMIC_RELAXED);
	}
	worker_end(w, errno);
	return NULL;
}

static void *storm_fn(void *arg)
{
	struct worker *w = arg;
	struct scif_port_id dst = { .node = VICTIM, .port = VPORT };
	scif_epd_t epd;
	int r, err;

	for (;;) {
		epd = scif_open();
		if (epd < 0) {
			worker_end(w, errno ? errno : EBADF);
			return NULL;
		}
		r = scif_connect(epd, &dst);
		err = errno;
		scif_close(epd);
		if (r < 0)
			break;
		__atomic_add_fetch(&w->count, 1, __ATOMIC_RELAXED);
	}
	worker_end(w, err);
	return NULL;
}

/* RMAs both ways on the WIND connection: out, back, compared. */
static void *rma_fn(void *arg)
{
	struct vload *v = arg;
	struct worker *w = &v->rma;

	for (;;) {
		memset(v->rma_buf, (int)(w->count & 0xff) | 1, WIN);
		memset(v->rma_buf + WIN, 0, WIN);
		if (scif_writeto(w->epd, 0, WIN, 0, SCIF_RMA_SYNC) ||
		    scif_readfrom(w->epd, WIN, WIN, 0, SCIF_RMA_SYNC))
			break;
		if (memcmp(v->rma_buf, v->rma_buf + WIN, WIN)) {
			worker_end(w, EBADMSG);
			return NULL;
		}
		__atomic_add_fetch(&w->count, 1, __ATOMIC_RELAXED);
	}
	worker_end(w, errno);
	return NULL;
}

static void *fence_fn(void *arg)
{
	struct worker *w = arg;
	int mark;

	for (;;) {
		if (!w->peer && scif_writeto(w->epd, 0, WIN, 0, 0))
			break;
		if (scif_fence_mark(w->epd, w->peer ? SCIF_FENCE_INIT_PEER :
				    SCIF_FENCE_INIT_SELF, &mark) ||
		    scif_fence_wait(w->epd, mark))
			break;
		__atomic_add_fetch(&w->count, 1, __ATOMIC_RELAXED);
	}
	worker_end(w, errno);
	return NULL;
}

/*
 * Connect to the victim's server, for up to a minute while it is not
 * listening yet (a node is listed before its steps start).
 */
static int victim_connect(scif_epd_t *out)
{
	int err = ECONNREFUSED;

	for (int i = 0; i < 6 && err == ECONNREFUSED; i++)
		err = cluster_connect(VICTIM, VPORT, out);
	return err;
}

/* A connection to the victim that starts with @word. */
static int victim_conn_open(const char *word, scif_epd_t *out)
{
	int err = victim_connect(out);

	if (!err && send_word(*out, word)) {
		err = errno;
		scif_close(*out);
	}
	return err;
}

static int window_conn(const char *word, void *win, long len, scif_epd_t *out)
{
	char buf[BLOCK];
	int err = victim_connect(out);

	if (err)
		return err;
	if (scif_register(*out, win, len, 0, SCIF_PROT_READ | SCIF_PROT_WRITE,
			  SCIF_MAP_FIXED) < 0 || send_word(*out, word) ||
	    scif_recv(*out, buf, BLOCK, SCIF_RECV_BLOCK) != BLOCK) {
		err = errno;
		scif_close(*out);
	}
	return err;
}

static bool vload_moving(struct vload *v)
{
	for (int i = 0; i < NSTREAMS; i++)
		if (!__atomic_load_n(&v->stream[i].count, __ATOMIC_RELAXED))
			return false;
	return __atomic_load_n(&v->storm.count, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&v->rma.count, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&v->fence[0].count, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&v->fence[1].count, __ATOMIC_RELAXED);
}

static bool vload_failed(struct vload *v)
{
	for (int i = 0; i < NSTREAMS; i++)
		if (__atomic_load_n(&v->stream[i].done, __ATOMIC_ACQUIRE))
			return true;
	return __atomic_load_n(&v->storm.done, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&v->rma.done, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&v->fence[0].done, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&v->fence[1].done, __ATOMIC_ACQUIRE);
}

/*
 * Connect everything and start the workers; 0 once each has made
 * progress (up to 20 s), else an errno (the workers still run).
 */
static int vload_start(struct vload *v)
{
	int err = 0, i;

	memset(v, 0, sizeof(*v));
	v->wind = v->fenc = -1;
	v->map = MAP_FAILED;
	rma_counts(&v->start);
	if (!node_listed(VICTIM, true, 120000))
		return EHOSTDOWN;
	if (posix_memalign((void **)&v->rma_buf, 4096, 2 * WIN) ||
	    posix_memalign((void **)&v->fence_buf, 4096, WIN))
		return ENOMEM;
	memset(v->fence_buf, 0, WIN);
	for (i = 0; i < NSTREAMS; i++) {
		err = victim_conn_open("ECHO", &v->stream[i].epd);
		if (err)
			return err;
		pthread_create(&v->stream[i].th, NULL, stream_fn, &v->stream[i]);
	}
	err = window_conn("WIND", v->rma_buf, 2 * WIN, &v->wind);
	if (err)
		return err;
	err = window_conn("FENC", v->fence_buf, WIN, &v->fenc);
	if (err)
		return err;
	v->map = scif_mmap(NULL, BLOCK, SCIF_PROT_READ, 0, v->wind, 0);
	if (v->map == MAP_FAILED || probe(v->map, false))
		return EFAULT;
	v->rma.epd = v->wind;
	pthread_create(&v->rma.th, NULL, rma_fn, v);
	pthread_create(&v->storm.th, NULL, storm_fn, &v->storm);
	for (i = 0; i < 2; i++) {
		v->fence[i].epd = v->fenc;
		v->fence[i].peer = i;
		pthread_create(&v->fence[i].th, NULL, fence_fn, &v->fence[i]);
	}
	for (i = 0; i < 200 && !vload_moving(v); i++) {
		if (vload_failed(v))
			return EPIPE;
		usleep(100 * 1000);
	}
	return vload_moving(v) && !vload_failed(v) ? 0 : ETIMEDOUT;
}

/* Join @w (up to JOIN_MS after @t_kill); its outcome into @err/@ms. */
static int worker_join(struct worker *w, long t_kill, int want1, int want2,
		       int *err, int *ms)
{
	struct timespec ts;
	long left = t_kill + JOIN_MS - cluster_now_ms();

	if (!w->th) {		/* never started: vload_start() failed */
		if (!*err)
			*err = ESRCH;
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	if (left < 0)
		left = 0;
	ts.tv_sec += left / 1000;
	ts.tv_nsec += (left % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	if (pthread_timedjoin_np(w->th, NULL, &ts)) {
		*err = ETIMEDOUT;
		*ms = JOIN_MS;
		return -1;
	}
	w->th = 0;
	if (w->err != want1 && w->err != want2 && !*err)
		*err = w->err ? w->err : EBADMSG;
	if (w->failed_at - t_kill > *ms)
		*ms = w->failed_at - t_kill;
	return 0;
}

/*
 * After the kill at @t_kill: every call must end with its error; the
 * mapping must raise SIGBUS; a new connect must get ENODEV.  Then close
 * everything and check the rma counts.  Returns -1 if a worker hangs
 * (the run cannot go on), else 0.
 */
static int vload_finish(struct vload *v, long t_kill, struct ctl *c)
{
	struct scif_port_id dst = { .node = VICTIM, .port = VPORT };
	int hung = 0, i, r;
	scif_epd_t epd;

	memset(c->err, 0, sizeof(c->err));
	memset(c->ms, 0, sizeof(c->ms));
	for (i = 0; i < NSTREAMS; i++)
		hung |= worker_join(&v->stream[i], t_kill, ECONNRESET,
				    ECONNRESET, &c->err[K_STREAM],
				    &c->ms[K_STREAM]);
	hung |= worker_join(&v->storm, t_kill, ENODEV, ENODEV,
			    &c->err[K_STORM], &c->ms[K_STORM]);
	hung |= worker_join(&v->rma, t_kill, ECONNRESET, ENODEV,
			    &c->err[K_RMA], &c->ms[K_RMA]);
	hung |= worker_join(&v->fence[0], t_kill, ECONNRESET, ENODEV,
			    &c->err[K_FSELF], &c->ms[K_FSELF]);
	hung |= worker_join(&v->fence[1], t_kill, ECONNRESET, ENODEV,
			    &c->err[K_FPEER], &c->ms[K_FPEER]);
	if (v->map != MAP_FAILED) {
		r = probe_until(v->map, SIGBUS, JOIN_MS);
		c->ms[K_SIGBUS] = cluster_now_ms() - t_kill;
		c->err[K_SIGBUS] = r ? ETIMEDOUT : 0;
		scif_munmap(v->map, BLOCK);
	} else {
		c->err[K_SIGBUS] = EFAULT;
	}
	/* A new call after the loss: its own duration is what counts. */
	epd = scif_open();
	t_kill = cluster_now_ms();
	r = scif_connect(epd, &dst);
	c->err[K_NEWCONN] = want_errno(r >= 0 ? 0 : -1, ENODEV);
	c->ms[K_NEWCONN] = cluster_now_ms() - t_kill;
	scif_close(epd);
	for (i = 0; i < NSTREAMS; i++)
		if (v->stream[i].epd > 0)
			scif_close(v->stream[i].epd);
	if (v->wind >= 0)
		scif_close(v->wind);
	if (v->fenc >= 0)
		scif_close(v->fenc);
	if (hung) {
		c->pinned_back = EBUSY;
		return -1;
	}
	free(v->rma_buf);
	free(v->fence_buf);
	return 0;
}

/*
 * Once the victim has restarted: the rma counts must be back to the
 * round's start.  Not before: a node that went silent may only be
 * stalled, so what it wrote into stays pinned until it restarts
 * (ivshmem.rst, "Node life").
 */
static int vload_settled(struct vload *v)
{
	struct rma_counts now;

	if (rma_settle(&v->start, &now))
		return 0;
	printf("# node %u: rma counts %ld/%ld/%ld, were %ld/%ld/%ld\n",
	       self, now.pinned, now.windows, now.rwindows,
	       v->start.pinned, v->start.windows, v->start.rwindows);
	return EBUSY;
}

/* ---- traffic between survivors ---- */

struct speer {
	pthread_t th;
	uint16_t node;
	scif_epd_t epd;
	long blocks;
	int err;
	char *win;
};

static struct speer speers[CLUSTER_MAX_NODES];
static int nr_speers;
static volatile bool speer_stop;
static int sserv_conns;
static int sserv_echoing;	/* served connections past their first block */

static long speer_blocks(void)
{
	long n = 0;

	for (int i = 0; i < nr_speers; i++)
		n += __atomic_load_n(&speers[i].blocks, __ATOMIC_RELAXED);
	return n;
}

static int speer_err(void)
{
	for (int i = 0; i < nr_speers; i++)
		if (speers[i].err)
			return speers[i].err;
	return 0;
}

/* The serving side: a window, then echo until told to stop. */
static void *sserv_conn(void *arg)
{
	scif_epd_t epd = (intptr_t)arg;
	char buf[BLOCK] = "READY";
	char *win;

	if (posix_memalign((void **)&win, 4096, WIN))
		goto out;
	memset(win, 0, WIN);
	if (scif_register(epd, win, WIN, 0, SCIF_PROT_READ | SCIF_PROT_WRITE,
			  SCIF_MAP_FIXED) < 0 ||
	    scif_send(epd, buf, BLOCK, SCIF_SEND_BLOCK) != BLOCK)
		goto out_free;
	/* The peer registered its window before it sent the first block. */
	for (bool first = true;
	     scif_recv(epd, buf, BLOCK, SCIF_RECV_BLOCK) == BLOCK &&
	     strcmp(buf, "STOP") &&
	     scif_send(epd, buf, BLOCK, SCIF_SEND_BLOCK) == BLOCK;
	     first = false)
		if (first)
			__atomic_add_fetch(&sserv_echoing, 1, __ATOMIC_RELEASE);
	scif_unregister(epd, 0, WIN);
out_free:
	free(win);
out:
	scif_close(epd);
	__atomic_sub_fetch(&sserv_conns, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *sserv(void *arg)
{
	scif_epd_t lep = (intptr_t)arg, epd;
	struct scif_port_id peer;
	pthread_t th;

	for (int served = 0; served < nodes_want - 2; served++) {
		if (scif_accept(lep, &peer, &epd, SCIF_ACCEPT_SYNC) < 0)
			break;
		__atomic_add_fetch(&sserv_conns, 1, __ATOMIC_ACQUIRE);
		if (pthread_create(&th, NULL, sserv_conn,
				   (void *)(intptr_t)epd)) {
			scif_close(epd);
			__atomic_sub_fetch(&sserv_conns, 1, __ATOMIC_RELEASE);
		} else {
			pthread_detach(th);
		}
	}
	return NULL;
}

/* The client side: echo blocks, and every 8th an RMA out and back. */
static void *speer_fn(void *arg)
{
	struct speer *p = arg;
	char out[BLOCK], in[BLOCK];

	if (scif_recv(p->epd, in, BLOCK, SCIF_RECV_BLOCK) != BLOCK) {
		p->err = errno;
		return NULL;
	}
	while (!speer_stop) {
		long n = p->blocks;

		memset(out, (int)(n & 0xff) | 0x80, BLOCK);
		if (scif_send(p->epd, out, BLOCK, SCIF_SEND_BLOCK) != BLOCK ||
		    scif_recv(p->epd, in, BLOCK, SCIF_RECV_BLOCK) != BLOCK) {
			p->err = errno;
			return NULL;
		}
		if (memcmp(in, out, BLOCK)) {
			p->err = EBADMSG;
			return NULL;
		}
		if (n % 8 == 0) {
			memset(p->win, (int)(n & 0x7f) | 1, BLOCK);
			memset(p->win + BLOCK, 0, BLOCK);
			if (scif_writeto(p->epd, 0, BLOCK, 0, SCIF_RMA_SYNC) ||
			    scif_readfrom(p->epd, BLOCK, BLOCK, 0,
					  SCIF_RMA_SYNC)) {
				p->err = errno;
				return NULL;
			}
			if (memcmp(p->win, p->win + BLOCK, BLOCK)) {
				p->err = EBADMSG;
				return NULL;
			}
		}
		__atomic_add_fetch(&p->blocks, 1, __ATOMIC_RELAXED);
	}
	strcpy(out, "STOP");
	if (scif_send(p->epd, out, BLOCK, SCIF_SEND_BLOCK) != BLOCK)
		p->err = errno;
	return NULL;
}

/*
 * Wait (up to 60 s) until every connection between this survivor and the
 * others has echoed a block both ways: by then both sides registered their
 * windows, so the rma counts a round starts from are settled.  0, the
 * first error of a connection, or ETIMEDOUT.
 */
static int speers_settle(void)
{
	for (int i = 0; i < 600; i++) {
		bool all = __atomic_load_n(&sserv_echoing, __ATOMIC_ACQUIRE) >=
			   nodes_want - 2;

		for (int j = 0; j < nr_speers; j++)
			all &= __atomic_load_n(&speers[j].blocks,
					       __ATOMIC_RELAXED) > 0;
		if (speer_err())
			return speer_err();
		if (all)
			return 0;
		usleep(100 * 1000);
	}
	return ETIMEDOUT;
}

/* Connect to every other survivor and wait for the traffic to settle. */
static int speers_start(void)
{
	int err;

	for (int i = 0; i < nr_nodes; i++) {
		struct speer *p = &speers[nr_speers];

		if (peers[i] == VICTIM)
			continue;
		p->node = peers[i];
		if (posix_memalign((void **)&p->win, 4096, WIN))
			return ENOMEM;
		err = cluster_connect(p->node, SPORT, &p->epd);
		if (err)
			return err;
		if (scif_register(p->epd, p->win, WIN, 0,
				  SCIF_PROT_READ | SCIF_PROT_WRITE,
				  SCIF_MAP_FIXED) < 0)
			return errno;
		pthread_create(&p->th, NULL, speer_fn, p);
		nr_speers++;
	}
	return speers_settle();
}

/* Stop and close; the serving side ends when the others stop theirs. */
static void speers_stop(void)
{
	speer_stop = true;
	for (int i = 0; i < nr_speers; i++) {
		pthread_join(speers[i].th, NULL);
		scif_unregister(speers[i].epd, 0, WIN);
		scif_close(speers[i].epd);
		free(speers[i].win);
	}
}

static void sserv_drain(void)
{
	for (int i = 0; i < 100 &&
	     __atomic_load_n(&sserv_conns, __ATOMIC_ACQUIRE); i++)
		usleep(100 * 1000);
}

/* ---- survivors other than node 0: node 0's commands ---- */

static int survivor(void)
{
	scif_epd_t lep, cep, slep;
	struct scif_port_id peer;
	struct memfig before;
	struct vload v;
	struct ctl c;
	pthread_t sth;
	long blocks;
	int moving;

	lep = scif_open();
	slep = scif_open();
	if (lep < 0 || scif_bind(lep, CPORT) < 0 || scif_listen(lep, 1) < 0 ||
	    slep < 0 || scif_bind(slep, SPORT) < 0 ||
	    scif_listen(slep, 16) < 0) {
		printf("# node %u: listen: %s\n", self, strerror(errno));
		return 1;
	}
	pthread_create(&sth, NULL, sserv, (void *)(intptr_t)slep);
	if (scif_accept(lep, &peer, &cep, SCIF_ACCEPT_SYNC) < 0)
		return 1;
	scif_close(lep);
	if (recv_ctl(cep, &c, "BASE"))
		return 1;
	mem_figures(&before);
	set_cmd(&c, "BASE");
	if (send_ctl(cep, &c) || recv_ctl(cep, &c, "PEERS"))
		return 1;
	c.peer_err = speers_start();
	set_cmd(&c, "PEERS");
	if (send_ctl(cep, &c))
		return 1;
	for (;;) {
		if (scif_recv(cep, &c, sizeof(c), SCIF_RECV_BLOCK) != sizeof(c))
			return 1;
		if (!strcmp(c.cmd, "ROUND")) {
			moving = vload_start(&v);
			set_cmd(&c, "READY");
			if (send_ctl(cep, &c) || recv_ctl(cep, &c, "KILL"))
				return 1;
			blocks = speer_blocks();
			c.moving = moving;
			c.hung = vload_finish(&v, cluster_now_ms(), &c);
			if (c.hung)
				printf("# node %u: a call on the victim hangs\n",
				       self);
			c.peer_blocks = speer_blocks() - blocks;
			c.peer_err = speer_err();
			set_cmd(&c, "DONE");
			if (send_ctl(cep, &c))
				return 1;
		} else if (!strcmp(c.cmd, "SETTLE")) {
			c.pinned_back = vload_settled(&v);
			set_cmd(&c, "SETTLED");
			if (send_ctl(cep, &c))
				return 1;
		} else if (!strcmp(c.cmd, "STOP")) {
			speers_stop();
			c.peer_err = speer_err();
			set_cmd(&c, "STOPPED");
			if (send_ctl(cep, &c) || recv_ctl(cep, &c, "MEASURE"))
				return 1;
			sserv_drain();
			c.before = before;
			mem_figures(&c.after);
			set_cmd(&c, "MEASURE");
			send_ctl(cep, &c);
			scif_close(cep);
			printf("# node %u: survivor done\n", self);
			return 0;
		} else {
			return 1;
		}
	}
}

/* ---- node 0: the driver ---- */

/*
 * Ask the launcher to kill @node (qemu/cluster.sh, "scif-cluster: kill"),
 * writing the request on the control channel ourselves: a shell running
 * /bin/scif-cluster takes up to a second to start in a debug guest under
 * TCG, which would count in every time measured from the request.  *@t_req
 * is when the request was written.  0 once the launcher says it is done.
 */
static int cluster_kill(int node, long *t_req)
{
	const char *ctl = getenv("SCIF_CONTROL");
	char req[64], want[64], buf[512];
	size_t have = 0;
	long end;
	int fd, len;

	fd = ctl ? open(ctl, O_RDWR | O_NOCTTY) : -1;
	if (fd < 0)
		return -1;
	len = snprintf(req, sizeof(req), "scif-cluster: kill %d\n", node);
	snprintf(want, sizeof(want), "scif-cluster-ack: kill %d ok", node);
	*t_req = cluster_now_ms();
	if (write(fd, req, len) != len) {
		close(fd);
		return -1;
	}
	end = *t_req + 60000;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char *nl;
		ssize_t n;

		while ((nl = memchr(buf, '\n', have))) {
			*nl = '\0';
			if (strstr(buf, want)) {
				close(fd);
				return 0;
			}
			have -= nl + 1 - buf;
			memmove(buf, nl + 1, have);
		}
		if (have == sizeof(buf))
			have = 0;	/* no line is that long: drop it */
		if (cluster_now_ms() > end ||
		    poll(&pfd, 1, (int)(end - cluster_now_ms())) <= 0)
			break;
		n = read(fd, buf + have, sizeof(buf) - have);
		if (n <= 0)
			break;
		have += n;
	}
	close(fd);
	return -1;
}

static int t;
static scif_epd_t cep[CLUSTER_MAX_NODES];
static uint16_t cnode[CLUSTER_MAX_NODES];
static int nr_c;
static int ms_all[NR_KINDS][MAX_ROUNDS * CLUSTER_MAX_NODES];
static int ms_ack[NR_KINDS][MAX_ROUNDS * CLUSTER_MAX_NODES];
static int nr_ms[NR_KINDS];
static int kill_ms[MAX_ROUNDS], restart_ms[MAX_ROUNDS];

static void tap(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", ok ? "" : "not ", ++t);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static void spread(int *v, int n, int *worst, int *median)
{
	qsort(v, n, sizeof(*v), cmp_int);
	*worst = n ? v[n - 1] : -1;
	*median = n ? v[n / 2] : -1;
}

static int ctl_all(const char *cmd, int round)
{
	struct ctl c = { .round = round };

	set_cmd(&c, cmd);
	for (int i = 0; i < nr_c; i++)
		if (send_ctl(cep[i], &c))
			return -1;
	return 0;
}

/* One survivor's round: its rows. */
static void round_rows(int round, uint16_t node, struct ctl *c, bool peers_ok)
{
	int ack = kill_ms[round - 1];

	bool in_bound = true;

	tap(!c->moving, "round_%d_node_%u_load_moving_before_the_kill%s%s",
	    round, node, c->moving ? " # " : "",
	    c->moving ? strerror(c->moving) : "");
	for (int k = 0; k < NR_KINDS; k++) {
		tap(!c->err[k], "round_%d_node_%u_%s_got_%s # %d ms%s%s", round,
		    node, kind_name[k], kind_want[k], c->ms[k],
		    c->err[k] ? ", got " : "",
		    c->err[k] ? strerror(c->err[k]) : "");
		if (c->ms[k] > BOUND_MS)
			in_bound = false;
		if (!c->err[k] && nr_ms[k] < MAX_ROUNDS * CLUSTER_MAX_NODES) {
			/* A new connect: the call's own duration. */
			ms_ack[k][nr_ms[k]] = k == K_NEWCONN ? c->ms[k] :
					      c->ms[k] - ack;
			ms_all[k][nr_ms[k]++] = c->ms[k];
		}
	}
	tap(in_bound, "round_%d_node_%u_every_call_ended_within_%d_ms", round,
	    node, BOUND_MS);
	if (peers_ok)
		tap(!c->peer_err && c->peer_blocks > 0,
		    "round_%d_node_%u_survivor_traffic_moved_during_the_loss # %lld blocks%s%s",
		    round, node, (long long)c->peer_blocks,
		    c->peer_err ? ", " : "",
		    c->peer_err ? strerror(c->peer_err) : "");
}

static int run_round(int round)
{
	struct ctl mine = { 0 }, c[CLUSTER_MAX_NODES];
	bool with_peers = nodes_want > 2;
	long t_req, t_ack, blocks;
	struct vload v;
	int i, hung;

	tap(node_listed(VICTIM, true, 180000), "round_%d_victim_online", round);
	if (ctl_all("ROUND", round))
		return -1;
	mine.moving = vload_start(&v);
	for (i = 0; i < nr_c; i++)
		if (recv_ctl(cep[i], &c[i], "READY"))
			return -1;
	if (ctl_all("KILL", round))
		return -1;
	blocks = speer_blocks();
	t_req = cluster_now_ms();
	tap(cluster_kill(VICTIM, &t_req) == 0, "round_%d_victim_killed",
	    round);
	t_ack = cluster_now_ms();
	kill_ms[round - 1] = t_ack - t_req;
	hung = vload_finish(&v, t_req, &mine);
	mine.peer_blocks = speer_blocks() - blocks;
	mine.peer_err = speer_err();
	for (i = 0; i < nr_c; i++)
		if (recv_ctl(cep[i], &c[i], "DONE"))
			return -1;
	printf("# round %d: kill acknowledged %ld ms after the request\n",
	       round, t_ack - t_req);
	round_rows(round, self, &mine, with_peers);
	for (i = 0; i < nr_c; i++)
		round_rows(round, cnode[i], &c[i], with_peers);
	for (i = 0; i < nr_c; i++)
		hung |= c[i].hung;
	if (hung) {
		printf("# round %d: a call on the victim never returned, stopping\n",
		       round);
		return -1;
	}
	t_req = cluster_now_ms();
	tap(system("scif-cluster restart 1") == 0, "round_%d_victim_restarted",
	    round);
	tap(node_listed(VICTIM, true, 180000), "round_%d_victim_rejoined",
	    round);
	restart_ms[round - 1] = cluster_now_ms() - t_req;
	if (ctl_all("SETTLE", round))
		return -1;
	tap(!vload_settled(&v),
	    "round_%d_node_%u_rma_counts_back_once_the_victim_restarted",
	    round, self);
	for (i = 0; i < nr_c; i++) {
		if (recv_ctl(cep[i], &c[i], "SETTLED"))
			return -1;
		tap(!c[i].pinned_back,
		    "round_%d_node_%u_rma_counts_back_once_the_victim_restarted",
		    round, cnode[i]);
	}
	printf("# round %d: victim back %d ms after the restart request; SUnreclaim %ld kB, pinned_pages %ld\n",
	       round, restart_ms[round - 1],
	       read_key("/proc/meminfo", "SUnreclaim"),
	       read_key(RMA_DEBUGFS, "pinned_pages"));
	return 0;
}

static void mem_rows(uint16_t node, const struct memfig *b,
		     const struct memfig *a)
{
	printf("# soak: node %u memory: pinned_pages %ld -> %ld, windows %ld -> %ld, remote_windows %ld -> %ld\n",
	       node, b->rma.pinned, a->rma.pinned, b->rma.windows,
	       a->rma.windows, b->rma.rwindows, a->rma.rwindows);
	printf("# soak: node %u memory: Slab %ld -> %ld kB, SUnreclaim %ld -> %ld kB, Unevictable %ld -> %ld kB, Mlocked %ld -> %ld kB\n",
	       node, b->slab_kb, a->slab_kb, b->sunreclaim_kb,
	       a->sunreclaim_kb, b->unevictable_kb, a->unevictable_kb,
	       b->mlocked_kb, a->mlocked_kb);
	tap(rma_same(&b->rma, &a->rma) && a->rma.pinned >= 0,
	    "node_%u_pinned_pages_and_windows_back_to_baseline", node);
	tap(a->sunreclaim_kb >= 0 &&
	    a->sunreclaim_kb <= b->sunreclaim_kb + SLAB_TOL_KB,
	    "node_%u_unreclaimable_slab_back_to_baseline_within_%d_kB # %+ld kB",
	    node, SLAB_TOL_KB, a->sunreclaim_kb - b->sunreclaim_kb);
	tap(a->mlocked_kb >= 0 && a->mlocked_kb <= b->mlocked_kb,
	    "node_%u_mlocked_back_to_baseline", node);
}

static void figures(int done)
{
	int worst, median, aworst, amedian;

	printf("# soak: %d nodes, victim node %d, %d of %d rounds done\n",
	       nodes_want, VICTIM, done, rounds);
	printf("# soak: ms from the kill request (and from the launcher's answer) to each error, every survivor and round\n");
	printf("# soak: %-16s %-18s %5s %13s %13s\n", "call", "error", "count",
	       "worst", "median");
	for (int k = 0; k < NR_KINDS; k++) {
		spread(ms_all[k], nr_ms[k], &worst, &median);
		spread(ms_ack[k], nr_ms[k], &aworst, &amedian);
		printf("# soak: %-16s %-18s %5d %6d (%4d) %6d (%4d)\n",
		       kind_name[k], kind_want[k], nr_ms[k], worst, aworst,
		       median, amedian);
	}
	printf("# soak: new_connect: the duration of a connect made after the other errors\n");
	spread(kill_ms, done, &worst, &median);
	printf("# soak: kill request to the launcher's answer: worst %d ms, median %d ms\n",
	       worst, median);
	spread(restart_ms, done, &worst, &median);
	printf("# soak: restart request to the victim listed again: worst %d ms, median %d ms\n",
	       worst, median);
}

static int drive(void)
{
	struct memfig before, after;
	struct ctl c;
	int round, n, done = 0, slep, err;
	scif_epd_t epd;
	pthread_t sth;

	n = cluster_wait(nodes_want);
	printf("TAP version 13\n");
	tap(n == nodes_want, "cluster_formed # %d of %d nodes", n, nodes_want);
	if (n != nodes_want)
		return 1;
	slep = scif_open();
	if (slep < 0 || scif_bind(slep, SPORT) < 0 || scif_listen(slep, 16) < 0)
		return 1;
	pthread_create(&sth, NULL, sserv, (void *)(intptr_t)slep);
	for (int i = 0; i < nr_nodes; i++) {
		if (peers[i] == VICTIM)
			continue;
		err = cluster_connect(peers[i], CPORT, &cep[nr_c]);
		tap(!err, "control_connection_to_node_%u", peers[i]);
		if (err)
			return 1;
		cnode[nr_c++] = peers[i];
	}
	/* Baselines, everyone at once, before any traffic. */
	if (ctl_all("BASE", 0))
		return 1;
	mem_figures(&before);
	for (int i = 0; i < nr_c; i++)
		if (recv_ctl(cep[i], &c, "BASE"))
			return 1;
	if (ctl_all("PEERS", 0))
		return 1;
	err = speers_start();
	tap(!err, "survivor_traffic_started_here%s%s", err ? " # " : "",
	    err ? strerror(err) : "");
	for (int i = 0; i < nr_c; i++) {
		err = recv_ctl(cep[i], &c, "PEERS") ? EPIPE : c.peer_err;
		tap(!err, "survivor_traffic_started_on_node_%u", cnode[i]);
	}
	for (round = 1; round <= rounds; round++) {
		if (run_round(round))
			break;
		done = round;
	}
	tap(done == rounds, "all_%d_rounds_ran # %d", rounds, done);
	/* The victim's last life quits; a fresh connection shows it works. */
	err = cluster_connect(VICTIM, VPORT, &epd);
	if (!err) {
		char out[BLOCK] = "soak", in[BLOCK];

		err = send_word(epd, "ECHO") ||
		      scif_send(epd, out, BLOCK, SCIF_SEND_BLOCK) != BLOCK ||
		      scif_recv(epd, in, BLOCK, SCIF_RECV_BLOCK) != BLOCK ||
		      memcmp(in, out, BLOCK) ? EBADMSG : 0;
		scif_close(epd);
	}
	tap(!err, "new_connection_to_the_victim_works");
	err = cluster_connect(VICTIM, VPORT, &epd);
	if (!err) {
		send_word(epd, "QUIT");
		scif_close(epd);
	}
	/* Survivor traffic stops; then everyone measures. */
	ctl_all("STOP", 0);
	speers_stop();
	tap(!speer_err(), "survivor_traffic_never_failed_here");
	for (int i = 0; i < nr_c; i++) {
		err = recv_ctl(cep[i], &c, "STOPPED") ? EPIPE : c.peer_err;
		tap(!err, "survivor_traffic_never_failed_on_node_%u%s%s",
		    cnode[i], err ? " # " : "", err ? strerror(err) : "");
	}
	ctl_all("MEASURE", 0);
	sserv_drain();
	mem_figures(&after);
	figures(done);
	mem_rows(self, &before, &after);
	for (int i = 0; i < nr_c; i++) {
		if (recv_ctl(cep[i], &c, "MEASURE")) {
			tap(false, "node_%u_memory_figures", cnode[i]);
			continue;
		}
		mem_rows(cnode[i], &c.before, &c.after);
		scif_close(cep[i]);
	}
	printf("1..%d\n", t);
	return 0;
}

int main(void)
{
	const char *node = getenv("SCIF_NODE");

	nodes_want = cmdline_int("scif.nodes=", 1);
	rounds = cmdline_int("scif.soak_rounds=", 50);
	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 50;
	if (!node || !getenv("SCIF_CONTROL") || nodes_want < 2) {
		printf("1..0 # SKIP not in a cluster\n");
		return 4;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (atoi(node) == VICTIM)
		return victim();
	if (atoi(node) != 0) {
		if (cluster_wait(nodes_want) != nodes_want)
			return 1;
		return survivor();
	}
	return drive();
}
