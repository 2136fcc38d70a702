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
#define HPCN_ABI_VERSION 5

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

/*
 * Number of int32 values hpcn_abi_layout writes: sizeof(hpcn_port_t) then each offsetof (13),
 * sizeof(hpcn_wc_t) then each offsetof (9), sizeof(hpcn_cm_event_t) then each offsetof (9).
 */
#define HPCN_ABI_LAYOUT_LEN 31

/*
 * Writes, for hpcn_port_t, hpcn_wc_t and hpcn_cm_event_t in turn, the record's size followed
 * by the offset of each field in declaration order (reserved fields excluded).
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

/* ---- verbs transport (hpcn_verbs.c) ------------------------------------------------------ */

/*
 * One hpcn_verbs_t per Java transport: the rdma_cm event channel, the device context chosen by
 * name (librdmacm's own context, so rdma_cm ids and our PD agree), a protection domain, one
 * completion channel + CQ shared by every QP of the transport, and an eventfd other threads
 * write to wake the event loop. Only the wake call is thread-safe; every other call on a
 * context and its ids comes from one thread (the transport's event loop) or from tests.
 * Memory registration (hpcn_verbs_mr_*) is thread-safe, as ibv_reg_mr is.
 *
 * Handles: rdma_cm ids and memory regions travel as uint64_t (their pointers). 0 is never a
 * valid handle.
 */
typedef struct hpcn_verbs hpcn_verbs_t;

/* Completion status, translated from enum ibv_wc_status. */
typedef enum hpcn_wc_status {
    HPCN_WC_SUCCESS = 0,
    HPCN_WC_FLUSHED = 1, /* IBV_WC_WR_FLUSH_ERR: the QP went to error (teardown), not a failure */
    HPCN_WC_ERROR = 2    /* anything else; vendor_status has the ibv_wc_status for the text */
} hpcn_wc_status_t;

/* Completion opcodes, translated from enum ibv_wc_opcode. */
typedef enum hpcn_wc_opcode {
    HPCN_WC_OP_UNKNOWN = 0,
    HPCN_WC_OP_SEND = 1,
    HPCN_WC_OP_RECV = 2,
    HPCN_WC_OP_RDMA_WRITE = 3,
    HPCN_WC_OP_RDMA_READ = 4,
    HPCN_WC_OP_BIND_MW = 5,
    HPCN_WC_OP_LOCAL_INV = 6
} hpcn_wc_opcode_t;

#define HPCN_WC_FLAG_IMM 1u /* imm holds immediate data (host byte order) */

/* One completion as Java reads it from the pre-allocated direct buffer (ABI: hpcn_abi_layout). */
typedef struct hpcn_wc {
    uint64_t wr_id;
    uint32_t status;        /* hpcn_wc_status_t */
    uint32_t opcode;        /* hpcn_wc_opcode_t; for flushed/failed completions the opcode of
                               the completion is undefined: use wr_id */
    uint32_t byte_len;      /* bytes received (RECV) */
    uint32_t qp_num;
    uint32_t imm;
    uint32_t flags;         /* HPCN_WC_FLAG_* */
    uint32_t vendor_status; /* the raw ibv_wc_status, only for hpcn_verbs_wc_status_text */
    uint32_t reserved;      /* always 0 */
} hpcn_wc_t;

/* rdma_cm events, translated from enum rdma_cm_event_type. */
typedef enum hpcn_cm_event_type {
    HPCN_CM_OTHER = 0, /* multicast, address change, timewait exit: nothing for a transport */
    HPCN_CM_ADDR_RESOLVED,
    HPCN_CM_ADDR_ERROR,
    HPCN_CM_ROUTE_RESOLVED,
    HPCN_CM_ROUTE_ERROR,
    HPCN_CM_CONNECT_REQUEST,
    HPCN_CM_CONNECT_ERROR,
    HPCN_CM_UNREACHABLE,
    HPCN_CM_REJECTED,
    HPCN_CM_ESTABLISHED,
    HPCN_CM_DISCONNECTED,
    HPCN_CM_DEVICE_REMOVAL
} hpcn_cm_event_type_t;

#define HPCN_CM_PRIVATE_DATA_MAX 64

/* One rdma_cm event (ABI: hpcn_abi_layout). The event itself is acked before this returns. */
typedef struct hpcn_cm_event {
    uint64_t id;                  /* the rdma_cm id; for CONNECT_REQUEST a new id to accept */
    uint64_t listen_id;           /* CONNECT_REQUEST: the listening id; otherwise 0 */
    uint32_t type;                /* hpcn_cm_event_type_t */
    int32_t status;               /* rdma_cm_event.status as is (0, -errno or reject reason) */
    uint32_t private_data_len;    /* bytes valid in private_data */
    uint16_t responder_resources; /* CONNECT_REQUEST/ESTABLISHED: the peer's RDMA READ depths */
    uint16_t initiator_depth;
    uint8_t private_data[HPCN_CM_PRIVATE_DATA_MAX];
} hpcn_cm_event_t;

/* hpcn_verbs_wait result bits. */
#define HPCN_WAIT_CQ   1 /* the CQ may have completions: poll it */
#define HPCN_WAIT_CM   2 /* the event channel may have events: poll it */
#define HPCN_WAIT_WAKE 4 /* hpcn_verbs_wake was called */

/* A registered memory region as Java needs it. */
typedef struct hpcn_mr_info {
    uint64_t handle;
    uint64_t addr;
    uint32_t lkey;
    uint32_t rkey;
} hpcn_mr_info_t;

/* One scatter/gather element of a post call. */
typedef struct hpcn_sge {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
} hpcn_sge_t;

#define HPCN_MAX_SGE 2

/*
 * Opens a transport context on the RDMA device called device (calls ibv_fork_init once per
 * process first). cq_entries is the initial CQ size (1 .. device limit). On failure returns
 * -errno and names the failing call in *failed_call (a static string); -ENODEV when no device
 * has that name.
 */
int hpcn_verbs_open(const char *device, int cq_entries, hpcn_verbs_t **ctx_out,
                    const char **failed_call);

/*
 * Releases the CQ, completion channel, PD, eventfd and event channel, in reverse order of
 * creation. -EBUSY (nothing released) while rdma_cm ids or memory regions are still alive.
 */
int hpcn_verbs_close(hpcn_verbs_t *ctx);

/* Live rdma_cm ids and memory regions of ctx (for tests and leak checks). */
int hpcn_verbs_live_ids(const hpcn_verbs_t *ctx);
int hpcn_verbs_live_mrs(const hpcn_verbs_t *ctx);
/* Live memory windows of ctx (hpcn_verbs_mw_alloc'd, not yet deallocated). */
int hpcn_verbs_live_mws(const hpcn_verbs_t *ctx);

/* Current CQ size; grows it to at least entries (ibv_resize_cq). */
int hpcn_verbs_cq_size(const hpcn_verbs_t *ctx);
int hpcn_verbs_cq_resize(hpcn_verbs_t *ctx, int entries);

/* Thread-safe: makes a concurrent or the next hpcn_verbs_wait return HPCN_WAIT_WAKE. */
int hpcn_verbs_wake(hpcn_verbs_t *ctx);

/*
 * The event loop's only blocking call. If the CQ is not armed, arms it (ibv_req_notify_cq) and
 * returns HPCN_WAIT_CQ at once, because completions that arrived before arming raise no event:
 * the caller must drain the CQ once more. Otherwise poll()s the completion channel, the event
 * channel and the wakeup eventfd for up to timeout_ms (-1: no limit); a CQ event is consumed
 * (ibv_get_cq_event), acked in batches, and leaves the CQ unarmed. Returns the HPCN_WAIT_* bits
 * (0 on timeout or EINTR) or -errno.
 */
int hpcn_verbs_wait(hpcn_verbs_t *ctx, int timeout_ms);

/* Drains up to capacity completions into out; returns how many, or -errno. */
int hpcn_verbs_poll_cq(hpcn_verbs_t *ctx, hpcn_wc_t *out, int capacity);

/* Reads up to capacity pending rdma_cm events into out without blocking; count or -errno. */
int hpcn_verbs_poll_cm(hpcn_verbs_t *ctx, hpcn_cm_event_t *out, int capacity);

/*
 * Binds an rdma_cm id to addr (IPv4 or IPv6; port 0 picks one) and listens. Writes the id and
 * the bound port (host order). -errno (and no id) on failure.
 */
int hpcn_verbs_listen(hpcn_verbs_t *ctx, const void *addr, size_t addr_len, int backlog,
                      uint64_t *id_out, int *port_out);

/*
 * Starts an active connection: creates an id and resolves dst (rdma_resolve_addr, timeout_ms).
 * ADDR_RESOLVED or ADDR_ERROR follows on the event channel; then hpcn_verbs_resolve_route,
 * hpcn_verbs_qp_create and hpcn_verbs_connect.
 */
int hpcn_verbs_connect_start(hpcn_verbs_t *ctx, const void *dst, size_t dst_len, int timeout_ms,
                             uint64_t *id_out);
int hpcn_verbs_resolve_route(uint64_t id, int timeout_ms);

/*
 * Creates the RC QP of id on ctx's PD and CQ (rdma_create_qp), every send signalled, up to
 * HPCN_MAX_SGE SGEs per work request. -EXDEV when id is bound to another device than ctx's.
 */
int hpcn_verbs_qp_create(hpcn_verbs_t *ctx, uint64_t id, int send_depth, int recv_depth,
                         uint32_t *qp_num_out);

/* rdma_connect / rdma_accept with private data (at most 56 bytes) and RDMA READ depths (clamped
 * to the device's limits). */
int hpcn_verbs_connect(hpcn_verbs_t *ctx, uint64_t id, const void *private_data, size_t len);
int hpcn_verbs_accept(hpcn_verbs_t *ctx, uint64_t id, const void *private_data, size_t len,
                      int responder_resources, int initiator_depth);
int hpcn_verbs_reject(uint64_t id);

/* rdma_notify(IBV_EVENT_COMM_EST) on the passive side: a message arrived on a connection whose
 * ESTABLISHED event has not (the peer's RTU may be lost, as UD MADs can be over Soft-RoCE); the
 * CM then establishes it instead of waiting for a retransmitted REP. 0, or -errno (harmless when
 * the connection was already established). */
int hpcn_verbs_notify_established(uint64_t id);

/* rdma_disconnect: moves the QP to error (outstanding work requests flush) and tells the peer. */
int hpcn_verbs_disconnect(uint64_t id);

/* Destroys id's QP (if any), then the id. */
int hpcn_verbs_destroy_id(hpcn_verbs_t *ctx, uint64_t id);

/* The bound or connected local port of id (host order), or -errno. */
int hpcn_verbs_local_port(uint64_t id);

/*
 * The peer's address of a connected (or connect-requesting) id: its IPv4 (4 bytes) or IPv6
 * (16 bytes) address in network order, then the port in network order (2 bytes). Returns the
 * number of bytes written (6 or 18), -ENOTCONN without a peer, -ENOSPC if out_len is short.
 */
int hpcn_verbs_peer_address(uint64_t id, size_t out_len, uint8_t *out);

/*
 * What a registration grants besides local write (which every registration has). Pool slabs
 * are registered with HPCN_ACCESS_WINDOWS only: their rkey opens nothing to a peer, remote
 * access goes through a memory window bound to exactly the bytes of one transfer. A region an
 * application exposes gets a registration of its own with remote read and write.
 */
#define HPCN_ACCESS_WINDOWS      1u /* memory windows may be bound on it (IBV_ACCESS_MW_BIND) */
#define HPCN_ACCESS_REMOTE_READ  2u
#define HPCN_ACCESS_REMOTE_WRITE 4u

/* ibv_reg_mr with LOCAL_WRITE and the HPCN_ACCESS_* bits of access; -EINVAL for other bits. */
int hpcn_verbs_mr_reg(hpcn_verbs_t *ctx, void *addr, size_t length, uint32_t access,
                      hpcn_mr_info_t *info_out);
int hpcn_verbs_mr_dereg(hpcn_verbs_t *ctx, uint64_t handle);

/*
 * 1 when the device of ctx has type 2 memory windows (IBV_DEVICE_MEM_WINDOW_TYPE_2A or 2B),
 * which the transport needs to scope rendezvous reads; 0 otherwise.
 */
int hpcn_verbs_has_windows(const hpcn_verbs_t *ctx);

/*
 * A type 2 memory window on ctx's PD (ibv_alloc_mw), unbound. Writes its handle; 0 or -errno.
 * Deallocating a bound window invalidates it. Windows count as registrations for
 * hpcn_verbs_close (-EBUSY while any is alive); slabs they are bound to cannot be deregistered.
 */
int hpcn_verbs_mw_alloc(hpcn_verbs_t *ctx, uint64_t *handle_out);
int hpcn_verbs_mw_dealloc(hpcn_verbs_t *ctx, uint64_t handle);

/*
 * Data path. Posts a signalled IBV_WR_BIND_MW on id's QP: window mw gets remote access
 * (HPCN_ACCESS_REMOTE_READ/WRITE bits) to exactly [addr, addr + length) of registration mr,
 * usable only through this QP (type 2). The window's key byte is advanced first, so no key it
 * had before opens it again. Returns the new rkey (0 .. 2^32-1) or -errno; the bind takes
 * effect before any later work request of this QP executes.
 */
int64_t hpcn_verbs_post_bind(uint64_t id, uint64_t wr_id, uint64_t mw, uint64_t mr,
                             uint64_t addr, uint64_t length, uint32_t access);

/* Posts a signalled IBV_WR_LOCAL_INV of rkey (a window bound on this QP); 0 or -errno. */
int hpcn_verbs_post_local_inv(uint64_t id, uint64_t wr_id, uint32_t rkey);

/* Data path: 0 or -errno (-EINVAL for bad arguments, else what ibv_post_* returned). */
int hpcn_verbs_post_send(uint64_t id, uint64_t wr_id, const hpcn_sge_t *sge, int num_sge);
int hpcn_verbs_post_send_imm(uint64_t id, uint64_t wr_id, const hpcn_sge_t *sge, int num_sge,
                             uint32_t imm);
int hpcn_verbs_post_recv(uint64_t id, uint64_t wr_id, const hpcn_sge_t *sge, int num_sge);
/* -EINVAL as well when [remote_addr, remote_addr + length) wraps around. */
int hpcn_verbs_post_rdma(uint64_t id, uint64_t wr_id, int is_read, const hpcn_sge_t *local,
                         uint64_t remote_addr, uint32_t rkey);

/* ibv_wc_status_str of hpcn_wc_t.vendor_status; rdma_event_str-like names for our types. */
const char *hpcn_verbs_wc_status_text(uint32_t vendor_status);
const char *hpcn_cm_event_name(hpcn_cm_event_type_t type);

/* Translations from libibverbs/librdmacm enums (int so this header needs neither). */
hpcn_wc_status_t hpcn_verbs_wc_status_from_ibv(int ibv_wc_status);
hpcn_wc_opcode_t hpcn_verbs_wc_opcode_from_ibv(int ibv_wc_opcode);
hpcn_cm_event_type_t hpcn_verbs_cm_type_from_rdma(int rdma_cm_event_type);

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

/* ---- liblustreapi probe and layout calls ---------------------------------------------- */

typedef enum hpcn_lustre_status {
    HPCN_LUSTRE_AVAILABLE = 0, /* opened and every symbol resolved */
    HPCN_LUSTRE_NOT_FOUND,     /* dlopen failed */
    HPCN_LUSTRE_INCOMPLETE     /* opened, but at least one symbol is missing */
} hpcn_lustre_status_t;

#define HPCN_LUSTRE_SYMBOL_COUNT 9
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

/*
 * Closes the process-wide liblustreapi handle, if any (JNI_OnUnload, tests). Must not run
 * while another thread is inside hpcn_lustre_layout_get or hpcn_lustre_file_create.
 */
void hpcn_lustre_unload(void);

/*
 * The layout of path (its first component, for composite/PFL files): stripe size and count,
 * and the OST index of the first min(stripe count, capacity) stripes in osts. A stripe size or
 * count liblustreapi reports as a sentinel (LLAPI_LAYOUT_DEFAULT, _WIDE, ...: anything at or
 * above 2^60) comes back as 0, "unknown". *osts_known is how many leading stripes have an OST
 * (0 for a directory or a file whose objects are not allocated yet).
 * Returns 0, -ENOSYS when no complete liblustreapi is loaded (hpcn_lustre_probe first),
 * -EINVAL for bad arguments, or the errno liblustreapi left (ENOTTY/ENODATA: not on Lustre,
 * ENOENT: no such path, ...). Outputs are written only on success.
 */
int hpcn_lustre_layout_get(const char *path, uint64_t *osts, uint32_t capacity,
                           uint64_t *stripe_size_out, uint64_t *stripe_count_out,
                           uint32_t *osts_known_out);

/*
 * Creates path (which must not exist) with the given stripe size and count through
 * llapi_layout_file_create; 0 for either keeps the directory's default. The file is closed
 * again: writers reopen it, and the layout stays with the inode. Returns 0, -ENOSYS (no
 * liblustreapi), -EINVAL, or the errno liblustreapi left (EEXIST, EINVAL for a stripe size
 * that is not a multiple of 64 KiB, ENOTTY: the directory is not on Lustre, ...).
 */
int hpcn_lustre_file_create(const char *path, uint64_t stripe_size, uint64_t stripe_count,
                            int mode);

/* ---- memory locking and page-cache advice (the DataNode's, without libhadoop) ---------- */

/*
 * mlock(2)/munlock(2) over [addr, addr + len). Returns 0 or -errno (ENOMEM: over
 * RLIMIT_MEMLOCK; EPERM: no CAP_IPC_LOCK and a zero limit; EINVAL: bad range).
 */
int hpcn_mlock(const void *addr, size_t len);
int hpcn_munlock(const void *addr, size_t len);

/*
 * The bytes this process may lock: the soft RLIMIT_MEMLOCK, or UINT64_MAX when it is unlimited
 * or the process holds CAP_IPC_LOCK (root, usually), which mlock(2) then does not check.
 * Returns 0 or -errno.
 */
int hpcn_memlock_limit(uint64_t *limit_out);

/* The page size in bytes (sysconf(_SC_PAGESIZE)), or -errno. */
long hpcn_page_size(void);

/*
 * posix_fadvise(2) on fd for [offset, offset + len) (len 0: to the end). advice is one of
 * POSIX_FADV_* as Linux numbers them (0 NORMAL .. 5 NOREUSE, which Hadoop's NativeIO uses
 * too). Returns 0 or -errno (EBADF, EINVAL for an unknown advice, ESPIPE for a pipe).
 */
int hpcn_fadvise(int fd, uint64_t offset, uint64_t len, int advice);

#ifdef __cplusplus
}
#endif

#endif /* HPCN_H */
