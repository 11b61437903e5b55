// SPDX-License-Identifier: GPL-2.0
/*
 * scif_net_spoof: send raw Ethernet frames on an interface, with the
 * source address given (scif_net_mesh.sh: frames on scif_net's shared
 * device "sn" that claim to come from another node than their sender,
 * which the receiving node must refuse and count).  Root (CAP_NET_RAW).
 *
 *   scif_net_spoof IFACE DST_MAC SRC_MAC COUNT
 *
 * Sends COUNT frames of 60 bytes, EtherType 0x88b5 (local experimental),
 * and prints "sent COUNT"; exits 1 on any error.
 */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int parse_mac(const char *s, unsigned char *mac)
{
	unsigned int b[ETH_ALEN];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4],
		   &b[5]) != ETH_ALEN)
		return -1;
	for (i = 0; i < ETH_ALEN; i++) {
		if (b[i] > 0xff)
			return -1;
		mac[i] = b[i];
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char frame[60] = { 0 };
	struct sockaddr_ll to = { 0 };
	struct ether_header *eh = (struct ether_header *)frame;
	int fd, count, i;

	if (argc != 5 || parse_mac(argv[2], eh->ether_dhost) ||
	    parse_mac(argv[3], eh->ether_shost) || atoi(argv[4]) < 1) {
		fprintf(stderr, "usage: %s IFACE DST_MAC SRC_MAC COUNT\n",
			argv[0]);
		return 1;
	}
	count = atoi(argv[4]);
	eh->ether_type = htons(0x88b5);
	memcpy(frame + sizeof(*eh), "scif_net_spoof", 14);
	to.sll_family = AF_PACKET;
	to.sll_ifindex = if_nametoindex(argv[1]);
	to.sll_halen = ETH_ALEN;
	memcpy(to.sll_addr, eh->ether_dhost, ETH_ALEN);
	if (!to.sll_ifindex) {
		perror(argv[1]);
		return 1;
	}
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	for (i = 0; i < count; i++) {
		if (sendto(fd, frame, sizeof(frame), 0,
			   (struct sockaddr *)&to, sizeof(to)) != sizeof(frame)) {
			perror("sendto");
			return 1;
		}
	}
	close(fd);
	printf("sent %d\n", count);
	return 0;
}
