// SPDX-License-Identifier: GPL-2.0
/*
 * test-ivshmem-server - scripted clients checking qemu/ivshmem-server
 *
 * Usage: test-ivshmem-server PATH/TO/ivshmem-server
 *
 * Starts the server in the foreground in a temporary directory and talks
 * to it like QEMU's ivshmem-doorbell would, checking every message and
 * every fd it passes.  Prints TAP, then "ivshmem-server: P passed, F failed";
 * exits 0 iff nothing failed.  Every wait is bounded (5 s per message).
 *
 * IVSHMEM_SERVER_WRAPPER="valgrind --error-exitcode=1 -q" runs the servers
 * under that command; a wrapper error turns into a non-zero exit status on
 * SIGTERM, which the test reports.  TMPDIR picks the scratch location.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_NODES	16
#define MAX_VECTORS	64
#define TIMEOUT_MS	5000	/* for anything that must arrive */
#define QUIET_MS	250	/* for checking that nothing else arrives */
#define START_MS	30000	/* server start and exit, generous for valgrind */
#define BASE_MAX	1024	/* scratch directory path */

enum { R_ERR = -2, R_TIMEOUT = -1, R_EOF = 0, R_MSG = 1 };

struct srv {
	char dir[BASE_MAX + 64];
	char log[BASE_MAX + 64];
	pid_t pid;
	unsigned int nodes;
	unsigned int vectors;
	off_t size;
	struct stat shm_st;
};

struct client {
	int sock;
	unsigned int id;
	int shm;
	int own[MAX_VECTORS];
	int peer[MAX_NODES][MAX_VECTORS];
};

static const char *server_bin;
static char base[BASE_MAX];
static int ntests, nfailed;
static char diag[16384];
static size_t diaglen;

/* ---- TAP ---- */

static void note(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (diaglen >= sizeof(diag) - 1)
		return;
	n = snprintf(diag + diaglen, sizeof(diag) - diaglen, "#   ");
	if (n > 0)
		diaglen += n;
	if (diaglen >= sizeof(diag) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(diag + diaglen, sizeof(diag) - diaglen, fmt, ap);
	va_end(ap);
	if (n > 0)
		diaglen += n;
	if (diaglen < sizeof(diag) - 1)
		diag[diaglen++] = '\n';
	diag[diaglen < sizeof(diag) ? diaglen : sizeof(diag) - 1] = '\0';
}

static bool report(bool good, const char *fmt, ...)
{
	va_list ap;

	ntests++;
	nfailed += !good;
	printf("%sok %d - ", good ? "" : "not ", ntests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!good && diaglen)
		fputs(diag, stdout);
	diaglen = 0;
	diag[0] = '\0';
	fflush(stdout);
	return good;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* ---- messages and fds ---- */

static void close_fds(int *fd, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (fd[i] >= 0)
			close(fd[i]);
		fd[i] = -1;
	}
}

static int recv_msg(int sock, int timeout_ms, int64_t *val, int *fd)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	uint64_t le = 0;
	struct iovec iov = { .iov_base = &le, .iov_len = sizeof(le) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cmsg;
	int fds[4], nfds = 0, i, r;
	ssize_t n;

	*val = INT64_MIN;
	*fd = -1;
	r = poll(&pfd, 1, timeout_ms);
	if (r == 0)
		return R_TIMEOUT;
	n = r < 0 ? -1 : recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0) {
		note("recvmsg: %s", strerror(errno));
		return R_ERR;
	}
	for (cmsg = CMSG_FIRSTHDR(&mh); cmsg; cmsg = CMSG_NXTHDR(&mh, cmsg)) {
		if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		for (i = 0; i < (int)((cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int)); i++)
			if (nfds < 4)
				memcpy(&fds[nfds++], CMSG_DATA(cmsg) + i * sizeof(int),
				       sizeof(int));
	}
	if (n == sizeof(le) && nfds <= 1 && !(mh.msg_flags & MSG_CTRUNC)) {
		*val = (int64_t)le64toh(le);
		*fd = nfds ? fds[0] : -1;
		return R_MSG;
	}
	close_fds(fds, nfds);
	if (n == 0)
		return R_EOF;
	note("malformed message: %zd bytes, %d fds%s", n, nfds,
	     mh.msg_flags & MSG_CTRUNC ? ", control data truncated" : "");
	return R_ERR;
}

static const char *result_str(int r)
{
	return r == R_EOF ? "EOF" : r == R_TIMEOUT ? "timed out" : "error";
}

static bool is_eventfd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return !strcmp(link, "anon_inode:[eventfd]");
}

/* Receive one message that must be @want, with an fd iff @want_fd */
static bool expect(int sock, int64_t want, bool want_fd, int *fdp,
		   const char *what)
{
	int64_t val;
	int fd, r;

	r = recv_msg(sock, TIMEOUT_MS, &val, &fd);
	if (r != R_MSG) {
		note("%s: %s", what, result_str(r));
		return false;
	}
	if (val != want || (fd >= 0) != want_fd) {
		note("%s: got %" PRId64 " %s an fd, want %" PRId64 " %s an fd",
		     what, val, fd >= 0 ? "with" : "without", want,
		     want_fd ? "with" : "without");
		if (fd >= 0)
			close(fd);
		return false;
	}
	if (fdp)
		*fdp = fd;
	else if (fd >= 0)
		close(fd);
	return true;
}

/* Receive @id @n times, each with an eventfd, into @dst (or close them) */
static bool expect_ids(int sock, unsigned int id, unsigned int n, int *dst,
		       const char *what)
{
	unsigned int v;
	int fd;

	for (v = 0; v < n; v++) {
		if (!expect(sock, id, true, &fd, what))
			return false;
		if (!is_eventfd(fd)) {
			note("%s: vector %u: fd is not an eventfd", what, v);
			close(fd);
			return false;
		}
		if (!dst) {
			close(fd);
			continue;
		}
		if (dst[v] >= 0)
			close(dst[v]);
		dst[v] = fd;
	}
	return true;
}

static bool expect_quiet(int sock, const char *what)
{
	int64_t val;
	int fd, r;

	r = recv_msg(sock, QUIET_MS, &val, &fd);
	if (r == R_TIMEOUT)
		return true;
	if (r == R_MSG) {
		note("%s: unexpected message %" PRId64 "%s", what, val,
		     fd >= 0 ? " with an fd" : "");
		if (fd >= 0)
			close(fd);
	} else {
		note("%s: unexpected %s", what, result_str(r));
	}
	return false;
}

static bool expect_eof(int sock, const char *what)
{
	int64_t val;
	int fd, r;

	r = recv_msg(sock, TIMEOUT_MS, &val, &fd);
	if (r == R_EOF)
		return true;
	if (r == R_MSG) {
		note("%s: got message %" PRId64 " instead of EOF", what, val);
		if (fd >= 0)
			close(fd);
	} else {
		note("%s: %s instead of EOF", what, result_str(r));
	}
	return false;
}

/* ---- eventfds ---- */

static bool readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, timeout_ms) == 1;
}

static bool ring(int fd)
{
	uint64_t one = 1;

	return write(fd, &one, sizeof(one)) == sizeof(one);
}

static bool take(int fd, uint64_t *val)
{
	return readable(fd, TIMEOUT_MS) && read(fd, val, sizeof(*val)) == sizeof(*val);
}

/* Ring @to on every vector through @from's copies; only that vector rings */
static bool doorbells(struct client *from, struct client *to, unsigned int n)
{
	unsigned int v, w;
	uint64_t val;

	for (v = 0; v < n; v++) {
		if (!ring(from->peer[to->id][v])) {
			note("peer %u -> %u vector %u: write: %s", from->id,
			     to->id, v, strerror(errno));
			return false;
		}
		if (!readable(to->own[v], TIMEOUT_MS)) {
			note("peer %u -> %u vector %u: did not ring", from->id,
			     to->id, v);
			return false;
		}
		for (w = 0; w < n; w++) {
			if (w != v && readable(to->own[w], 0)) {
				note("peer %u -> %u vector %u also rang vector %u",
				     from->id, to->id, v, w);
				return false;
			}
		}
		if (!take(to->own[v], &val) || val != 1) {
			note("peer %u -> %u vector %u: read %s, want 1", from->id,
			     to->id, v, "failed or not 1");
			return false;
		}
	}
	return true;
}

/* ---- clients ---- */

static void client_init(struct client *c)
{
	c->sock = c->shm = -1;
	c->id = 0;
	memset(c->own, -1, sizeof(c->own));
	memset(c->peer, -1, sizeof(c->peer));
}

static void client_close(struct client *c)
{
	unsigned int i;

	if (c->sock >= 0)
		close(c->sock);
	if (c->shm >= 0)
		close(c->shm);
	close_fds(c->own, MAX_VECTORS);
	for (i = 0; i < MAX_NODES; i++)
		close_fds(c->peer[i], MAX_VECTORS);
	client_init(c);
}

static bool client_connect(struct srv *s, struct client *c, unsigned int node)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	client_init(c);
	c->id = node;
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/node%u.sock",
			     s->dir, node) >= sizeof(sa.sun_path)) {
		note("socket path too long");
		return false;
	}
	c->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->sock < 0 || connect(c->sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		note("connect %s: %s", sa.sun_path, strerror(errno));
		return false;
	}
	return true;
}

/*
 * The whole greeting: version, id, shm, then the peers in @others (any
 * order, each one's ids contiguous), then the client's own eventfds.
 */
static bool expect_greeting(struct srv *s, struct client *c, uint32_t others)
{
	unsigned int id;
	struct stat st;
	int64_t val;
	int fd, r;

	if (!expect(c->sock, 0, false, NULL, "version") ||
	    !expect(c->sock, c->id, false, NULL, "own id") ||
	    !expect(c->sock, -1, true, &c->shm, "shared memory"))
		return false;
	if (fstat(c->shm, &st) < 0 || st.st_size != s->size ||
	    st.st_ino != s->shm_st.st_ino || st.st_dev != s->shm_st.st_dev) {
		note("shm fd: size %lld (want %lld), %s doorbell.shm",
		     (long long)st.st_size, (long long)s->size,
		     st.st_ino == s->shm_st.st_ino ? "is" : "is not");
		return false;
	}
	while (others) {
		r = recv_msg(c->sock, TIMEOUT_MS, &val, &fd);
		if (r != R_MSG) {
			note("peer list: %s", result_str(r));
			return false;
		}
		id = (unsigned int)val;
		if (val < 0 || val >= MAX_NODES || !(others & (1U << id)) || fd < 0) {
			note("peer list: got %" PRId64 "%s, want one of 0x%x with an fd",
			     val, fd >= 0 ? " with an fd" : "", others);
			if (fd >= 0)
				close(fd);
			return false;
		}
		c->peer[id][0] = fd;
		if (!is_eventfd(fd) ||
		    !expect_ids(c->sock, id, s->vectors - 1, c->peer[id] + 1, "peer list"))
			return false;
		others &= ~(1U << id);
	}
	return expect_ids(c->sock, c->id, s->vectors, c->own, "own eventfds") &&
	       expect_quiet(c->sock, "after the greeting");
}

/*
 * @c must end up with peer @id's eventfds: it either has them already or
 * is sent them exactly once (peers never leave, nor are announced twice).
 */
static bool follow_peer(struct srv *s, struct client *c, unsigned int id)
{
	unsigned int got = c->peer[id][0] >= 0 ? s->vectors : 0;
	int64_t val;
	int fd, r;

	for (;;) {
		r = recv_msg(c->sock, got == s->vectors ? QUIET_MS : TIMEOUT_MS,
			     &val, &fd);
		if (r == R_TIMEOUT && got == s->vectors)
			return true;
		if (r != R_MSG) {
			note("peer %u about %u: %s", c->id, id, result_str(r));
			return false;
		}
		if (val != id || fd < 0 || got == s->vectors || !is_eventfd(fd)) {
			note("peer %u about %u: unexpected %" PRId64 "%s after %u fds",
			     c->id, id, val, fd >= 0 ? " with an fd" : "", got);
			if (fd >= 0)
				close(fd);
			return false;
		}
		if (c->peer[id][got] >= 0)
			close(c->peer[id][got]);
		c->peer[id][got++] = fd;
	}
}

/* ---- server processes ---- */

static pid_t spawn(char **argv, const char *log)
{
	pid_t pid;
	int fd;

	fflush(stdout);
	pid = fork();
	if (pid != 0)
		return pid;
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	execvp(argv[0], argv);
	_exit(127);
}

/* Exit status of @pid, -1 if killed by a signal, -2 if it had to be killed */
static int wait_exit(pid_t pid, int timeout_ms)
{
	int status, waited;

	for (waited = 0; waited <= timeout_ms; waited += 10) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		sleep_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -2;
}

static int run_cli(const char *log, ...)
{
	char *argv[16];
	va_list ap;
	int argc = 0;
	pid_t pid;

	argv[argc++] = (char *)server_bin;
	va_start(ap, log);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	pid = spawn(argv, log);
	return pid < 0 ? -3 : wait_exit(pid, TIMEOUT_MS);
}

static bool file_exists(const char *dir, const char *name, mode_t type)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !stat(path, &st) && (st.st_mode & S_IFMT) == type;
}

static pid_t read_pidfile(const char *dir)
{
	char path[PATH_MAX];
	long pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/server.pid", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid;
}

static bool sockets_exist(struct srv *s, bool want)
{
	char name[32];
	unsigned int i;

	for (i = 0; i < s->nodes; i++) {
		snprintf(name, sizeof(name), "node%u.sock", i);
		if (file_exists(s->dir, name, S_IFSOCK) != want)
			return false;
	}
	return true;
}

static void note_log(struct srv *s)
{
	char line[512];
	FILE *f = fopen(s->log, "re");

	if (!f)
		return;
	note("server log %s:", s->log);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		note("  %s", line);
	}
	fclose(f);
}

/* Start a foreground server and wait until its pid file names it */
static bool server_start(struct srv *s, const char *name, unsigned int nodes,
			 unsigned int vectors, const char *size, off_t bytes)
{
	char nbuf[16], vbuf[16], path[PATH_MAX], *wrap = NULL, *argv[48];
	const char *env = getenv("IVSHMEM_SERVER_WRAPPER");
	int argc = 0, waited, status;

	s->pid = 0;
	snprintf(s->dir, sizeof(s->dir), "%s/%.16s", base, name);
	snprintf(s->log, sizeof(s->log), "%s/%.16s.log", base, name);
	s->nodes = nodes;
	s->vectors = vectors;
	s->size = bytes;
	if (mkdir(s->dir, 0700) < 0 && errno != EEXIST) {
		note("mkdir %s: %s", s->dir, strerror(errno));
		return false;
	}
	if (env && *env) {
		wrap = strdup(env);
		for (argv[argc] = strtok(wrap, " \t"); argv[argc] && argc < 32;
		     argv[argc] = strtok(NULL, " \t"))
			argc++;
	}
	snprintf(nbuf, sizeof(nbuf), "%u", nodes);
	snprintf(vbuf, sizeof(vbuf), "%u", vectors);
	argv[argc++] = (char *)server_bin;
	argv[argc++] = "-F";
	argv[argc++] = "-d";
	argv[argc++] = s->dir;
	argv[argc++] = "-n";
	argv[argc++] = nbuf;
	argv[argc++] = "-v";
	argv[argc++] = vbuf;
	argv[argc++] = "-s";
	argv[argc++] = (char *)size;
	argv[argc] = NULL;
	s->pid = spawn(argv, s->log);
	free(wrap);
	if (s->pid < 0) {
		note("fork: %s", strerror(errno));
		return false;
	}
	for (waited = 0; waited < START_MS; waited += 20) {
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			note("server exited early (status 0x%x)", status);
			s->pid = 0;
			note_log(s);
			return false;
		}
		if (read_pidfile(s->dir) == s->pid && sockets_exist(s, true))
			break;
		sleep_ms(20);
	}
	snprintf(path, sizeof(path), "%s/doorbell.shm", s->dir);
	if (waited >= START_MS || stat(path, &s->shm_st) < 0) {
		note("server not ready after %d ms", START_MS);
		note_log(s);
		return false;
	}
	return true;
}

/* SIGTERM the server; true if it exits 0 */
static bool server_stop(struct srv *s)
{
	int ret;

	if (s->pid <= 0)
		return false;
	kill(s->pid, SIGTERM);
	ret = wait_exit(s->pid, START_MS);
	s->pid = 0;
	if (ret) {
		note("server exit status %d", ret);
		note_log(s);
	}
	return ret == 0;
}

static void server_kill(struct srv *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
		s->pid = 0;
	}
}

static long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long utime, stime;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* after "pid (comm)": state and 10 more fields, then utime, stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			 &utime, &stime) != 2)
		return -1;
	return utime + stime;
}

/* ---- the tests ---- */

static void test_cli(void)
{
	static const struct {
		const char *name;
		const char *opt, *val;
	} bad[] = {
		{ "size not a power of two", "-s", "12288" },
		{ "size below 4096", "-s", "2048" },
		{ "size with junk", "-s", "4096x" },
		{ "negative size", "-s", "-4096" },
		{ "NODES 0", "-n", "0" },
		{ "NODES 17", "-n", "17" },
		{ "VECTORS 0", "-v", "0" },
		{ "VECTORS 65", "-v", "65" },
	};
	char dir[BASE_MAX + 64], log[BASE_MAX + 64];
	const char *n, *v, *sz;
	unsigned int i;
	int ret;

	snprintf(dir, sizeof(dir), "%s/cli", base);
	snprintf(log, sizeof(log), "%s/cli.log", base);
	mkdir(dir, 0700);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		n = !strcmp(bad[i].opt, "-n") ? bad[i].val : "2";
		v = !strcmp(bad[i].opt, "-v") ? bad[i].val : "2";
		sz = !strcmp(bad[i].opt, "-s") ? bad[i].val : "4096";
		ret = run_cli(log, "-F", "-d", dir, "-n", n, "-v", v, "-s", sz,
			      NULL);
		if (ret <= 0)
			note("exit status %d", ret);
		report(ret > 0, "bad CLI: %s (%s %s) exits non-zero", bad[i].name,
		       bad[i].opt, bad[i].val);
	}
	ret = run_cli(log, "-F", "-n", "2", "-v", "2", "-s", "4096", NULL);
	report(ret > 0, "bad CLI: missing -d exits non-zero");
	ret = run_cli(log, "-F", "-d", "/nonexistent/ivshmem", "-n", "2", "-v",
		      "2", "-s", "4096", NULL);
	report(ret > 0, "bad CLI: missing directory exits non-zero");
	report(!file_exists(dir, "server.pid", S_IFREG) &&
	       !file_exists(dir, "node0.sock", S_IFSOCK),
	       "bad CLI leaves no pid file or sockets behind");
}

/* Without -F: the parent exits 0 once the daemon's pid is in the pid file */
static void test_daemon(void)
{
	struct srv s = { .nodes = 2, .vectors = 1, .size = 4096 };
	char path[PATH_MAX];
	struct client c;
	pid_t pid = 0;
	int ret, waited;

	snprintf(s.dir, sizeof(s.dir), "%s/daemon", base);
	snprintf(s.log, sizeof(s.log), "%s/daemon.log", base);
	mkdir(s.dir, 0700);
	ret = run_cli(s.log, "-d", s.dir, "-n", "2", "-v", "1", "-s", "4096", NULL);
	if (ret == 0)
		pid = read_pidfile(s.dir);
	if (ret)
		note("exit status %d", ret);
	if (!report(ret == 0 && pid > 0 && !kill(pid, 0) && sockets_exist(&s, true),
		    "daemon: parent exits 0, pid file names the live daemon, sockets listen")) {
		if (pid > 0)
			kill(pid, SIGTERM);
		return;
	}

	snprintf(path, sizeof(path), "%s/doorbell.shm", s.dir);
	stat(path, &s.shm_st);
	ret = run_cli(s.log, "-F", "-d", s.dir, "-n", "2", "-v", "1", "-s",
		      "4096", NULL);
	report(ret > 0 && read_pidfile(s.dir) == pid && sockets_exist(&s, true),
	       "a second server on the same directory exits non-zero, first one untouched");

	report(client_connect(&s, &c, 1) && expect_greeting(&s, &c, 0),
	       "daemon: greets a client on node1.sock");
	client_close(&c);

	kill(pid, SIGTERM);
	for (waited = 0; waited < START_MS; waited += 20) {
		if (!file_exists(s.dir, "server.pid", S_IFREG) &&
		    sockets_exist(&s, false))
			break;
		sleep_ms(20);
	}
	report(waited < START_MS, "daemon: SIGTERM removes its pid file and sockets");
}

/* SIGKILL leaves the pid file and sockets behind; a restart replaces them */
static void test_stale(void)
{
	struct srv s = { .pid = 0 };
	struct client c;
	bool good;

	client_init(&c);
	good = server_start(&s, "stale", 2, 2, "4096", 4096);
	server_kill(&s);
	if (good) {
		good = sockets_exist(&s, true) &&
		       file_exists(s.dir, "server.pid", S_IFREG);
		if (!good)
			note("SIGKILL left no stale sockets or pid file to test with");
	}
	good = good && server_start(&s, "stale", 2, 2, "4096", 4096) &&
	       client_connect(&s, &c, 1) && expect_greeting(&s, &c, 0);
	client_close(&c);
	report(good, "restart after SIGKILL: stale pid file and sockets are replaced");
	report(server_stop(&s), "restarted server exits 0 on SIGTERM");
	server_kill(&s);
}

static void test_main(void)
{
	struct client a, b, c, d, e;
	struct srv s;
	bool good;
	int v;

	client_init(&a);
	client_init(&b);
	client_init(&c);
	client_init(&d);
	client_init(&e);
	good = server_start(&s, "main", 4, 4, "64K", 65536);
	if (!report(good, "server starts (-n 4 -v 4 -s 64K), pid file and sockets appear")) {
		server_kill(&s);
		return;
	}
	report(s.shm_st.st_size == 65536 && S_ISREG(s.shm_st.st_mode),
	       "doorbell.shm is a 65536-byte file");

	good = client_connect(&s, &a, 0) && expect_greeting(&s, &a, 0);
	report(good, "first client (node0): version 0, id 0, shm fd, its own 4 eventfds, in order");

	good = client_connect(&s, &b, 2) && expect_greeting(&s, &b, 1U << 0);
	report(good, "second client (node2): version, id 2, shm, peer 0's 4 ids+fds, then its own 4");

	good = expect_ids(a.sock, 2, 4, a.peer[2], "join of 2") &&
	       expect_quiet(a.sock, "after the join");
	report(good, "first client is told of peer 2's join: id 2 four times with fds");

	report(doorbells(&b, &a, 4), "doorbell: peer 2 rings peer 0 on each vector, and only that vector");
	report(doorbells(&a, &b, 4), "doorbell: peer 0 rings peer 2 on each vector, and only that vector");

	/* peer 2 goes down: no leave message, its eventfds stay usable */
	client_close(&b);
	good = expect_quiet(a.sock, "after peer 2 closed");
	for (v = 0; good && v < 4; v++) {
		if (!ring(a.peer[2][v])) {
			note("peer 0 -> down peer 2 vector %d: write: %s", v,
			     strerror(errno));
			good = false;
		}
	}
	report(good, "second client closes: the first gets no message (no leave) and can still ring peer 2");

	/* a newcomer while peer 2 is down learns of peer 2 all the same */
	good = client_connect(&s, &c, 3) &&
	       expect_greeting(&s, &c, 1U << 0 | 1U << 2);
	for (v = 0; good && v < 4; v++) {
		if (!ring(c.peer[2][v])) {
			note("peer 3 -> down peer 2 vector %d: write: %s", v,
			     strerror(errno));
			good = false;
		}
	}
	report(good, "newcomer (node3) while peer 2 is down: greeting has peer 0's and peer 2's ids+fds, then its own");
	good = expect_ids(a.sock, 3, 4, a.peer[3], "join of 3") &&
	       expect_quiet(a.sock, "after the join of 3") &&
	       doorbells(&a, &c, 4) && doorbells(&c, &a, 4);
	report(good, "first client is told of peer 3's join; peers 0 and 3 ring each other");

	/* peer 2 comes back: its old eventfds, drained, and nobody is told */
	good = client_connect(&s, &b, 2) &&
	       expect_greeting(&s, &b, 1U << 0 | 1U << 3);
	report(good, "second client reconnects on node2: full greeting with peers 0 and 3, then its own 4");
	good = true;
	for (v = 0; v < 4; v++) {
		if (b.own[v] < 0 || readable(b.own[v], 0)) {
			note("vector %d: rung while peer 2 was down, still readable", v);
			good = false;
		}
	}
	report(good, "its own eventfds are drained: rings made while it was down are not delivered");
	good = expect_quiet(a.sock, "peer 0 on the return of 2") &&
	       expect_quiet(c.sock, "peer 3 on the return of 2");
	report(good, "the other clients get no announcement of peer 2's return");
	good = doorbells(&a, &b, 4) && doorbells(&c, &b, 4);
	report(good, "same eventfds: those peer 0 got at 2's first join, and peer 3 while 2 was down, ring the new client");
	good = doorbells(&b, &a, 4) && doorbells(&b, &c, 4);
	report(good, "the returned peer 2 rings peers 0 and 3");

	good = client_connect(&s, &e, 0) && expect_eof(e.sock, "refused client");
	client_close(&e);
	report(good, "another client on node0 (id 0 in use) is refused: EOF, no messages");

	good = expect_quiet(a.sock, "peer 0") && expect_quiet(b.sock, "peer 2") &&
	       expect_quiet(c.sock, "peer 3") &&
	       doorbells(&a, &b, 4) && doorbells(&b, &a, 4);
	report(good, "the refusal does not disturb peers 0, 2 and 3");

	/* vanish with 0, 1 and 3 (shm fd) messages read */
	good = client_connect(&s, &e, 1);
	client_close(&e);
	good = good && client_connect(&s, &e, 1) &&
	       expect(e.sock, 0, false, NULL, "version");
	client_close(&e);
	good = good && client_connect(&s, &e, 1) &&
	       expect(e.sock, 0, false, NULL, "version") &&
	       expect(e.sock, 1, false, NULL, "id") &&
	       expect(e.sock, -1, true, NULL, "shm");
	client_close(&e);
	good = good && client_connect(&s, &d, 1) &&
	       expect_greeting(&s, &d, 1U << 0 | 1U << 2 | 1U << 3) &&
	       follow_peer(&s, &a, 1) && follow_peer(&s, &b, 1) &&
	       follow_peer(&s, &c, 1) &&
	       doorbells(&a, &d, 4) && doorbells(&b, &d, 4) &&
	       doorbells(&c, &d, 4) && doorbells(&d, &a, 4) &&
	       doorbells(&d, &b, 4) && doorbells(&d, &c, 4);
	report(good, "clients vanishing mid-greeting do not kill the server; node1 then works, each other peer is sent its eventfds once");

	good = true;
	{
		static const char *const want[] = {
			"peer 0 joined on node0.sock", "peer 2 joined on node2.sock",
			"peer 2 left: disconnected", "peer 3 joined on node3.sock",
			"peer 2 joined on node2.sock again",
			"refused a client on node0.sock",
			"peer 1 joined on node1.sock",
		};
		char line[512];
		unsigned int found = 0, i, lines = 0;
		FILE *f = fopen(s.log, "re");
		int y, mo, dd, h, mi, se, ms;

		while (f && fgets(line, sizeof(line), f)) {
			if (!strstr(line, "ivshmem-server["))
				continue;
			lines++;
			if (sscanf(line, "%4d-%2d-%2d %2d:%2d:%2d.%3d ", &y, &mo, &dd,
				   &h, &mi, &se, &ms) != 7) {
				note("no timestamp: %s", line);
				good = false;
			}
			for (i = 0; i < ARRAY_SIZE(want); i++)
				if (strstr(line, want[i]))
					found |= 1U << i;
		}
		if (f)
			fclose(f);
		for (i = 0; i < ARRAY_SIZE(want); i++) {
			if (!(found & (1U << i))) {
				note("no log line with \"%s\"", want[i]);
				good = false;
			}
		}
		if (!good)
			note_log(&s);
		report(good && lines, "stderr has one timestamped line per join, leave and refusal");
	}

	good = server_stop(&s);
	if (good && (!sockets_exist(&s, false) ||
		     file_exists(s.dir, "server.pid", S_IFREG) ||
		     !file_exists(s.dir, "doorbell.shm", S_IFREG))) {
		note("sockets, pid file or doorbell.shm in the wrong state");
		good = false;
	}
	report(good, "SIGTERM: exit 0, sockets and pid file removed, doorbell.shm kept");
	report(expect_eof(a.sock, "peer 0") && expect_eof(d.sock, "peer 1") &&
	       expect_eof(b.sock, "peer 2") && expect_eof(c.sock, "peer 3"),
	       "clients see EOF when the server exits");
	client_close(&a);
	client_close(&b);
	client_close(&c);
	client_close(&d);
	server_kill(&s);
}

/* 16 nodes x 64 vectors: greetings bigger than a socket buffer */
static void test_big(void)
{
	struct client r, late, stalled[MAX_NODES];
	uint32_t left;
	long t0, t1;
	struct srv s;
	int64_t val;
	int fd, avail = 0;
	unsigned int i;
	bool good;

	client_init(&r);
	client_init(&late);
	for (i = 0; i < MAX_NODES; i++)
		client_init(&stalled[i]);
	good = server_start(&s, "big", 16, 64, "4096", 4096);
	if (!report(good, "server starts (-n 16 -v 64 -s 4096)")) {
		server_kill(&s);
		return;
	}
	good = client_connect(&s, &r, 0) && expect_greeting(&s, &r, 0);
	for (i = 1; good && i < MAX_NODES; i++)
		good = client_connect(&s, &stalled[i], i);
	for (left = 0xfffe; good && left; left &= ~(1U << (unsigned int)val)) {
		if (recv_msg(r.sock, TIMEOUT_MS, &val, &fd) != R_MSG || fd < 0 ||
		    val < 1 || val >= MAX_NODES || !(left & (1U << val))) {
			note("join %" PRId64 " unexpected (left 0x%x)", val, left);
			good = false;
			break;
		}
		r.peer[val][0] = fd;
		good = is_eventfd(fd) &&
		       expect_ids(r.sock, val, 63, r.peer[val] + 1, "join");
	}
	report(good, "15 clients that never read do not stall the one that does (960 join messages)");

	t0 = cpu_ticks(s.pid);
	sleep_ms(500);
	t1 = cpu_ticks(s.pid);
	if (t0 < 0 || t1 - t0 > 10)
		note("server used %ld ticks in 500 ms", t1 - t0);
	report(t0 >= 0 && t1 - t0 <= 10, "server sleeps while its queues wait for stalled clients");

	ioctl(stalled[15].sock, FIONREAD, &avail);
	printf("# node15 had %d of %d greeting bytes when it vanished\n", avail,
	       8 * (3 + 16 * 64));
	for (i = 1; i < MAX_NODES; i++)
		client_close(&stalled[i]);
	good = good && expect_quiet(r.sock, "after the stalled clients closed");
	report(good, "stalled clients vanishing mid-greeting: the other is told nothing");

	for (i = 0; good && i < 64; i++)
		good = ring(r.peer[7][i]);
	good = good && client_connect(&s, &late, 7) &&
	       expect_greeting(&s, &late, 0xffffU & ~(1U << 7));
	for (i = 0; good && i < 64; i++) {
		if (readable(late.own[i], 0)) {
			note("vector %u: rung while peer 7 was down, still readable", i);
			good = false;
		}
	}
	good = good && expect_quiet(r.sock, "on the return of 7") &&
	       doorbells(&r, &late, 64) && doorbells(&late, &r, 64);
	report(good, "node7 again: greeting with all 15 others (14 down), its old eventfds drained, no announcement, 64 working doorbells");

	good = server_stop(&s) && sockets_exist(&s, false) &&
	       !file_exists(s.dir, "server.pid", S_IFREG);
	report(good, "16x64 server: SIGTERM exits 0 and cleans up");
	client_close(&r);
	client_close(&late);
	server_kill(&s);
}

/* The 16x64 case holds two clients' worth of eventfds: over 2048 fds */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= 4096)
		return;
	rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");

	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH/TO/ivshmem-server\n", argv[0]);
		return 2;
	}
	server_bin = argv[1];
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	snprintf(base, sizeof(base), "%s/ivshmem-test.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base)) {
		perror(base);
		return 2;
	}

	test_cli();
	test_daemon();
	test_stale();
	test_main();
	test_big();

	if (nfailed)
		printf("# logs kept in %s\n", base);
	else
		nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	printf("1..%d\n", ntests);
	printf("ivshmem-server: %d passed, %d failed\n", ntests - nfailed, nfailed);
	return nfailed ? 1 : 0;
}
