// SPDX-License-Identifier: GPL-2.0
/*
 * scif_mpi_test: an ordinary MPI program, run by scif_net_mesh.sh as a
 * job of one rank on each node of a 4-node cluster, over Open MPI's
 * libfabric path (pml cm, mtl ofi, "verbs;ofi_rxm") on scif_rdma's
 * device on sn (Documentation/scif/rdma.rst, "MPI across nodes").
 *
 *   - a ping-pong between ranks 0 and 1: 200 round trips of 4 KiB and
 *     20 of 1 MiB, every word checked on both sides; the time of each
 *     printed;
 *   - an all-to-all of 4 KiB blocks among all ranks, every word checked;
 *   - each rank says on which host it ran and how many uverbs files it
 *     holds open: with SCIF_MPI_REQUIRE_UVERBS=1 a rank that holds none
 *     (its transport is not verbs) counts an error.
 *
 * With SCIF_MPI_BENCH=1 (scif_net_mesh.sh mpi-bench, for make bench)
 * the ping-pong also runs 8 bytes (1000 round trips, before 4 KiB) and
 * 64 KiB (50, before 1 MiB), and each size's line is printed as a
 * figure too: "mpi-figures BYTES US-A-ROUND-TRIP MB/S" (both
 * directions' bytes over the time).  The words are checked all the same.
 *
 * Rank 0 prints "PASS: ..." and the job exits 0 when no rank found an
 * error, else "FAIL: ..." and 1.
 */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK_WORDS	1024

/* The /dev/infiniband/uverbs* files this process holds open. */
static int uverbs_files(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], target[256];
	ssize_t len;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		n += !strncmp(target, "/dev/infiniband/uverbs", 22);
	}
	closedir(d);
	return n;
}

static int word_of(int iter, int i)
{
	return iter * 7919 + i;
}

/* SCIF_MPI_BENCH=1: figures too, of more sizes. */
static int bench;

/* Ranks 0 and 1: @iters round trips of @bytes; 1 bounces the complement. */
static int pingpong(int rank, int bytes, int iters)
{
	int n = bytes / sizeof(int), it, i, err = 0;
	int *buf = malloc(bytes);
	double t0;

	if (!buf)
		return 1;
	t0 = MPI_Wtime();
	for (it = 0; it < iters; it++) {
		if (rank == 0) {
			for (i = 0; i < n; i++)
				buf[i] = word_of(it, i);
			MPI_Send(buf, n, MPI_INT, 1, it, MPI_COMM_WORLD);
			MPI_Recv(buf, n, MPI_INT, 1, it, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			for (i = 0; i < n; i++)
				err += buf[i] != ~word_of(it, i);
		} else {
			MPI_Recv(buf, n, MPI_INT, 0, it, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			for (i = 0; i < n; i++) {
				err += buf[i] != word_of(it, i);
				buf[i] = ~buf[i];
			}
			MPI_Send(buf, n, MPI_INT, 0, it, MPI_COMM_WORLD);
		}
	}
	t0 = MPI_Wtime() - t0;
	if (rank == 0) {
		printf("pingpong %d bytes x %d: %.1f us a round trip, %.1f MB/s, %d bad words\n",
		       bytes, iters, t0 / iters * 1e6,
		       2.0 * bytes * iters / t0 / 1e6, err);
		if (bench)
			printf("mpi-figures %d %.1f %.1f\n", bytes,
			       t0 / iters * 1e6, 2.0 * bytes * iters / t0 / 1e6);
	}
	free(buf);
	return err;
}

/* Word j of the block rank @from sends rank @to. */
static int a2a_word(int from, int to, int j)
{
	return from * 1000000 + to * 1000 + j;
}

static int alltoall(int rank, int size)
{
	int *sb = malloc(size * BLOCK_WORDS * sizeof(int));
	int *rb = malloc(size * BLOCK_WORDS * sizeof(int));
	int d, j, err = 0;

	if (!sb || !rb) {
		free(sb);
		free(rb);
		return 1;
	}
	for (d = 0; d < size; d++)
		for (j = 0; j < BLOCK_WORDS; j++)
			sb[d * BLOCK_WORDS + j] = a2a_word(rank, d, j);
	MPI_Alltoall(sb, BLOCK_WORDS, MPI_INT, rb, BLOCK_WORDS, MPI_INT,
		     MPI_COMM_WORLD);
	for (d = 0; d < size; d++)
		for (j = 0; j < BLOCK_WORDS; j++)
			err += rb[d * BLOCK_WORDS + j] != a2a_word(d, rank, j);
	free(sb);
	free(rb);
	return err;
}

int main(int argc, char **argv)
{
	char host[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];
	const char *req = getenv("SCIF_MPI_REQUIRE_UVERBS");
	const char *b = getenv("SCIF_MPI_BENCH");
	int rank, size, len, err = 0, total = 0, uv;

	bench = b && atoi(b);

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Get_processor_name(host, &len);
	if (rank == 0) {
		MPI_Get_library_version(lib, &len);
		printf("library: %.*s\n", (int)strcspn(lib, "\n"), lib);
	}
	if (size >= 2 && rank < 2) {
		if (bench)
			err += pingpong(rank, 8, 1000);
		err += pingpong(rank, 4096, 200);
		if (bench)
			err += pingpong(rank, 65536, 50);
		err += pingpong(rank, 1 << 20, 20);
	}
	err += alltoall(rank, size);
	/* After the traffic, so that the connections are made. */
	uv = uverbs_files();
	printf("rank %d of %d on %s: %d uverbs files open\n", rank, size, host,
	       uv);
	if (req && atoi(req) && uv <= 0) {
		printf("rank %d: no uverbs file open: the transport is not verbs\n",
		       rank);
		err++;
	}
	fflush(stdout);
	MPI_Allreduce(&err, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: ping-pong and all-to-all over %d ranks, %d errors\n",
		       total ? "FAIL" : "PASS", size, total);
	MPI_Finalize();
	return total ? 1 : 0;
}
