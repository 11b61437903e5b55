// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF ivshmem bus: its KUnit suite, of the test build on a kernel with
 * KUnit (SCIF_KUNIT; see Kbuild).  scif_ivshmem.c includes this file at
 * its end then only, so that the suite reaches the bus's static
 * functions; the shipped module has none of it.
 */
/* LCOV_EXCL_START: test code, not the driver's (make coverage). */
/*
 * KUnit suite of the test build (run when the module loads, see
 * scif_kunit.sh): matching an aperture to a node by its signature
 * (issue 12, defect 8).  A peer names, in its slot, where its signature
 * is and what it says; the fake apertures below stand for the other
 * nodes' RAM.  They join scif_iv_apertures for the test only; a real
 * node's random signature is not in them.
 */
#include <kunit/test.h>

#define SCIF_IV_KUNIT_APS	3
#define SCIF_IV_KUNIT_SIZE	(4 * PAGE_SIZE)

static struct scif_iv_aperture *scif_iv_kunit_aps(struct kunit *test)
{
	return test->priv;
}

static int scif_iv_kunit_init(struct kunit *test)
{
	struct scif_iv_aperture *aps;
	int i;

	aps = kunit_kcalloc(test, SCIF_IV_KUNIT_APS, sizeof(*aps), GFP_KERNEL);
	if (!aps)
		return -ENOMEM;
	mutex_lock(&scif_iv_lock);
	for (i = 0; i < SCIF_IV_KUNIT_APS; i++) {
		aps[i].va = kunit_kzalloc(test, SCIF_IV_KUNIT_SIZE, GFP_KERNEL);
		aps[i].size = aps[i].va ? SCIF_IV_KUNIT_SIZE : 0;
		aps[i].node = -1;
		list_add_tail(&aps[i].list, &scif_iv_apertures);
	}
	mutex_unlock(&scif_iv_lock);
	test->priv = aps;
	return 0;
}

static void scif_iv_kunit_exit(struct kunit *test)
{
	struct scif_iv_aperture *aps = scif_iv_kunit_aps(test);
	int i;

	mutex_lock(&scif_iv_lock);
	for (i = 0; i < SCIF_IV_KUNIT_APS; i++)
		list_del(&aps[i].list);
	mutex_unlock(&scif_iv_lock);
}

/* Write node @node's signature at @addr of @ap and describe it in @slot. */
static void scif_iv_kunit_sig(struct scif_iv_aperture *ap, u64 addr, u16 node,
			      u32 gen, u64 value, struct scif_iv_slot *slot)
{
	struct scif_iv_sig sig = {
		.magic = SCIF_IV_SIG_MAGIC,
		.node = node,
		.generation = gen,
		.value = value,
	};

	memcpy(ap->va + addr, &sig, sizeof(sig));
	memset(slot, 0, sizeof(*slot));
	slot->sig_addr = addr;
	slot->sig_value = value;
	slot->generation = gen;
}

/* The one aperture that shows the signature is the node's, once. */
static void scif_iv_sig_unique(struct kunit *test)
{
	struct scif_iv_aperture *aps = scif_iv_kunit_aps(test);
	struct scif_iv_slot slot;

	KUNIT_ASSERT_NOT_NULL(test, aps[1].va);
	scif_iv_kunit_sig(&aps[1], PAGE_SIZE, 2, 7, 0x1234567890abcdefULL,
			  &slot);
	KUNIT_EXPECT_PTR_EQ(test, scif_iv_find_aperture(&slot, 2), &aps[1]);
	KUNIT_EXPECT_EQ(test, aps[1].node, 2);
	/* Claimed: nobody gets it again, not even the same slot. */
	KUNIT_EXPECT_NULL(test, scif_iv_find_aperture(&slot, 2));
	KUNIT_EXPECT_EQ(test, aps[0].node, -1);
	KUNIT_EXPECT_EQ(test, aps[2].node, -1);
}

/*
 * Memory every VM holds alike (the BIOS shadow, a zero page) shows the
 * same bytes through every aperture: a signature found in more than
 * one proves nothing, and no aperture is claimed.
 */
static void scif_iv_sig_everywhere(struct kunit *test)
{
	struct scif_iv_aperture *aps = scif_iv_kunit_aps(test);
	struct scif_iv_slot slot;
	int i;

	for (i = 0; i < SCIF_IV_KUNIT_APS; i++) {
		KUNIT_ASSERT_NOT_NULL(test, aps[i].va);
		scif_iv_kunit_sig(&aps[i], 2 * PAGE_SIZE + 64, 3, 1,
				  0xfeedf00dfeedf00dULL, &slot);
	}
	KUNIT_EXPECT_NULL(test, scif_iv_find_aperture(&slot, 3));
	for (i = 0; i < SCIF_IV_KUNIT_APS; i++)
		KUNIT_EXPECT_EQ(test, aps[i].node, -1);
	/* Zeros everywhere: value 0 never matches. */
	memset(&slot, 0, sizeof(slot));
	slot.sig_addr = 3 * PAGE_SIZE;
	KUNIT_EXPECT_NULL(test, scif_iv_find_aperture(&slot, 0));
}

/*
 * A peer copies another node's signature (address, value, generation)
 * into its own slot: the signature names the other node, so the peer
 * gets no aperture, and the other node still gets its own.
 */
static void scif_iv_sig_other_node(struct kunit *test)
{
	struct scif_iv_aperture *aps = scif_iv_kunit_aps(test);
	struct scif_iv_slot slot;

	KUNIT_ASSERT_NOT_NULL(test, aps[2].va);
	scif_iv_kunit_sig(&aps[2], 0, 1, 4, 0x0badc0de0badc0deULL, &slot);
	KUNIT_EXPECT_NULL(test, scif_iv_find_aperture(&slot, 5));
	KUNIT_EXPECT_EQ(test, aps[2].node, -1);
	/* Another life of the right node does not match either. */
	slot.generation = 5;
	KUNIT_EXPECT_NULL(test, scif_iv_find_aperture(&slot, 1));
	slot.generation = 4;
	KUNIT_EXPECT_PTR_EQ(test, scif_iv_find_aperture(&slot, 1), &aps[2]);
}

/* Addresses that are not in the aperture, or not aligned, match nothing. */
static void scif_iv_sig_bad_addr(struct kunit *test)
{
	static const u64 bad[] = {
		SCIF_IV_KUNIT_SIZE, SCIF_IV_KUNIT_SIZE - 8, U64_MAX - 7,
		PAGE_SIZE + 4, 1ULL << 40,
	};
	struct scif_iv_aperture *aps = scif_iv_kunit_aps(test);
	struct scif_iv_slot slot;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, aps[0].va);
	scif_iv_kunit_sig(&aps[0], PAGE_SIZE, 6, 2, 0x77ULL, &slot);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		slot.sig_addr = bad[i];
		KUNIT_EXPECT_NULL(test, scif_iv_find_aperture(&slot, 6));
	}
	KUNIT_EXPECT_EQ(test, aps[0].node, -1);
}

/* A q35 guest of 4 GiB: 2 GiB at 0, 2 GiB at 4 GiB, file offset 2 GiB. */
static void scif_iv_kunit_q35(struct scif_iv_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->version = SCIF_IV_LAYOUT_VERSION;
	l->nr = 2;
	l->range[0].len = SZ_2G - SZ_1M;
	l->range[1].gpa = SZ_4G;
	l->range[1].offset = SZ_2G;
	l->range[1].len = SZ_2G;
}

/* The good layout passes; addresses translate into the right range. */
static void scif_iv_layout_good(struct kunit *test)
{
	struct scif_iv_layout raw, l;
	u64 off = 0;

	scif_iv_kunit_q35(&raw);
	KUNIT_ASSERT_TRUE(test, scif_iv_layout_check(&raw, SZ_4G, &l));
	KUNIT_EXPECT_TRUE(test, scif_iv_translate(&l, 0x1000, 8, &off));
	KUNIT_EXPECT_EQ(test, off, 0x1000ULL);
	KUNIT_EXPECT_TRUE(test, scif_iv_translate(&l, SZ_4G + 0x5000,
						  PAGE_SIZE, &off));
	KUNIT_EXPECT_EQ(test, off, SZ_2G + 0x5000ULL);
	/* The last byte of the file, and no further. */
	KUNIT_EXPECT_TRUE(test, scif_iv_translate(&l, SZ_4G + SZ_2G - 8, 8,
						  &off));
	KUNIT_EXPECT_EQ(test, off, SZ_4G - 8ULL);
	KUNIT_EXPECT_FALSE(test, scif_iv_translate(&l, SZ_4G + SZ_2G - 8, 16,
						   &off));
	/* The PCI hole, a run across two ranges, wrapping: nothing. */
	KUNIT_EXPECT_FALSE(test, scif_iv_translate(&l, SZ_2G + SZ_1G, 8, &off));
	KUNIT_EXPECT_FALSE(test, scif_iv_translate(&l, SZ_2G - SZ_1M - 8,
						   SZ_4G, &off));
	KUNIT_EXPECT_FALSE(test, scif_iv_translate(&l, U64_MAX - 7, 16, &off));
	/* Version 0 (a node without a layout): the identity over the file. */
	memset(&raw, 0, sizeof(raw));
	KUNIT_ASSERT_TRUE(test, scif_iv_layout_check(&raw, SZ_512M, &l));
	KUNIT_EXPECT_TRUE(test, scif_iv_translate(&l, SZ_256M, 8, &off));
	KUNIT_EXPECT_EQ(test, off, (u64)SZ_256M);
	KUNIT_EXPECT_FALSE(test, scif_iv_translate(&l, SZ_512M, 8, &off));
}

/* One spoilt field: range @r (or the header, -1), field @f, value @v. */
struct scif_iv_kunit_spoil {
	int r;
	int f;
	u64 v;
};

static void scif_iv_kunit_set(struct scif_iv_layout *l,
			      const struct scif_iv_kunit_spoil *sp)
{
	u64 *field;

	if (sp->r < 0) {
		if (sp->f)
			l->nr = sp->v;
		else
			l->version = sp->v;
		return;
	}
	field = sp->f == 0 ? &l->range[sp->r].gpa :
		sp->f == 1 ? &l->range[sp->r].offset : &l->range[sp->r].len;
	*field = sp->v;
}

/* Every way a peer can spoil its layout is refused. */
static void scif_iv_layout_bad(struct kunit *test)
{
	static const struct scif_iv_kunit_spoil spoil[] = {
		{ -1, 0, 2 }, { -1, 1, 0 }, { -1, 1, SCIF_IV_MAX_RANGES + 1 },
		{ -1, 1, U32_MAX },
		{ 1, 0, SZ_4G + 8 },			/* misaligned */
		{ 0, 2, 0 },				/* empty */
		{ 1, 0, SZ_1G },			/* overlapping */
		{ 0, 0, 2 * SZ_4G },			/* unsorted by address */
		{ 1, 1, 0 },				/* ... by offset */
		{ 1, 2, SZ_2G + PAGE_SIZE },		/* past the file */
		{ 1, 1, U64_MAX & PAGE_MASK },		/* wrapping */
		{ 1, 2, (U64_MAX & PAGE_MASK) - SZ_2G },
	};
	struct scif_iv_layout raw, l;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(spoil); i++) {
		scif_iv_kunit_q35(&raw);
		scif_iv_kunit_set(&raw, &spoil[i]);
		KUNIT_EXPECT_FALSE_MSG(test, scif_iv_layout_check(&raw, SZ_4G, &l),
				       "spoilt layout %u", i);
	}
	/* A 4 GiB layout in a 2 GiB file; a file that is no whole page. */
	scif_iv_kunit_q35(&raw);
	KUNIT_EXPECT_FALSE(test, scif_iv_layout_check(&raw, SZ_2G, &l));
	memset(&raw, 0, sizeof(raw));
	KUNIT_EXPECT_FALSE(test, scif_iv_layout_check(&raw, 100, &l));
}

/*
 * A node's signature above 4 GiB, found through its aperture at the
 * offset its layout gives, and not where offset == address would be.
 */
static void scif_iv_sig_translated(struct kunit *test)
{
	struct scif_iv_aperture *aps = scif_iv_kunit_aps(test);
	struct scif_iv_slot slot;

	KUNIT_ASSERT_NOT_NULL(test, aps[1].va);
	scif_iv_kunit_sig(&aps[1], 2 * PAGE_SIZE + 64, 4, 3,
			  0x5eed5eed5eed5eedULL, &slot);
	slot.sig_addr = SZ_4G + PAGE_SIZE + 64;
	slot.layout.version = SCIF_IV_LAYOUT_VERSION;
	slot.layout.nr = 2;
	slot.layout.range[0].len = PAGE_SIZE;
	slot.layout.range[1].gpa = SZ_4G;
	slot.layout.range[1].offset = PAGE_SIZE;
	slot.layout.range[1].len = 3 * PAGE_SIZE;
	KUNIT_EXPECT_PTR_EQ(test, scif_iv_find_aperture(&slot, 4), &aps[1]);
	aps[1].node = -1;
	/* The same signature with no layout (offset == address): not found. */
	memset(&slot.layout, 0, sizeof(slot.layout));
	KUNIT_EXPECT_NULL(test, scif_iv_find_aperture(&slot, 4));
	/* A layout that points past the aperture: not read, not found. */
	slot.layout.version = SCIF_IV_LAYOUT_VERSION;
	slot.layout.nr = 1;
	slot.layout.range[0].gpa = SZ_4G;
	slot.layout.range[0].offset = PAGE_SIZE;
	slot.layout.range[0].len = SCIF_IV_KUNIT_SIZE;
	KUNIT_EXPECT_NULL(test, scif_iv_find_aperture(&slot, 4));
	KUNIT_EXPECT_EQ(test, aps[1].node, -1);
}

static struct kunit_case scif_iv_sig_cases[] = {
	KUNIT_CASE(scif_iv_sig_unique),
	KUNIT_CASE(scif_iv_sig_everywhere),
	KUNIT_CASE(scif_iv_sig_other_node),
	KUNIT_CASE(scif_iv_sig_bad_addr),
	KUNIT_CASE(scif_iv_layout_good),
	KUNIT_CASE(scif_iv_layout_bad),
	KUNIT_CASE(scif_iv_sig_translated),
	{}
};

static struct kunit_suite scif_iv_sig_suite = {
	.name = "scif_ivshmem_signature",
	.init = scif_iv_kunit_init,
	.exit = scif_iv_kunit_exit,
	.test_cases = scif_iv_sig_cases,
};

kunit_test_suite(scif_iv_sig_suite);
/* LCOV_EXCL_STOP */
