/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-ucache.c: the cache of unwound and named user stacks
 * (src/ucache.c), driven the way report drives it for each sample:
 *
 *	find (key, stack words) -> on a miss: unwind, name, insert with
 *	where the unwinder read
 *	emit into the room the sample's kernel frames left
 *
 * Keys are picked by hand, so two keys can be made to share a slot.
 * Tokens are plain numbers; MARKER stands for "[truncated]".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "ucache.h"

#define SLOTS 64
#define MARKER 0xdeadU
#define MAX_TOKENS 512		/* room of a sample without kernel frames */

static uint8_t stack_a[4096], stack_b[4096];
static uint32_t chain[1024];
static uint32_t out[MAX_TOKENS];

static void fatal(const char *what)
{
	fprintf(stderr, "test-ucache: %s\n", what);
	printf("Bail out! %s\n", what);
	exit(1);
}

static struct wp_ucache *new_cache(unsigned int slots, size_t tokens)
{
	struct wp_ucache *c;

	if (wp_ucache_new(slots, tokens, &c))
		fatal("cannot create a cache");
	return c;
}

/*
 * Insert st as an unwind that read one word, the one ending end bytes
 * into the copy (none when end is 0): what was read reaches that far.
 */
static int insert_upto(struct wp_ucache *c, uint64_t key, const uint8_t *stack,
		       uint64_t dyn_size, uint32_t end, const struct wp_ucache_stack *st)
{
	uint32_t off = end >= 8 ? end - 8 : 0;

	return wp_ucache_insert(c, key, stack, dyn_size, &off, end >= 8, st);
}

/* A chain of len frames whose tokens start at first. */
static struct wp_ucache_stack make_stack(uint32_t first, unsigned int len)
{
	struct wp_ucache_stack st = { .tokens = chain, .len = len };

	if (len > sizeof(chain) / sizeof(chain[0]))
		fatal("test bug: chain too long");
	for (unsigned int i = 0; i < len; i++)
		chain[i] = first + i;
	return st;
}

/* Are out[0, n) the frames first.. of a chain, then (if marked) MARKER? */
static bool out_is(unsigned int n, uint32_t first, unsigned int frames, bool marked)
{
	if (n != frames + marked)
		return false;
	for (unsigned int i = 0; i < frames; i++)
		if (out[i] != first + i)
			return false;
	return !marked || out[frames] == MARKER;
}

static void test_new(void)
{
	struct wp_ucache *c = (struct wp_ucache *)&c;

	is_int(wp_ucache_new(48, 100, &c), -EINVAL, "new: 48 slots (not a power of two)");
	ok(c == NULL, "new: and no cache");
	is_int(wp_ucache_new(0, 100, &c), -EINVAL, "new: no slots");
	is_int(wp_ucache_new(16, 0, &c), -EINVAL, "new: no room for tokens");
	is_int(wp_ucache_new(1, 1, &c), 0, "new: one slot, one token");
	wp_ucache_free(c);
	wp_ucache_free(NULL);
}

static void test_key(void)
{
	uint64_t regs[17], k;

	for (unsigned int i = 0; i < 17; i++)
		regs[i] = 0x7ffd00001000ULL + i;
	k = wp_ucache_key(42, regs, 17);
	is_u64(wp_ucache_key(42, regs, 17), k, "key: the same sample, the same key");
	ok(wp_ucache_key(43, regs, 17) != k, "key: another address space, another key");
	regs[16]++;
	ok(wp_ucache_key(42, regs, 17) != k, "key: another register value, another key");
}

/* Keys, stack bytes and copy sizes decide a hit. */
static void test_hit_and_miss(void)
{
	struct wp_ucache *c = new_cache(SLOTS, 4096);
	struct wp_ucache_stack st = make_stack(100, 5), got;
	uint64_t key = 0x1234567890abcdefULL;

	ok(!wp_ucache_find(c, key, stack_a, 2048, &got), "miss: an empty cache");
	is_int(insert_upto(c, key, stack_a, 2048, 1000, &st), 0, "insert: a 5-frame stack");
	memset(chain, 0, sizeof(chain));	/* the cache keeps its own copy */
	ok(wp_ucache_find(c, key, stack_a, 2048, &got) && got.len == 5 && got.tokens[0] == 100 &&
	   got.tokens[4] == 104 && !got.truncated && !got.too_deep,
	   "hit: the same key and bytes give the 5 frames back");
	ok(!wp_ucache_find(c, key ^ 1, stack_a, 2048, &got), "miss: another key");
	ok(!wp_ucache_find(c, key + SLOTS, stack_a, 2048, &got),
	   "miss: another key of the same slot");

	memcpy(stack_b, stack_a, sizeof(stack_b));
	stack_b[999] ^= 1;
	ok(!wp_ucache_find(c, key, stack_b, 2048, &got),
	   "miss: a byte the unwinder read differs");
	stack_b[999] ^= 1;
	stack_b[1000] ^= 1;
	ok(wp_ucache_find(c, key, stack_b, 2048, &got) && got.len == 5,
	   "hit: a byte beyond what the unwinder read differs");
	ok(wp_ucache_find(c, key, stack_a, 1000, &got),
	   "hit: a smaller copy that still holds what was read (not truncated)");
	ok(wp_ucache_find(c, key, stack_a, 4096, &got), "hit: a larger copy (not truncated)");
	ok(!wp_ucache_find(c, key, stack_a, 999, &got),
	   "miss: a copy shorter than what the unwinder read");
	is_int(insert_upto(c, key, stack_a, 100, 101, &st), -E2BIG,
	       "insert: refuses to read more than the copy holds");
	wp_ucache_free(c);
}

/*
 * Only the words read decide: a local between two return addresses may
 * change from call to call, a word the unwinder followed may not.
 */
static void test_read_set(void)
{
	struct wp_ucache *c = new_cache(SLOTS, 4096);
	struct wp_ucache_stack st = make_stack(300, 4), got;
	uint32_t offs[WP_UCACHE_MAX_READS + 1];
	uint64_t key = 99;

	offs[0] = 24;	/* the unwinder's order, not the stack's */
	offs[1] = 0;
	offs[2] = 1016;
	is_int(wp_ucache_insert(c, key, stack_a, 2048, offs, 3, &st), 0,
	       "reads: insert an unwind that read three words");
	memcpy(stack_b, stack_a, sizeof(stack_b));
	for (unsigned int i = 8; i < 24; i++)
		stack_b[i] ^= 0x5a;
	for (unsigned int i = 32; i < 1016; i++)
		stack_b[i] ^= 0xa5;
	ok(wp_ucache_find(c, key, stack_b, 2048, &got) && got.len == 4 && got.tokens[0] == 300,
	   "reads: every byte between the words read differs, and it hits");
	stack_b[1023] ^= 1;
	ok(!wp_ucache_find(c, key, stack_b, 2048, &got), "reads: the last byte of a word read differs");
	stack_b[1023] ^= 1;
	stack_b[24] ^= 0x80;
	ok(!wp_ucache_find(c, key, stack_b, 2048, &got), "reads: the first byte of a word read differs");
	stack_b[24] ^= 0x80;
	ok(wp_ucache_find(c, key, stack_b, 1024, &got),
	   "reads: a copy that ends just after the furthest word read");
	ok(!wp_ucache_find(c, key, stack_b, 1023, &got), "reads: one byte shorter misses");

	/* The same words in another order are another unwind. */
	memcpy(stack_b, stack_a, sizeof(stack_b));
	memcpy(stack_b + 0, stack_a + 24, 8);
	memcpy(stack_b + 24, stack_a + 0, 8);
	ok(!wp_ucache_find(c, key, stack_b, 2048, &got), "reads: two words read swap places");

	ok(wp_ucache_insert(c, key + 1, stack_a, 2048, offs, 0, &st) == 0 &&
	   wp_ucache_find(c, key + 1, stack_b, 8, &got) && got.len == 4,
	   "reads: an unwind that read nothing hits on its key alone");

	for (unsigned int i = 0; i <= WP_UCACHE_MAX_READS; i++)
		offs[i] = 8 * i;
	is_int(wp_ucache_insert(c, key + 2, stack_a, 2048, offs, WP_UCACHE_MAX_READS + 1, &st),
	       -E2BIG, "reads: more reads than an entry remembers are refused");
	ok(!wp_ucache_find(c, key + 2, stack_a, 2048, &got), "reads: and not found");
	is_int(wp_ucache_insert(c, key + 3, stack_a, 2048, offs, WP_UCACHE_MAX_READS, &st), 0,
	       "reads: as many as it remembers are kept");
	ok(wp_ucache_find(c, key + 3, stack_a, 2048, &got), "reads: and found");
	offs[0] = 2044;
	is_int(wp_ucache_insert(c, key + 4, stack_a, 2048, offs, 1, &st), -E2BIG,
	       "reads: a word that runs past the copy is refused");
	offs[0] = UINT32_MAX;
	is_int(wp_ucache_insert(c, key + 4, stack_a, 2048, offs, 1, &st), -E2BIG,
	       "reads: an offset past the copy is refused");
	wp_ucache_free(c);
}

/* A truncated stack depends on where the copy ended: keyed by its size too. */
static void test_truncated_entries(void)
{
	struct wp_ucache *c = new_cache(SLOTS, 4096);
	struct wp_ucache_stack st = make_stack(200, 7), got;
	uint64_t key = 77;

	st.truncated = true;
	st.needed = 9000;
	is_int(insert_upto(c, key, stack_a, 2048, 2048, &st), 0,
	       "truncated: insert a stack cut by a 2048-byte copy");
	ok(wp_ucache_find(c, key, stack_a, 2048, &got) && got.len == 7 && got.truncated &&
	   !got.too_deep && got.needed == 9000,
	   "truncated: the same copy size hits, with the flag and the size needed");
	ok(!wp_ucache_find(c, key, stack_a, 4096, &got),
	   "truncated: a larger copy misses (it may unwind further)");
	ok(!wp_ucache_find(c, key, stack_a, 3000, &got),
	   "truncated: any other copy size misses");

	/* The same for a stack the unwinder read only part of. */
	is_int(insert_upto(c, key + 1, stack_a, 2048, 500, &st), 0,
	       "truncated: insert one whose unwinder read 500 bytes");
	ok(wp_ucache_find(c, key + 1, stack_a, 2048, &got),
	   "truncated: hit with the same copy size");
	ok(!wp_ucache_find(c, key + 1, stack_a, 2040, &got),
	   "truncated: miss with a copy 8 bytes shorter");
	wp_ucache_free(c);
}

/* The budget applied on the way out. */
static void test_emit(void)
{
	struct wp_ucache_stack st = make_stack(1, 10);
	bool cut = true;
	unsigned int n;

	n = wp_ucache_emit(&st, MARKER, out, 512, &cut);
	ok(out_is(n, 1, 10, false) && !cut, "emit: a stack that fits, as it is");
	n = wp_ucache_emit(&st, MARKER, out, 10, &cut);
	ok(out_is(n, 1, 10, false) && !cut, "emit: a stack that fits exactly");
	n = wp_ucache_emit(&st, MARKER, out, 9, &cut);
	ok(out_is(n, 1, 8, true) && cut, "emit: one token short: 8 frames and the marker");
	n = wp_ucache_emit(&st, MARKER, out, 1, &cut);
	ok(out_is(n, 1, 0, true) && cut, "emit: room for one: the marker alone");
	n = wp_ucache_emit(&st, MARKER, out, 0, &cut);
	ok(n == 0 && cut, "emit: no room: nothing, and cut");

	st.too_deep = true;
	n = wp_ucache_emit(&st, MARKER, out, 512, &cut);
	ok(out_is(n, 1, 10, true) && !cut, "emit: too deep: 10 frames and the marker");
	n = wp_ucache_emit(&st, MARKER, out, 10, &cut);
	ok(out_is(n, 1, 9, true) && cut, "emit: too deep, no room for the marker: 9 and marker");
	st.too_deep = false;
	st.truncated = true;
	n = wp_ucache_emit(&st, MARKER, out, 11, &cut);
	ok(out_is(n, 1, 10, true) && !cut, "emit: truncated: 10 frames and the marker");

	st = make_stack(1, 0);
	n = wp_ucache_emit(&st, MARKER, out, 0, &cut);
	ok(n == 0 && !cut, "emit: an empty stack in no room is not cut");
}

/*
 * A stack first seen by a sample with many kernel frames (little room
 * left), then hit by samples with more room: each gets all that fits.
 */
static void test_budget_is_not_stored(void)
{
	struct wp_ucache *c = new_cache(SLOTS, 4096);
	struct wp_ucache_stack st = make_stack(1000, 300), got;
	uint64_t key = 5;
	bool cut;
	unsigned int n;

	st.too_deep = true;
	insert_upto(c, key, stack_a, 2048, 1500, &st);
	n = wp_ucache_emit(&st, MARKER, out, 100, &cut);
	ok(out_is(n, 1000, 99, true) && cut,
	   "budget: the first sample (room 100) gets 99 frames and the marker");

	ok(wp_ucache_find(c, key, stack_a, 2048, &got) && got.len == 300 && got.too_deep,
	   "budget: the cache holds all 300 frames, not the 99 shown");
	n = wp_ucache_emit(&got, MARKER, out, MAX_TOKENS, &cut);
	ok(out_is(n, 1000, 300, true) && !cut,
	   "budget: a hit with room 512 shows all 300 frames and the marker");

	ok(wp_ucache_find(c, key, stack_a, 2048, &got), "budget: hit under room 10");
	n = wp_ucache_emit(&got, MARKER, out, 10, &cut);
	ok(out_is(n, 1000, 9, true) && cut, "budget: room 10: 9 frames and the marker");
	ok(wp_ucache_find(c, key, stack_a, 2048, &got) && got.len == 300,
	   "budget: a hit under little room does not shorten the entry");
	n = wp_ucache_emit(&got, MARKER, out, 400, &cut);
	ok(out_is(n, 1000, 300, true) && !cut,
	   "budget: the next hit, with room 400, still shows all 300 frames");

	/* A stack not cut by the unwinder, cut by the budget only. */
	st = make_stack(3000, 50);
	insert_upto(c, key + 1, stack_a, 2048, 100, &st);
	n = wp_ucache_emit(&st, MARKER, out, 20, &cut);
	ok(out_is(n, 3000, 19, true) && cut,
	   "budget: a whole 50-frame stack in room 20: 19 frames and the marker");
	ok(wp_ucache_find(c, key + 1, stack_a, 2048, &got), "budget: it is cached");
	n = wp_ucache_emit(&got, MARKER, out, 50, &cut);
	ok(out_is(n, 3000, 50, false) && !cut,
	   "budget: a hit with room 50 shows all 50 frames and no marker");
	wp_ucache_free(c);
}

/* Slots are replaced; a full token store starts over. */
static void test_eviction(void)
{
	struct wp_ucache *c = new_cache(4, 10);
	struct wp_ucache_stack st, got;

	st = make_stack(10, 3);
	insert_upto(c, 1, stack_a, 64, 8, &st);
	st = make_stack(20, 3);
	insert_upto(c, 1 + 4, stack_a, 64, 8, &st);
	ok(!wp_ucache_find(c, 1, stack_a, 64, &got),
	   "evict: a key is replaced by a later one of its slot");
	ok(wp_ucache_find(c, 5, stack_a, 64, &got) && got.len == 3 && got.tokens[0] == 20,
	   "evict: the later one is found");

	st = make_stack(30, 3);
	insert_upto(c, 2, stack_a, 64, 8, &st);
	ok(wp_ucache_find(c, 5, stack_a, 64, &got) && wp_ucache_find(c, 2, stack_a, 64, &got),
	   "full: 9 of 10 tokens used, both stacks found");
	st = make_stack(40, 4);
	is_int(insert_upto(c, 3, stack_a, 64, 8, &st), 0,
	       "full: a 4-frame stack does not fit: the cache starts over");
	ok(!wp_ucache_find(c, 5, stack_a, 64, &got) && !wp_ucache_find(c, 2, stack_a, 64, &got),
	   "full: the older stacks are gone");
	ok(wp_ucache_find(c, 3, stack_a, 64, &got) && got.len == 4 && got.tokens[0] == 40 &&
	   got.tokens[3] == 43, "full: the new one is found, whole");

	st = make_stack(50, 11);
	is_int(insert_upto(c, 0, stack_a, 64, 8, &st), -E2BIG,
	       "full: a stack larger than the whole store is refused");
	ok(!wp_ucache_find(c, 0, stack_a, 64, &got), "full: and not found");
	ok(wp_ucache_find(c, 3, stack_a, 64, &got) && got.tokens[0] == 40,
	   "full: refusing it kept the others");

	wp_ucache_reset(c);
	ok(!wp_ucache_find(c, 3, stack_a, 64, &got), "reset: nothing is found");
	st = make_stack(60, 10);
	ok(insert_upto(c, 3, stack_a, 64, 8, &st) == 0 &&
	   wp_ucache_find(c, 3, stack_a, 64, &got) && got.len == 10 && got.tokens[9] == 69,
	   "reset: the whole store is free again");
	wp_ucache_free(c);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(stack_a); i++)
		stack_a[i] = (uint8_t)(i * 13 + 5);
	test_new();
	test_key();
	test_hit_and_miss();
	test_read_set();
	test_truncated_entries();
	test_emit();
	test_budget_is_not_stored();
	test_eviction();
	return done_testing();
}
