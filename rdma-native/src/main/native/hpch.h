/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * hpch: the JNI-free core of libhadoop.so, our implementation of the native library Apache
 * Hadoop loads with System.loadLibrary("hadoop"). Same conventions as hpcn.h: hidden symbols,
 * 0 or -errno returns, outputs last and written only on success, no logging.
 */
#ifndef HPCH_H
#define HPCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Checksum types, numbered as org.apache.hadoop.util.DataChecksum's CHECKSUM_* ids. */
typedef enum hpch_crc_type {
    HPCH_CRC32 = 1,  /* gzip polynomial 0x04C11DB7 (java.util.zip.CRC32) */
    HPCH_CRC32C = 2  /* Castagnoli polynomial 0x1EDC6F41 (java.util.zip.CRC32C) */
} hpch_crc_type_t;

/*
 * CRC32C of len bytes, continuing from crc (the finished value of the bytes before, 0 to
 * start), as java.util.zip.CRC32C would return it. Uses the SSE 4.2 crc32 instruction when
 * the CPU has it (checked once, at first use), a table otherwise.
 */
uint32_t hpch_crc32c(uint32_t crc, const void *buf, size_t len);

/* The table version, always; for tests that compare both paths. */
uint32_t hpch_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* 1 when hpch_crc32c uses the CPU's instruction. */
int hpch_crc32c_hw_available(void);

/*
 * CRC32 (java.util.zip.CRC32), same continuation rule: carry-less multiplication when the CPU
 * has PCLMULQDQ, zlib's crc32 for the rest.
 */
uint32_t hpch_crc32(uint32_t crc, const void *buf, size_t len);

/* zlib's crc32 alone; for tests that compare both paths. */
uint32_t hpch_crc32_zlib(uint32_t crc, const void *buf, size_t len);

/* Where hpch_chunked_sums found the first chunk whose stored sum differs. */
typedef struct hpch_mismatch {
    size_t chunk;      /* 0-based chunk index */
    uint32_t expected; /* the stored sum */
    uint32_t computed; /* the sum of the data */
} hpch_mismatch_t;

/* Bytes of sums that data_len bytes of data need: 4 per chunk, the last chunk may be short. */
size_t hpch_sums_length(uint32_t bytes_per_sum, size_t data_len);

/*
 * Computes one big-endian 4-byte sum per bytes_per_sum bytes of data into sums (verify == 0),
 * or checks the sums already there (verify != 0). sums holds hpch_sums_length() bytes.
 * Returns 0; 1 on a mismatch (verify only; *mismatch names the first one); -EINVAL for an
 * unknown type or bytes_per_sum == 0.
 */
int hpch_chunked_sums(hpch_crc_type_t type, uint32_t bytes_per_sum, const uint8_t *data,
                      size_t data_len, uint8_t *sums, int verify, hpch_mismatch_t *mismatch);

#ifdef __cplusplus
}
#endif

#endif /* HPCH_H */
