// SPDX-License-Identifier: LGPL-2.1
/*
 * A stand-in for Intel's libscif.so.0, built only by test-compat.sh: every
 * function of the API, exported under the version node SCIF_0.0 as
 * Intel's library tags them, and none of them working.  Each fails with
 * errno ENOSYS; scif_get_fd() returns STANDIN_FD, a value the real
 * library never returns for a small descriptor, so that a test can tell
 * which library served a call.
 */
#include <errno.h>
#include <scif.h>

#define STANDIN_FD	(-4242)

#define STANDIN(ret, name, ...)				\
	ret name(__VA_ARGS__)				\
	{						\
		errno = ENOSYS;				\
		return (ret)-1;				\
	}

STANDIN(scif_epd_t, scif_open, void)
STANDIN(int, scif_close, scif_epd_t e)
STANDIN(int, scif_bind, scif_epd_t e, uint16_t p)
STANDIN(int, scif_listen, scif_epd_t e, int b)
STANDIN(int, scif_connect, scif_epd_t e, struct scif_port_id *d)
STANDIN(int, scif_accept, scif_epd_t e, struct scif_port_id *p,
	scif_epd_t *n, int f)
STANDIN(int, scif_send, scif_epd_t e, void *m, int l, int f)
STANDIN(int, scif_recv, scif_epd_t e, void *m, int l, int f)
STANDIN(off_t, scif_register, scif_epd_t e, void *a, size_t l, off_t o,
	int p, int f)
STANDIN(int, scif_unregister, scif_epd_t e, off_t o, size_t l)
STANDIN(void *, scif_mmap, void *a, size_t l, int p, int f, scif_epd_t e,
	off_t o)
STANDIN(int, scif_munmap, void *a, size_t l)
STANDIN(int, scif_readfrom, scif_epd_t e, off_t lo, size_t l, off_t ro,
	int f)
STANDIN(int, scif_writeto, scif_epd_t e, off_t lo, size_t l, off_t ro,
	int f)
STANDIN(int, scif_vreadfrom, scif_epd_t e, void *a, size_t l, off_t ro,
	int f)
STANDIN(int, scif_vwriteto, scif_epd_t e, void *a, size_t l, off_t ro,
	int f)
STANDIN(int, scif_fence_mark, scif_epd_t e, int f, int *m)
STANDIN(int, scif_fence_wait, scif_epd_t e, int m)
STANDIN(int, scif_fence_signal, scif_epd_t e, off_t lo, uint64_t lv,
	off_t ro, uint64_t rv, int f)
STANDIN(int, scif_get_nodeIDs, uint16_t *n, int l, uint16_t *s)
STANDIN(int, scif_poll, struct scif_pollepd *p, unsigned int n, long t)

int scif_get_fd(scif_epd_t epd)
{
	(void)epd;
	return STANDIN_FD;
}
