/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * libhadoop's checksum core against published vectors (the CRC catalogue's "123456789"
 * checks, RFC 3720 B.4's CRC32C examples), the instruction paths against the table paths
 * (crc32 instruction vs table for CRC32C, carry-less folding vs zlib for CRC32), and the
 * chunked sums (three chunks at a time) against one chunk at a time.
 */
#include "hpch.h"
#include "hpcn_test.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int test_check_values(void)
{
    static const char check[] = "123456789";

    HPCN_CHECK(hpch_crc32c(0, check, 9) == 0xE3069283u);
    HPCN_CHECK(hpch_crc32c_sw(0, check, 9) == 0xE3069283u);
    HPCN_CHECK(hpch_crc32(0, check, 9) == 0xCBF43926u);
    HPCN_CHECK(hpch_crc32c(0, check, 0) == 0);
    /* continuation: two calls equal one */
    HPCN_CHECK(hpch_crc32c(hpch_crc32c(0, check, 4), check + 4, 5) == 0xE3069283u);
    HPCN_CHECK(hpch_crc32(hpch_crc32(0, check, 4), check + 4, 5) == 0xCBF43926u);
    return 0;
}

static int test_rfc3720_vectors(void)
{
    uint8_t buf[32];

    memset(buf, 0, sizeof(buf));
    HPCN_CHECK(hpch_crc32c(0, buf, 32) == 0x8A9136AAu);
    memset(buf, 0xff, sizeof(buf));
    HPCN_CHECK(hpch_crc32c(0, buf, 32) == 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)i;
    HPCN_CHECK(hpch_crc32c(0, buf, 32) == 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)(31 - i);
    HPCN_CHECK(hpch_crc32c(0, buf, 32) == 0x113FDB5Cu);
    HPCN_CHECK(hpch_crc32c_sw(0, buf, 32) == 0x113FDB5Cu);
    return 0;
}

static int test_hardware_matches_table(void)
{
    uint8_t buf[1100];

    srand(7);
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)rand();
    /* every start alignment and the lengths around word boundaries */
    for (size_t start = 0; start < 8; start++)
        for (size_t len = 0; len + start <= sizeof(buf); len += (len < 40 ? 1 : 37))
            HPCN_CHECK(hpch_crc32c(0, buf + start, len) == hpch_crc32c_sw(0, buf + start, len));
    return 0;
}

static int test_folded_crc32_matches_zlib(void)
{
    uint8_t buf[1100];

    srand(11);
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)rand();
    for (size_t start = 0; start < 8; start++)
        for (size_t len = 0; len + start <= sizeof(buf); len += (len < 200 ? 1 : 29))
            HPCN_CHECK(hpch_crc32(0, buf + start, len) == hpch_crc32_zlib(0, buf + start, len));
    /* continuing from a non-zero CRC through the folded path */
    HPCN_CHECK(hpch_crc32(hpch_crc32(0, buf, 100), buf + 100, 1000) ==
               hpch_crc32_zlib(0, buf, 1100));
    return 0;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* calculate then verify; every sum equals its chunk's CRC; a flipped byte is found. */
static int chunked_round_trip(hpch_crc_type_t type, uint32_t bytes_per_sum, size_t len)
{
    uint8_t *data = malloc(len + 1);
    uint8_t *sums = malloc(hpch_sums_length(bytes_per_sum, len) + 1);
    size_t chunks = hpch_sums_length(bytes_per_sum, len) / 4;
    hpch_mismatch_t mismatch = { 0, 0, 0 };

    HPCN_CHECK(data != NULL && sums != NULL);
    for (size_t i = 0; i < len; i++)
        data[i] = (uint8_t)(i * 31 + 7);
    HPCN_CHECK(hpch_chunked_sums(type, bytes_per_sum, data, len, sums, 0, &mismatch) == 0);
    for (size_t c = 0; c < chunks; c++) {
        size_t off = c * bytes_per_sum;
        size_t n = len - off < bytes_per_sum ? len - off : bytes_per_sum;
        uint32_t want = type == HPCH_CRC32C ? hpch_crc32c_sw(0, data + off, n)
                                            : hpch_crc32_zlib(0, data + off, n);

        HPCN_CHECK(be32(sums + 4 * c) == want);
    }
    HPCN_CHECK(hpch_chunked_sums(type, bytes_per_sum, data, len, sums, 1, &mismatch) == 0);
    if (chunks > 4) {
        size_t bad = 4 * (size_t)bytes_per_sum + 3;

        data[bad] ^= 0x10;
        HPCN_CHECK(hpch_chunked_sums(type, bytes_per_sum, data, len, sums, 1, &mismatch) == 1);
        HPCN_CHECK(mismatch.chunk == 4);
        HPCN_CHECK(mismatch.expected == be32(sums + 16));
        HPCN_CHECK(mismatch.computed != mismatch.expected);
    }
    free(data);
    free(sums);
    return 0;
}

static int test_chunked_sums(void)
{
    static const size_t lengths[] = { 0, 1, 511, 512, 513, 1536, 1537, 3 * 512 * 5 + 100, 65536 };

    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
        HPCN_CHECK(chunked_round_trip(HPCH_CRC32C, 512, lengths[i]) == 0);
        HPCN_CHECK(chunked_round_trip(HPCH_CRC32C, 511, lengths[i]) == 0);
        HPCN_CHECK(chunked_round_trip(HPCH_CRC32, 512, lengths[i]) == 0);
        HPCN_CHECK(chunked_round_trip(HPCH_CRC32C, 7, lengths[i]) == 0);
    }
    return 0;
}

static int test_chunked_rejects_bad_arguments(void)
{
    uint8_t data[4] = { 1, 2, 3, 4 };
    uint8_t sums[4];
    hpch_mismatch_t mismatch;

    HPCN_CHECK(hpch_chunked_sums((hpch_crc_type_t)0, 512, data, 4, sums, 0, &mismatch) == -EINVAL);
    HPCN_CHECK(hpch_chunked_sums((hpch_crc_type_t)3, 512, data, 4, sums, 0, &mismatch) == -EINVAL);
    HPCN_CHECK(hpch_chunked_sums(HPCH_CRC32C, 0, data, 4, sums, 0, &mismatch) == -EINVAL);
    HPCN_CHECK(hpch_sums_length(512, 1025) == 12);
    return 0;
}

int main(void)
{
    int failed = 0;

    printf("crc32c instruction: %s\n", hpch_crc32c_hw_available() ? "yes" : "no");
    failed |= HPCN_RUN(test_check_values);
    failed |= HPCN_RUN(test_rfc3720_vectors);
    failed |= HPCN_RUN(test_hardware_matches_table);
    failed |= HPCN_RUN(test_folded_crc32_matches_zlib);
    failed |= HPCN_RUN(test_chunked_sums);
    failed |= HPCN_RUN(test_chunked_rejects_bad_arguments);
    return failed;
}
