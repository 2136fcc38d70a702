/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * Chunked CRC32 / CRC32C for NativeCrc32 (hpch.h). HDFS checksums every 512 bytes by default
 * and hands whole packets (64 KiB) to one call, so the CRC32C path computes three chunks at
 * once: the crc32 instruction has a latency of three cycles and a throughput of one per
 * cycle, so three independent chains keep it busy where one chain waits.
 * CRC32 has no instruction of its own: runs of 64 bytes and more are folded with carry-less
 * multiplication (PCLMULQDQ; Intel's white paper "Fast CRC Computation for Generic Polynomials
 * Using PCLMULQDQ Instruction", 2009), the rest goes through zlib's crc32. zlib alone runs at
 * about a third of the JDK's CRC32 intrinsic, which is the speed Hadoop's Java path has.
 */
#include "hpch.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <zlib.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HPCH_HAVE_SSE42 1
#include <nmmintrin.h>
#include <smmintrin.h>
#include <wmmintrin.h>
#endif

#define CRC32C_REFLECTED_POLY 0x82F63B78u

static uint32_t crc32c_table[8][256];
static int crc32c_hw;
static int crc32_clmul;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* Slice-by-8 tables: table[k][b] is the CRC of byte b followed by k zero bytes. */
static void crc_init(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t crc = b;

        for (int bit = 0; bit < 8; bit++)
            crc = (crc & 1) ? (crc >> 1) ^ CRC32C_REFLECTED_POLY : crc >> 1;
        crc32c_table[0][b] = crc;
    }
    for (uint32_t b = 0; b < 256; b++)
        for (int k = 1; k < 8; k++)
            crc32c_table[k][b] = (crc32c_table[k - 1][b] >> 8) ^
                                 crc32c_table[0][crc32c_table[k - 1][b] & 0xff];
#ifdef HPCH_HAVE_SSE42
    __builtin_cpu_init();
    crc32c_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
    crc32_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1") ? 1 : 0;
#endif
}

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t crc32c_sw_raw(uint32_t crc, const uint8_t *p, size_t len)
{
    while (len >= 8) {
        uint32_t lo = load_le32(p) ^ crc;
        uint32_t hi = load_le32(p + 4);

        crc = crc32c_table[7][lo & 0xff] ^ crc32c_table[6][(lo >> 8) & 0xff] ^
              crc32c_table[5][(lo >> 16) & 0xff] ^ crc32c_table[4][lo >> 24] ^
              crc32c_table[3][hi & 0xff] ^ crc32c_table[2][(hi >> 8) & 0xff] ^
              crc32c_table[1][(hi >> 16) & 0xff] ^ crc32c_table[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len-- > 0)
        crc = (crc >> 8) ^ crc32c_table[0][(crc ^ *p++) & 0xff];
    return crc;
}

#ifdef HPCH_HAVE_SSE42
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw_raw(uint32_t crc, const uint8_t *p, size_t len)
{
    uint64_t c = crc;

    for (; len >= 8; p += 8, len -= 8) {
        uint64_t word;

        memcpy(&word, p, sizeof(word)); /* x86 loads unaligned words at full speed */
        c = _mm_crc32_u64(c, word);
    }
    for (; len > 0; len--)
        c = _mm_crc32_u8((uint32_t)c, *p++);
    return (uint32_t)c;
}

/* Three chunks of len bytes each, one crc32 chain per chunk, interleaved. */
__attribute__((target("sse4.2")))
static void crc32c_hw_three(const uint8_t *p, size_t len, uint32_t out[3])
{
    const uint8_t *p1 = p + len;
    const uint8_t *p2 = p + 2 * len;
    uint64_t c0 = 0xffffffffu, c1 = 0xffffffffu, c2 = 0xffffffffu;
    size_t i = 0;

    for (; i + 8 <= len; i += 8) {
        uint64_t w0, w1, w2;

        memcpy(&w0, p + i, 8);
        memcpy(&w1, p1 + i, 8);
        memcpy(&w2, p2 + i, 8);
        c0 = _mm_crc32_u64(c0, w0);
        c1 = _mm_crc32_u64(c1, w1);
        c2 = _mm_crc32_u64(c2, w2);
    }
    for (; i < len; i++) {
        c0 = _mm_crc32_u8((uint32_t)c0, p[i]);
        c1 = _mm_crc32_u8((uint32_t)c1, p1[i]);
        c2 = _mm_crc32_u8((uint32_t)c2, p2[i]);
    }
    out[0] = ~(uint32_t)c0;
    out[1] = ~(uint32_t)c1;
    out[2] = ~(uint32_t)c2;
}

/*
 * Folding constants for the reflected gzip polynomial P = 0x1DB710641 (bit-reflected
 * x^n mod P, shifted by one for reflection): x^(4*128+32) / x^(4*128-32) fold 512 bits ahead,
 * x^(128+32) / x^(128-32) fold 128 bits ahead, x^64 reduces 64 bits to 32, and mu =
 * x^64 / P (reflected) drives the Barrett reduction.
 */
#define FOLD4_LO 0x154442bd4ull
#define FOLD4_HI 0x1c6e41596ull
#define FOLD1_LO 0x1751997d0ull
#define FOLD1_HI 0x0ccaa009eull
#define FOLD64 0x163cd6124ull
#define POLY 0x1db710641ull
#define MU 0x1f7011641ull

/* a's 128 bits folded forward over the distance k encodes, added to the next block. */
__attribute__((target("pclmul,sse4.1")))
static __m128i fold(__m128i a, __m128i k, __m128i next)
{
    __m128i lo = _mm_clmulepi64_si128(a, k, 0x00);
    __m128i hi = _mm_clmulepi64_si128(a, k, 0x11);

    return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

/*
 * The running (uninverted) CRC32 state after len bytes; len >= 64 and a multiple of 16.
 */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc32_clmul_raw(uint32_t state, const uint8_t *p, size_t len)
{
    const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
    __m128i k = _mm_set_epi64x((long long)FOLD4_HI, (long long)FOLD4_LO);
    __m128i x0 = _mm_loadu_si128((const __m128i *)p);
    __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 48));
    __m128i t;

    x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)state));
    for (p += 64, len -= 64; len >= 64; p += 64, len -= 64) {
        x0 = fold(x0, k, _mm_loadu_si128((const __m128i *)p));
        x1 = fold(x1, k, _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = fold(x2, k, _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = fold(x3, k, _mm_loadu_si128((const __m128i *)(p + 48)));
    }

    /* four lanes into one, then the 16-byte blocks that remain */
    k = _mm_set_epi64x((long long)FOLD1_HI, (long long)FOLD1_LO);
    x0 = fold(x0, k, x1);
    x0 = fold(x0, k, x2);
    x0 = fold(x0, k, x3);
    for (; len >= 16; p += 16, len -= 16)
        x0 = fold(x0, k, _mm_loadu_si128((const __m128i *)p));

    /* 128 bits to 64: the low half times x^(128-32) added to the high half */
    t = _mm_clmulepi64_si128(x0, k, 0x10);
    x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), t);
    /* 64 bits to 32 */
    k = _mm_set_epi64x(0, (long long)FOLD64);
    t = _mm_srli_si128(x0, 4);
    x0 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x0, low32), k, 0x00), t);
    /* Barrett: q = (x mod x^32) * mu, remainder = x + (q mod x^32) * P */
    k = _mm_set_epi64x((long long)MU, (long long)POLY);
    t = _mm_clmulepi64_si128(_mm_and_si128(x0, low32), k, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), k, 0x00);
    x0 = _mm_xor_si128(x0, t);
    return (uint32_t)_mm_extract_epi32(x0, 1);
}
#endif

int hpch_crc32c_hw_available(void)
{
    pthread_once(&crc_once, crc_init);
    return crc32c_hw;
}

uint32_t hpch_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&crc_once, crc_init);
    return ~crc32c_sw_raw(~crc, buf, len);
}

uint32_t hpch_crc32c(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&crc_once, crc_init);
#ifdef HPCH_HAVE_SSE42
    if (crc32c_hw)
        return ~crc32c_hw_raw(~crc, buf, len);
#endif
    return ~crc32c_sw_raw(~crc, buf, len);
}

uint32_t hpch_crc32(uint32_t crc, const void *buf, size_t len)
{
#ifdef HPCH_HAVE_SSE42
    pthread_once(&crc_once, crc_init);
    if (crc32_clmul && len >= 64) {
        size_t folded = len & ~(size_t)15;

        crc = ~crc32_clmul_raw(~crc, buf, folded);
        buf = (const uint8_t *)buf + folded;
        len -= folded;
    }
#endif
    return (uint32_t)crc32_z(crc, buf, len);
}

uint32_t hpch_crc32_zlib(uint32_t crc, const void *buf, size_t len)
{
    return (uint32_t)crc32_z(crc, buf, len);
}

size_t hpch_sums_length(uint32_t bytes_per_sum, size_t data_len)
{
    if (bytes_per_sum == 0)
        return 0;
    return (data_len / bytes_per_sum + (data_len % bytes_per_sum != 0)) * 4;
}

static void store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Stores or checks one chunk's sum; 1 (and *mismatch) when a checked sum differs. */
static int put_sum(uint8_t *sums, size_t chunk, uint32_t computed, int verify,
                   hpch_mismatch_t *mismatch)
{
    uint8_t *slot = sums + 4 * chunk;

    if (!verify) {
        store_be32(slot, computed);
        return 0;
    }
    if (load_be32(slot) == computed)
        return 0;
    mismatch->chunk = chunk;
    mismatch->expected = load_be32(slot);
    mismatch->computed = computed;
    return 1;
}

int hpch_chunked_sums(hpch_crc_type_t type, uint32_t bytes_per_sum, const uint8_t *data,
                      size_t data_len, uint8_t *sums, int verify, hpch_mismatch_t *mismatch)
{
    hpch_mismatch_t found;
    size_t offset = 0;
    size_t chunk = 0;

    if (bytes_per_sum == 0 || (type != HPCH_CRC32 && type != HPCH_CRC32C))
        return -EINVAL;
    pthread_once(&crc_once, crc_init);

    while (offset < data_len) {
        size_t n = data_len - offset;
        uint32_t computed;

#ifdef HPCH_HAVE_SSE42
        if (type == HPCH_CRC32C && crc32c_hw && n >= 3 * (size_t)bytes_per_sum) {
            uint32_t three[3];

            crc32c_hw_three(data + offset, bytes_per_sum, three);
            for (int k = 0; k < 3; k++)
                if (put_sum(sums, chunk + (size_t)k, three[k], verify, &found))
                    goto mismatched;
            offset += 3 * (size_t)bytes_per_sum;
            chunk += 3;
            continue;
        }
#endif
        if (n > bytes_per_sum)
            n = bytes_per_sum;
        computed = type == HPCH_CRC32C ? hpch_crc32c(0, data + offset, n)
                                       : hpch_crc32(0, data + offset, n);
        if (put_sum(sums, chunk, computed, verify, &found))
            goto mismatched;
        offset += n;
        chunk++;
    }
    return 0;

mismatched:
    *mismatch = found;
    return 1;
}
