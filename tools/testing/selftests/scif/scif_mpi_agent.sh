#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Open MPI's "rsh agent" for the guests, which have no ssh
# (scif_net_mesh.sh's MPI job; mpirun --mca plm_rsh_agent).  mpirun runs
#   scif_mpi_agent.sh HOST WORD...
# to start its daemon on HOST; the words are the remote shell's command,
# quoted for a shell already.  They are written, as ssh would hand them
# to the remote shell, into $SCIF_MPI_WWW/launch-HOST.sh, a file of the
# head node's busybox httpd, which HOST's part of scif_net_mesh.sh
# fetches and runs.  Exit 0 at once: the daemon calls mpirun back.
set -u
www=${SCIF_MPI_WWW:-/tmp/mpi-www}
host=$1
shift
printf '#!/bin/sh\n%s\n' "$*" > "$www/launch-$host.sh.tmp" &&
	mv "$www/launch-$host.sh.tmp" "$www/launch-$host.sh"
