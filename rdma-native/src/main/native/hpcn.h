/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * hpcn: the C core of libhpcnative.so. Everything here has hidden visibility; only the JNI
 * entry points in hpcn_jni.c are exported. Conventions (docs: /work/shared/STYLE.md):
 *   - every function returns 0 (or a count) on success and -errno on failure;
 *   - outputs come last and are written only on success;
 *   - C never prints or logs: failures travel to Java as -errno and become NativeIoException.
 */
#ifndef HPCN_H
#define HPCN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version and ABI handshake --------------------------------------------------------- */

/*
 * Bumped whenever a record shared with Java (see hpcn_abi_layout) or a native method signature
 * changes. Java refuses to use a library whose ABI version differs from its own constant.
 */
#define HPCN_ABI_VERSION 1

#ifndef HPCN_VERSION
#define HPCN_VERSION "0.1.0"
#endif

int hpcn_abi_version(void);
const char *hpcn_version(void);

/* ---- device probe ---------------------------------------------------------------------- */

#define HPCN_NAME_MAX   64 /* == IBV_SYSFS_NAME_MAX; checked in hpcn_device.c */
#define HPCN_FW_VER_MAX 64 /* == sizeof(ibv_device_attr.fw_ver) */
#define HPCN_GID_SCAN_MAX 256

/* Port states, translated from enum ibv_port_state so Java never sees IBV_* values. */
typedef enum hpcn_port_state {
    HPCN_PORT_UNKNOWN = 0,
    HPCN_PORT_NOP,
    HPCN_PORT_DOWN,
    HPCN_PORT_INIT,
    HPCN_PORT_ARMED,
    HPCN_PORT_ACTIVE,
    HPCN_PORT_ACTIVE_DEFER
} hpcn_port_state_t;

typedef enum hpcn_link_layer {
    HPCN_LINK_UNKNOWN = 0,
    HPCN_LINK_INFINIBAND,
    HPCN_LINK_ROCE
} hpcn_link_layer_t;

/* The verbs call a device or port record failed in (hpcn_port_t.failed_call). */
typedef enum hpcn_call {
    HPCN_CALL_NONE = 0,
    HPCN_CALL_IBV_OPEN_DEVICE,
    HPCN_CALL_IBV_QUERY_DEVICE,
    HPCN_CALL_IBV_QUERY_PORT
} hpcn_call_t;

/*
 * One record per (device, port). A device that cannot be opened or queried yields a single
 * record with port_num == 0 and err_no/failed_call set, so one broken HCA does not hide the
 * others. The layout is part of the ABI (hpcn_abi_layout): fixed-width fields, no pointers,
 * so a later issue can hand an array of these to Java as off-heap memory.
 */
typedef struct hpcn_port {
    uint64_t node_guid;     /* host byte order */
    uint32_t port_num;      /* 1-based; 0 marks a device-level failure record */
    uint32_t phys_port_cnt;
    uint32_t state;         /* hpcn_port_state_t */
    uint32_t link_layer;    /* hpcn_link_layer_t */
    uint32_t active_mtu;    /* bytes: 256 .. 4096, 0 if unknown */
    uint32_t lid;
    uint32_t gid_count;     /* non-zero GID table entries, at most HPCN_GID_SCAN_MAX */
    int32_t err_no;         /* positive errno of failed_call, 0 if the record is complete */
    uint32_t failed_call;   /* hpcn_call_t */
    uint32_t reserved;      /* keeps the strings 8-byte aligned; always 0 */
    char device_name[HPCN_NAME_MAX];
    char fw_ver[HPCN_FW_VER_MAX];
} hpcn_port_t;

/* Number of int32 values hpcn_abi_layout writes: sizeof(hpcn_port_t) then each offsetof. */
#define HPCN_ABI_LAYOUT_LEN 13

/*
 * Writes sizeof(hpcn_port_t) followed by the offset of each field in declaration order.
 * Returns -EINVAL for NULL pointers, -ENOSPC when capacity < HPCN_ABI_LAYOUT_LEN.
 */
int hpcn_abi_layout(size_t capacity, int32_t *layout, size_t *count_out);

/*
 * Enumerates every RDMA device and port. On success *ports_out is a malloc'd array to be
 * released with hpcn_device_probe_free (NULL when there are no devices) and *count_out its
 * length. A host without kernel RDMA support (ibv_get_device_list fails with ENOSYS) has no
 * devices, which is success. Any other ibv_get_device_list failure returns -errno.
 */
int hpcn_device_probe(hpcn_port_t **ports_out, size_t *count_out);
void hpcn_device_probe_free(hpcn_port_t *ports);

const char *hpcn_port_state_name(hpcn_port_state_t state);
const char *hpcn_link_layer_name(hpcn_link_layer_t link_layer);
const char *hpcn_call_name(hpcn_call_t call);

/* ---- text handed to Java ---------------------------------------------------------------- */

/* Large enough for any hpcn_port_format record. */
#define HPCN_PORT_RECORD_MAX 1024

/*
 * Copies text into out (out_len >= 1) as printable ASCII: tab, CR and LF become spaces, other
 * control or non-ASCII bytes '?'. JNI's NewStringUTF needs modified UTF-8, and the record
 * formats below use tabs as separators. text and out may be the same buffer.
 */
void hpcn_printable_copy(const char *text, size_t out_len, char *out);

/* strerror(err) as printable ASCII, thread-safe. */
void hpcn_errno_describe(int err, size_t out_len, char *out);

/*
 * Formats one port record as the 12 tab-separated fields Java's RdmaDevices.fromRecords parses:
 *   device, port (0 = device-level failure), link layer ("InfiniBand" | "RoCE" | "unknown"),
 *   state ("ACTIVE", "DOWN", ...), active MTU in bytes, LID, GID count,
 *   node GUID (16 lowercase hex digits), firmware version, errno (0 = ok),
 *   failed call ("" | "ibv_open_device" | "ibv_query_device" | "ibv_query_port"),
 *   strerror(errno) ("" when errno is 0).
 * Returns -EINVAL for NULL arguments, -ENOSPC if the record did not fit in out_len
 * (HPCN_PORT_RECORD_MAX always fits).
 */
int hpcn_port_format(const hpcn_port_t *port, size_t out_len, char *record);

/* ---- liblustreapi probe ---------------------------------------------------------------- */

typedef enum hpcn_lustre_status {
    HPCN_LUSTRE_AVAILABLE = 0, /* opened and every symbol resolved */
    HPCN_LUSTRE_NOT_FOUND,     /* dlopen failed */
    HPCN_LUSTRE_INCOMPLETE     /* opened, but at least one symbol is missing */
} hpcn_lustre_status_t;

#define HPCN_LUSTRE_SYMBOL_COUNT 5
#define HPCN_LUSTRE_DETAIL_MAX 512

typedef struct hpcn_lustre_probe {
    hpcn_lustre_status_t status;
    uint32_t missing;                    /* bit i: hpcn_lustre_symbol_name(i) did not resolve */
    char detail[HPCN_LUSTRE_DETAIL_MAX]; /* dlerror() of the failed dlopen or first dlsym */
} hpcn_lustre_probe_t;

/*
 * dlopens library (a soname or a path) and resolves the llapi_layout_* symbols the layout
 * API needs. "Not found" and "incomplete" are results, not errors: the return value is 0 for
 * any completed probe and -EINVAL only for bad arguments. A complete library is kept open in
 * a process-wide slot (the first one wins; later complete probes close their own handle).
 */
int hpcn_lustre_probe(const char *library, hpcn_lustre_probe_t *result_out);

/* Name of symbol index (0 .. HPCN_LUSTRE_SYMBOL_COUNT - 1), NULL when out of range. */
const char *hpcn_lustre_symbol_name(unsigned index);

/* 1 if a complete liblustreapi is held in the process-wide slot, 0 otherwise. */
int hpcn_lustre_is_loaded(void);

/* Closes the process-wide liblustreapi handle, if any (JNI_OnUnload, tests). */
void hpcn_lustre_unload(void);

#ifdef __cplusplus
}
#endif

#endif /* HPCN_H */
