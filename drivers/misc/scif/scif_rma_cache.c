// SPDX-License-Identifier: GPL-2.0
/*
 * SCIF core: the registration cache of SCIF_RMA_USECACHE.
 *
 * vreadfrom/vwriteto with SCIF_RMA_USECACHE keep the user pages of the
 * buffer pinned after the RMA, in a per-endpoint cache, so that the next
 * RMA on the same range does not pin them again.  Each entry watches its
 * range with an MMU interval notifier: when the process unmaps the range,
 * remaps it, or anything else changes what backs it, the entry is marked
 * stale before the change is done and is never used again (it goes at
 * the next lookup, or when the last RMA using it completes).  An RMA
 * that is already copying keeps the pages it started with, as it would
 * without the cache.
 *
 * The cache is bounded (SCIF_CACHE_MAX_PAGES per endpoint, least
 * recently used entries go first) and its pages are charged to the
 * process's RLIMIT_MEMLOCK like windows, before anything is allocated
 * for them; a range that does not fit is pinned for the RMA only.  The
 * pages are pinned as windows pin theirs (scif_pin_user_range(): for
 * writing where the mapping is private and writable, so a buffer filled
 * after its first use keeps its entry).  The cache goes when the
 * endpoint is closed.
 *
 * Locking: ep->rma.cache_lock (a mutex) protects the list; it nests
 * outside the mm's mmap lock (pinning and inserting a notifier take it)
 * and is never taken by the notifier, which only sets @stale.
 */
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "scif_endpt.h"
#include "scif_fault.h"
#include "scif_rma.h"

/* Pages one endpoint's cache keeps pinned at most. */
#define SCIF_CACHE_MAX_PAGES	32768UL

/**
 * struct scif_rma_cache - an endpoint's registration cache
 * @ents: entries, most recently used first
 * @nr_pages: pages of the entries in @ents
 */
struct scif_rma_cache {
	struct list_head ents;
	unsigned long nr_pages;
};

static atomic_long_t scif_cache_total;

static bool scif_cache_invalidate(struct mmu_interval_notifier *mni,
				  const struct mmu_notifier_range *range,
				  unsigned long cur_seq)
{
	struct scif_cache_ent *ce = container_of(mni, struct scif_cache_ent,
						 notifier);

	mmu_interval_set_seq(mni, cur_seq);
	WRITE_ONCE(ce->stale, true);
	return true;
}

static const struct mmu_interval_notifier_ops scif_cache_ops = {
	.invalidate = scif_cache_invalidate,
};

static void scif_cache_release(struct kref *ref)
{
	struct scif_cache_ent *ce = container_of(ref, struct scif_cache_ent,
						 ref);

	unpin_user_pages_dirty_lock(ce->pages, ce->nr_pages, ce->write);
	scif_pin_uncharge(ce->mm, ce->nr_pages);
	atomic_long_sub(ce->nr_pages, &scif_cache_total);
	/* Drops the notifier's hold on the mm. */
	mmu_interval_notifier_remove(&ce->notifier);
	kvfree(ce->pages);
	kfree(ce);
}

/**
 * scif_cache_put() - drop a reference to a cache entry
 * @ce: the entry
 *
 * Context: process context, not under cache_lock.
 */
void scif_cache_put(struct scif_cache_ent *ce)
{
	kref_put(&ce->ref, scif_cache_release);
}

/* Take @ce out of the cache onto @dead; under cache_lock. */
static void scif_cache_unlink(struct scif_rma_cache *cache,
			      struct scif_cache_ent *ce, struct list_head *dead)
{
	list_move(&ce->link, dead);
	cache->nr_pages -= ce->nr_pages;
}

static void scif_cache_put_list(struct list_head *dead)
{
	struct scif_cache_ent *ce, *tmp;

	list_for_each_entry_safe(ce, tmp, dead, link) {
		list_del(&ce->link);
		scif_cache_put(ce);
	}
}

/*
 * A new entry for [start, start + nr pages), pinned; NULL if not.  The
 * pages are charged before anything is allocated for them, and pinned
 * as windows pin theirs (scif_pin_user_range()).
 */
static struct scif_cache_ent *scif_cache_new(unsigned long start,
					     unsigned long nr, bool write)
{
	struct mm_struct *mm = current->mm;
	struct scif_cache_ent *ce;

	if (scif_pin_charge(mm, nr))
		return NULL;
	ce = scif_kzalloc(sizeof(*ce), GFP_KERNEL_ACCOUNT);
	if (!ce)
		goto uncharge;
	ce->pages = scif_kvcalloc(nr, sizeof(*ce->pages),
				  GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!ce->pages)
		goto free;
	kref_init(&ce->ref);
	ce->start = start;
	ce->nr_pages = nr;
	ce->write = write;
	ce->mm = mm;
	/* Watch first: a change while pinning marks the entry stale. */
	if (mmu_interval_notifier_insert(&ce->notifier, mm, start,
					 nr << PAGE_SHIFT, &scif_cache_ops))
		goto free_pages;
	if (scif_pin_user_range(start, nr, write, ce->pages))
		goto remove;
	if (READ_ONCE(ce->stale))
		goto unpin;
	atomic_long_add(nr, &scif_cache_total);
	return ce;

unpin:
	unpin_user_pages(ce->pages, nr);
remove:
	mmu_interval_notifier_remove(&ce->notifier);
free_pages:
	kvfree(ce->pages);
free:
	kfree(ce);
uncharge:
	scif_pin_uncharge(mm, nr);
	return NULL;
}

/**
 * scif_cache_get() - cached pinned pages for a user buffer
 * @ep: the endpoint
 * @addr: start of the buffer, in the current process
 * @len: its length, non-zero
 * @write: the pages will be written (vreadfrom)
 * @err: receives 0 (an error here only means "not cached")
 *
 * Looks the range up in the endpoint's cache; on a miss, pins it and
 * adds it, unless it is larger than the cache or over RLIMIT_MEMLOCK.
 * Entries the process changed since they were pinned go.
 *
 * Context: process context with a user mm; may sleep.
 * Return: the entry covering the buffer, with a reference for the caller
 * (scif_cache_put()), or NULL if the caller has to pin the pages itself.
 */
struct scif_cache_ent *scif_cache_get(struct scif_endpt *ep,
				      unsigned long addr, u64 len,
				      bool write, int *err)
{
	unsigned long start = addr & PAGE_MASK, end, nr;
	struct scif_cache_ent *ce, *tmp, *found = NULL;
	struct scif_rma_cache *cache;
	LIST_HEAD(dead);

	*err = 0;
	if (!current->mm || check_add_overflow(addr, (unsigned long)len, &end))
		return NULL;
	end = PAGE_ALIGN(end);
	nr = (end - start) >> PAGE_SHIFT;
	if (!end || nr > SCIF_CACHE_MAX_PAGES)
		return NULL;

	mutex_lock(&ep->rma.cache_lock);
	cache = ep->rma.cache;
	if (!cache) {
		cache = scif_kzalloc(sizeof(*cache), GFP_KERNEL);
		if (!cache)
			goto out;
		INIT_LIST_HEAD(&cache->ents);
		ep->rma.cache = cache;
	}
	list_for_each_entry_safe(ce, tmp, &cache->ents, link) {
		if (READ_ONCE(ce->stale)) {
			scif_cache_unlink(cache, ce, &dead);
			continue;
		}
		if (!found && ce->mm == current->mm && ce->start <= start &&
		    end <= ce->start + (ce->nr_pages << PAGE_SHIFT) &&
		    (ce->write || !write))
			found = ce;
	}
	if (found) {
		list_move(&found->link, &cache->ents);
		kref_get(&found->ref);
		goto out;
	}
	/* Make room, least recently used first. */
	list_for_each_entry_safe_reverse(ce, tmp, &cache->ents, link) {
		if (cache->nr_pages + nr <= SCIF_CACHE_MAX_PAGES)
			break;
		scif_cache_unlink(cache, ce, &dead);
	}
	found = scif_cache_new(start, nr, write);
	if (found) {
		list_add(&found->link, &cache->ents);
		cache->nr_pages += nr;
		kref_get(&found->ref);
	}
out:
	mutex_unlock(&ep->rma.cache_lock);
	scif_cache_put_list(&dead);
	return found;
}

/**
 * scif_cache_epd_init() - set up a new endpoint's registration cache
 * @ep: the endpoint; its cache is made by the first RMA that asks for it
 *
 * Context: any context.
 */
void scif_cache_epd_init(struct scif_endpt *ep)
{
	mutex_init(&ep->rma.cache_lock);
}

/**
 * scif_cache_destroy() - drop an endpoint's registration cache
 * @ep: the endpoint, being closed or destroyed
 *
 * Pages still used by an RMA in flight stay pinned until it completes.
 *
 * Context: process context; may sleep.
 */
void scif_cache_destroy(struct scif_endpt *ep)
{
	struct scif_rma_cache *cache;
	struct scif_cache_ent *ce, *tmp;
	LIST_HEAD(dead);

	mutex_lock(&ep->rma.cache_lock);
	cache = ep->rma.cache;
	ep->rma.cache = NULL;
	if (cache)
		list_for_each_entry_safe(ce, tmp, &cache->ents, link)
			scif_cache_unlink(cache, ce, &dead);
	mutex_unlock(&ep->rma.cache_lock);
	kfree(cache);
	scif_cache_put_list(&dead);
}

/**
 * scif_cache_pinned() - user pages the registration caches keep pinned
 *
 * Return: the number of pages.
 */
long scif_cache_pinned(void)
{
	return atomic_long_read(&scif_cache_total);
}
