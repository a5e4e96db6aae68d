/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mkbomb: write a wallprof data file made to hurt a reader, for
 * report-hostile.sh.  A valid header and metadata (wallprof-data(5)), then
 * BLOCKS copies of one RECORDS block compressed with zstd, whose BLOCK_KIB
 * KiB decode to records of RECORD_BYTES bytes each of type TYPE (default
 * 63, which no kernel writes), all zero after their header: no ROUND
 * record, no summary.  zstd packs such a block some ten thousand times
 * smaller than it decodes, so a small file stands for gigabytes of
 * records.  BLOCK_TYPE, when given, is the blocks' type instead of 1
 * (RECORDS): 3 makes KSYMS blocks, 4 JITMAP blocks.
 * usage: mkbomb OUT BLOCKS BLOCK_KIB RECORD_BYTES [TYPE [BLOCK_TYPE]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

struct tlv {
	uint32_t tag, size;
};

static int put(FILE *f, const void *p, size_t n)
{
	return fwrite(p, 1, n, f) == n ? 0 : -1;
}

static int put_tlv(FILE *f, uint32_t tag, const void *p, uint32_t n)
{
	static const uint8_t pad[8];
	struct tlv t = { tag, n };

	return put(f, &t, sizeof(t)) || put(f, p, n) || put(f, pad, (8 - n % 8) % 8);
}

int main(int argc, char **argv)
{
	struct {
		char magic[8];
		uint32_t version, byte_order;
		uint64_t meta_size;
	} fh = { .magic = "WALLPROF", .version = 1, .byte_order = 0x01020304 };
	struct {
		int32_t clockid;
		uint32_t reserved;
		uint64_t start, start_realtime;
	} clk = { .clockid = 1, .start = 1000000000000ULL, .start_realtime = 1ULL << 60 };
	/* IDENTIFIER | IP | TID | TIME | CPU | PERIOD, a 1 ms clock. */
	struct {
		uint64_t sample_type, regs_mask;
		uint32_t stack_size, callgraph;
		uint64_t period;
	} fmt = { .sample_type = 0x10187, .period = 1000000 };
	struct {
		uint32_t nr_cpus, page_size;
	} sys = { 2, 4096 };
	struct {
		uint32_t mode, reserved;
		uint64_t flags;
	} target = { 0, 0, 0x04 };	/* a launched command, switch records */
	struct {
		uint32_t type, flags;
		uint64_t size, raw_size;
	} bh = { .type = 1, .flags = 1 };
	static const uint8_t pad[8];
	unsigned long blocks, kib, rec_size, type = 63;
	uint8_t *raw, *z;
	size_t zcap, zlen;
	FILE *f;

	if (argc < 5 || argc > 7) {
		fprintf(stderr, "usage: mkbomb OUT BLOCKS BLOCK_KIB RECORD_BYTES [TYPE [BLOCK_TYPE]]\n");
		return 2;
	}
	blocks = strtoul(argv[2], NULL, 0);
	kib = strtoul(argv[3], NULL, 0);
	rec_size = strtoul(argv[4], NULL, 0);
	if (argc >= 6)
		type = strtoul(argv[5], NULL, 0);
	if (argc == 7)
		bh.type = (uint32_t)strtoul(argv[6], NULL, 0);
	if (!kib || kib > (256UL << 10) || rec_size < 8 || rec_size > 65528 || rec_size % 8) {
		fprintf(stderr, "mkbomb: bad sizes\n");
		return 2;
	}
	bh.raw_size = (uint64_t)kib << 10;
	bh.raw_size -= bh.raw_size % rec_size;
	raw = calloc(1, bh.raw_size);
	zcap = ZSTD_compressBound(bh.raw_size);
	z = malloc(zcap);
	if (!raw || !z)
		return 1;
	for (size_t off = 0; off < bh.raw_size; off += rec_size) {
		uint32_t t = (uint32_t)type;
		uint16_t misc = 0, size = (uint16_t)rec_size;

		memcpy(raw + off, &t, 4);
		memcpy(raw + off + 4, &misc, 2);
		memcpy(raw + off + 6, &size, 2);
	}
	zlen = ZSTD_compress(z, zcap, raw, bh.raw_size, 19);
	if (ZSTD_isError(zlen)) {
		fprintf(stderr, "mkbomb: %s\n", ZSTD_getErrorName(zlen));
		return 1;
	}
	bh.size = zlen;

	f = fopen(argv[1], "wb");
	if (!f)
		return 1;
	fh.meta_size = 4 * sizeof(struct tlv) + sizeof(clk) + sizeof(fmt) + sizeof(sys) +
		       sizeof(target);
	if (put(f, &fh, sizeof(fh)) || put_tlv(f, 1, &clk, sizeof(clk)) ||
	    put_tlv(f, 6, &fmt, sizeof(fmt)) || put_tlv(f, 7, &sys, sizeof(sys)) ||
	    put_tlv(f, 8, &target, sizeof(target)))
		return 1;
	for (unsigned long i = 0; i < blocks; i++)
		if (put(f, &bh, sizeof(bh)) || put(f, z, zlen) || put(f, pad, (8 - zlen % 8) % 8))
			return 1;
	if (fclose(f))
		return 1;
	printf("%lu blocks of %llu bytes decoding to %llu: %llu records in %llu bytes of file\n",
	       blocks, (unsigned long long)zlen, (unsigned long long)bh.raw_size,
	       (unsigned long long)(bh.raw_size / rec_size * blocks),
	       (unsigned long long)(sizeof(fh) + fh.meta_size +
				    blocks * (sizeof(bh) + (zlen + 7) / 8 * 8)));
	free(raw);
	free(z);
	return 0;
}
