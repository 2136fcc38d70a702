/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * The verbs transport's native half: one context per Java transport (rdma_cm event channel,
 * device context, PD, completion channel + CQ, wakeup eventfd), RC QPs made by rdma_cm,
 * whole-slab memory registration, type 2 memory windows that scope what a peer may read to one
 * transfer, the posts the protocol needs, and completions and cm
 * events copied into fixed-size records that Java reads off-heap.
 *
 * Why librdmacm's device context: rdma_create_qp requires the PD to belong to the very
 * ibv_context the cm id is bound to, and librdmacm opens its own contexts. Taking the context
 * from rdma_get_devices() makes the PD, the CQ and every id of this transport agree.
 *
 * Threading: only hpcn_verbs_wake, hpcn_verbs_mr_* and hpcn_verbs_mw_* may be called concurrently with the
 * event loop; everything else belongs to the loop's thread (see hpcn.h), so no locks here.
 */
#include "hpcn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* CQ events are acknowledged in batches: ibv_ack_cq_events takes a mutex per call. */
#define CQ_EVENT_ACK_BATCH 64
/* Completions copied per ibv_poll_cq call. */
#define POLL_BATCH 32
/* RDMA READ depth asked for when connecting; clamped to the device's limits. */
#define RD_ATOMIC_WANTED 16
/* rdma_connect allows 56 bytes of private data on RC over IB CM. */
#define CONNECT_PRIVATE_DATA_MAX 56

struct hpcn_verbs {
    struct rdma_event_channel *cm_channel;
    struct ibv_context *verbs;            /* librdmacm's; not ours to close */
    struct ibv_pd *pd;
    struct ibv_comp_channel *comp_channel;
    struct ibv_cq *cq;
    int wake_fd;
    int cq_armed;
    unsigned int unacked_cq_events;
    int max_qp_rd_atom;
    int max_qp_init_rd_atom;
    int max_cqe;
    int has_windows;                      /* type 2 memory windows (2A or 2B) */
    int live_ids;                         /* event-loop thread only */
    atomic_int live_mrs;                  /* any thread */
    atomic_int live_mws;                  /* any thread */
};

_Static_assert(sizeof(hpcn_wc_t) == 40, "hpcn_wc_t is part of the ABI");
_Static_assert(sizeof(hpcn_cm_event_t) == 96, "hpcn_cm_event_t is part of the ABI");
_Static_assert(sizeof(uint64_t) >= sizeof(uintptr_t), "handles are pointers in a uint64_t");

static pthread_once_t fork_init_once = PTHREAD_ONCE_INIT;
static int fork_init_rc;

static void fork_init(void)
{
    /* Hadoop daemons fork shells; without this a child touching registered pages breaks DMA
     * on kernels before copy-on-fork pinning (5.13). It must precede every registration. */
    fork_init_rc = ibv_fork_init();
}

static inline struct rdma_cm_id *cm_id(uint64_t id)
{
    return (struct rdma_cm_id *)(uintptr_t)id;
}

static int errno_or(int fallback)
{
    return errno != 0 ? errno : fallback;
}

static int set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return -errno_or(EIO);
    return 0;
}

/* librdmacm's context for the device called name, or NULL with errno set. */
static struct ibv_context *find_device(const char *name)
{
    struct ibv_context **list;
    struct ibv_context *found = NULL;
    int count = 0;
    int i;

    errno = 0;
    list = rdma_get_devices(&count);
    if (list == NULL) {
        errno = errno_or(ENODEV);
        return NULL;
    }
    for (i = 0; i < count; i++) {
        if (strcmp(ibv_get_device_name(list[i]->device), name) == 0) {
            found = list[i];
            break;
        }
    }
    rdma_free_devices(list);
    if (found == NULL)
        errno = ENODEV;
    return found;
}

int hpcn_verbs_open(const char *device, int cq_entries, hpcn_verbs_t **ctx_out,
                    const char **failed_call)
{
    struct ibv_device_attr attr;
    hpcn_verbs_t *ctx;
    const char *call;
    int err;

    if (device == NULL || device[0] == '\0' || cq_entries <= 0 || ctx_out == NULL ||
        failed_call == NULL)
        return -EINVAL;

    pthread_once(&fork_init_once, fork_init);
    if (fork_init_rc != 0) {
        *failed_call = "ibv_fork_init";
        return -fork_init_rc;
    }

    ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        *failed_call = "calloc";
        return -ENOMEM;
    }
    ctx->wake_fd = -1;
    atomic_init(&ctx->live_mrs, 0);
    atomic_init(&ctx->live_mws, 0);

    errno = 0;
    call = "rdma_create_event_channel";
    ctx->cm_channel = rdma_create_event_channel();
    if (ctx->cm_channel == NULL) {
        err = errno_or(ENODEV);
        goto free_ctx;
    }
    err = -set_nonblocking(ctx->cm_channel->fd);
    if (err != 0) {
        call = "fcntl(rdma_cm channel)";
        goto destroy_cm_channel;
    }

    call = "rdma_get_devices";
    ctx->verbs = find_device(device);
    if (ctx->verbs == NULL) {
        err = errno;
        goto destroy_cm_channel;
    }
    call = "ibv_query_device";
    err = ibv_query_device(ctx->verbs, &attr);
    if (err != 0)
        goto destroy_cm_channel;
    ctx->max_qp_rd_atom = attr.max_qp_rd_atom;
    ctx->max_qp_init_rd_atom = attr.max_qp_init_rd_atom;
    ctx->max_cqe = attr.max_cqe;
    ctx->has_windows = (attr.device_cap_flags &
                        (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)) != 0;
    if (cq_entries > ctx->max_cqe) {
        call = "ibv_create_cq";
        err = EINVAL;
        goto destroy_cm_channel;
    }

    errno = 0;
    call = "ibv_alloc_pd";
    ctx->pd = ibv_alloc_pd(ctx->verbs);
    if (ctx->pd == NULL) {
        err = errno_or(ENOMEM);
        goto destroy_cm_channel;
    }

    errno = 0;
    call = "ibv_create_comp_channel";
    ctx->comp_channel = ibv_create_comp_channel(ctx->verbs);
    if (ctx->comp_channel == NULL) {
        err = errno_or(ENOMEM);
        goto dealloc_pd;
    }
    err = -set_nonblocking(ctx->comp_channel->fd);
    if (err != 0) {
        call = "fcntl(completion channel)";
        goto destroy_comp_channel;
    }

    errno = 0;
    call = "ibv_create_cq";
    ctx->cq = ibv_create_cq(ctx->verbs, cq_entries, ctx, ctx->comp_channel, 0);
    if (ctx->cq == NULL) {
        err = errno_or(ENOMEM);
        goto destroy_comp_channel;
    }

    call = "eventfd";
    ctx->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ctx->wake_fd < 0) {
        err = errno_or(EMFILE);
        goto destroy_cq;
    }

    *ctx_out = ctx;
    return 0;

destroy_cq:
    ibv_destroy_cq(ctx->cq);
destroy_comp_channel:
    ibv_destroy_comp_channel(ctx->comp_channel);
dealloc_pd:
    ibv_dealloc_pd(ctx->pd);
destroy_cm_channel:
    rdma_destroy_event_channel(ctx->cm_channel);
free_ctx:
    free(ctx);
    *failed_call = call;
    return -(err != 0 ? err : EIO);
}

int hpcn_verbs_close(hpcn_verbs_t *ctx)
{
    int rc;

    if (ctx == NULL)
        return -EINVAL;
    if (ctx->live_ids != 0 || atomic_load(&ctx->live_mrs) != 0 ||
        atomic_load(&ctx->live_mws) != 0)
        return -EBUSY;

    /* Each step clears what it released, so a failed close can be retried. */
    if (ctx->wake_fd >= 0) {
        close(ctx->wake_fd);
        ctx->wake_fd = -1;
    }
    if (ctx->cq != NULL) {
        if (ctx->unacked_cq_events > 0) {
            ibv_ack_cq_events(ctx->cq, ctx->unacked_cq_events);
            ctx->unacked_cq_events = 0;
        }
        rc = ibv_destroy_cq(ctx->cq);
        if (rc != 0)
            return -rc;
        ctx->cq = NULL;
    }
    if (ctx->comp_channel != NULL) {
        rc = ibv_destroy_comp_channel(ctx->comp_channel);
        if (rc != 0)
            return -rc;
        ctx->comp_channel = NULL;
    }
    if (ctx->pd != NULL) {
        rc = ibv_dealloc_pd(ctx->pd);
        if (rc != 0)
            return -rc;
        ctx->pd = NULL;
    }
    rdma_destroy_event_channel(ctx->cm_channel);
    free(ctx);
    return 0;
}

int hpcn_verbs_live_ids(const hpcn_verbs_t *ctx)
{
    return ctx == NULL ? -EINVAL : ctx->live_ids;
}

int hpcn_verbs_live_mrs(const hpcn_verbs_t *ctx)
{
    return ctx == NULL ? -EINVAL : atomic_load(&((hpcn_verbs_t *)ctx)->live_mrs);
}

int hpcn_verbs_live_mws(const hpcn_verbs_t *ctx)
{
    return ctx == NULL ? -EINVAL : atomic_load(&((hpcn_verbs_t *)ctx)->live_mws);
}

int hpcn_verbs_has_windows(const hpcn_verbs_t *ctx)
{
    return ctx != NULL && ctx->has_windows;
}

int hpcn_verbs_cq_size(const hpcn_verbs_t *ctx)
{
    return ctx == NULL ? -EINVAL : ctx->cq->cqe;
}

int hpcn_verbs_cq_resize(hpcn_verbs_t *ctx, int entries)
{
    int rc;

    if (ctx == NULL || entries <= 0)
        return -EINVAL;
    if (entries <= ctx->cq->cqe)
        return 0;
    if (entries > ctx->max_cqe)
        return -ENOSPC;
    rc = ibv_resize_cq(ctx->cq, entries);
    return rc == 0 ? 0 : -rc;
}

int hpcn_verbs_wake(hpcn_verbs_t *ctx)
{
    uint64_t one = 1;

    if (ctx == NULL)
        return -EINVAL;
    if (write(ctx->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        return -errno_or(EIO);
    return 0; /* EAGAIN: the counter is saturated, a wakeup is pending anyway */
}

int hpcn_verbs_wait(hpcn_verbs_t *ctx, int timeout_ms)
{
    struct pollfd fds[3];
    struct ibv_cq *event_cq;
    void *event_ctx;
    uint64_t count;
    int ready = 0;
    int rc;

    if (ctx == NULL)
        return -EINVAL;
    if (!ctx->cq_armed) {
        rc = ibv_req_notify_cq(ctx->cq, 0);
        if (rc != 0)
            return -rc;
        ctx->cq_armed = 1;
        return HPCN_WAIT_CQ;
    }

    fds[0].fd = ctx->comp_channel->fd;
    fds[1].fd = ctx->cm_channel->fd;
    fds[2].fd = ctx->wake_fd;
    fds[0].events = fds[1].events = fds[2].events = POLLIN;
    fds[0].revents = fds[1].revents = fds[2].revents = 0;
    rc = poll(fds, 3, timeout_ms < 0 ? -1 : timeout_ms);
    if (rc < 0)
        return errno == EINTR ? 0 : -errno_or(EIO);

    if (fds[0].revents & POLLIN) {
        if (ibv_get_cq_event(ctx->comp_channel, &event_cq, &event_ctx) == 0) {
            ctx->cq_armed = 0;
            if (++ctx->unacked_cq_events >= CQ_EVENT_ACK_BATCH) {
                ibv_ack_cq_events(ctx->cq, ctx->unacked_cq_events);
                ctx->unacked_cq_events = 0;
            }
        } else if (errno != EAGAIN) {
            return -errno_or(EIO);
        }
        ready |= HPCN_WAIT_CQ;
    }
    if (fds[1].revents & (POLLIN | POLLERR | POLLHUP))
        ready |= HPCN_WAIT_CM;
    if (fds[2].revents & POLLIN) {
        if (read(ctx->wake_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
            return -errno_or(EIO);
        ready |= HPCN_WAIT_WAKE;
    }
    return ready;
}

hpcn_wc_status_t hpcn_verbs_wc_status_from_ibv(int ibv_wc_status)
{
    switch (ibv_wc_status) {
    case IBV_WC_SUCCESS:      return HPCN_WC_SUCCESS;
    case IBV_WC_WR_FLUSH_ERR: return HPCN_WC_FLUSHED;
    default:                  return HPCN_WC_ERROR;
    }
}

hpcn_wc_opcode_t hpcn_verbs_wc_opcode_from_ibv(int ibv_wc_opcode)
{
    switch (ibv_wc_opcode) {
    case IBV_WC_SEND:               return HPCN_WC_OP_SEND;
    case IBV_WC_RDMA_WRITE:         return HPCN_WC_OP_RDMA_WRITE;
    case IBV_WC_RDMA_READ:          return HPCN_WC_OP_RDMA_READ;
    case IBV_WC_BIND_MW:            return HPCN_WC_OP_BIND_MW;
    case IBV_WC_LOCAL_INV:          return HPCN_WC_OP_LOCAL_INV;
    case IBV_WC_RECV:
    case IBV_WC_RECV_RDMA_WITH_IMM: return HPCN_WC_OP_RECV;
    default:                        return HPCN_WC_OP_UNKNOWN;
    }
}

hpcn_cm_event_type_t hpcn_verbs_cm_type_from_rdma(int type)
{
    switch (type) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:   return HPCN_CM_ADDR_RESOLVED;
    case RDMA_CM_EVENT_ADDR_ERROR:      return HPCN_CM_ADDR_ERROR;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:  return HPCN_CM_ROUTE_RESOLVED;
    case RDMA_CM_EVENT_ROUTE_ERROR:     return HPCN_CM_ROUTE_ERROR;
    case RDMA_CM_EVENT_CONNECT_REQUEST: return HPCN_CM_CONNECT_REQUEST;
    case RDMA_CM_EVENT_CONNECT_ERROR:   return HPCN_CM_CONNECT_ERROR;
    case RDMA_CM_EVENT_UNREACHABLE:     return HPCN_CM_UNREACHABLE;
    case RDMA_CM_EVENT_REJECTED:        return HPCN_CM_REJECTED;
    case RDMA_CM_EVENT_ESTABLISHED:     return HPCN_CM_ESTABLISHED;
    case RDMA_CM_EVENT_DISCONNECTED:    return HPCN_CM_DISCONNECTED;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:  return HPCN_CM_DEVICE_REMOVAL;
    default:                            return HPCN_CM_OTHER;
    }
}

const char *hpcn_cm_event_name(hpcn_cm_event_type_t type)
{
    switch (type) {
    case HPCN_CM_ADDR_RESOLVED:   return "ADDR_RESOLVED";
    case HPCN_CM_ADDR_ERROR:      return "ADDR_ERROR";
    case HPCN_CM_ROUTE_RESOLVED:  return "ROUTE_RESOLVED";
    case HPCN_CM_ROUTE_ERROR:     return "ROUTE_ERROR";
    case HPCN_CM_CONNECT_REQUEST: return "CONNECT_REQUEST";
    case HPCN_CM_CONNECT_ERROR:   return "CONNECT_ERROR";
    case HPCN_CM_UNREACHABLE:     return "UNREACHABLE";
    case HPCN_CM_REJECTED:        return "REJECTED";
    case HPCN_CM_ESTABLISHED:     return "ESTABLISHED";
    case HPCN_CM_DISCONNECTED:    return "DISCONNECTED";
    case HPCN_CM_DEVICE_REMOVAL:  return "DEVICE_REMOVAL";
    case HPCN_CM_OTHER:           break;
    }
    return "OTHER";
}

const char *hpcn_verbs_wc_status_text(uint32_t vendor_status)
{
    return ibv_wc_status_str((enum ibv_wc_status)vendor_status);
}

static void wc_translate(const struct ibv_wc *wc, hpcn_wc_t *out)
{
    memset(out, 0, sizeof(*out));
    out->wr_id = wc->wr_id;
    out->status = hpcn_verbs_wc_status_from_ibv(wc->status);
    out->vendor_status = (uint32_t)wc->status;
    out->qp_num = wc->qp_num;
    if (wc->status == IBV_WC_SUCCESS) {
        out->opcode = hpcn_verbs_wc_opcode_from_ibv(wc->opcode);
        out->byte_len = wc->byte_len;
        if (wc->wc_flags & IBV_WC_WITH_IMM) {
            out->imm = ntohl(wc->imm_data);
            out->flags |= HPCN_WC_FLAG_IMM;
        }
    }
}

int hpcn_verbs_poll_cq(hpcn_verbs_t *ctx, hpcn_wc_t *out, int capacity)
{
    struct ibv_wc wc[POLL_BATCH];
    int total = 0;

    if (ctx == NULL || out == NULL || capacity < 0)
        return -EINVAL;
    while (total < capacity) {
        int want = capacity - total < POLL_BATCH ? capacity - total : POLL_BATCH;
        int n = ibv_poll_cq(ctx->cq, want, wc);
        int i;

        if (n < 0)
            return total > 0 ? total : -EIO; /* ibv_poll_cq gives no errno */
        for (i = 0; i < n; i++)
            wc_translate(&wc[i], &out[total + i]);
        total += n;
        if (n < want)
            break;
    }
    return total;
}

static void cm_event_translate(const struct rdma_cm_event *event, hpcn_cm_event_t *out)
{
    const struct rdma_conn_param *conn = &event->param.conn;

    memset(out, 0, sizeof(*out));
    out->id = (uint64_t)(uintptr_t)event->id;
    out->type = hpcn_verbs_cm_type_from_rdma(event->event);
    out->status = event->status;
    if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST)
        out->listen_id = (uint64_t)(uintptr_t)event->listen_id;
    if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
        event->event == RDMA_CM_EVENT_ESTABLISHED) {
        size_t len = conn->private_data_len;

        if (len > HPCN_CM_PRIVATE_DATA_MAX)
            len = HPCN_CM_PRIVATE_DATA_MAX;
        if (conn->private_data == NULL)
            len = 0;
        if (len > 0)
            memcpy(out->private_data, conn->private_data, len);
        out->private_data_len = (uint32_t)len;
        out->responder_resources = conn->responder_resources;
        out->initiator_depth = conn->initiator_depth;
    }
}

int hpcn_verbs_poll_cm(hpcn_verbs_t *ctx, hpcn_cm_event_t *out, int capacity)
{
    struct rdma_cm_event *event;
    int total = 0;

    if (ctx == NULL || out == NULL || capacity < 0)
        return -EINVAL;
    while (total < capacity) {
        if (rdma_get_cm_event(ctx->cm_channel, &event) != 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return total > 0 ? total : -errno_or(EIO);
        }
        cm_event_translate(event, &out[total]);
        /* A connect request brings a new id that is ours to accept or reject and destroy. */
        if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST)
            ctx->live_ids++;
        rdma_ack_cm_event(event);
        total++;
    }
    return total;
}

static int check_sockaddr(const void *addr, size_t len)
{
    const struct sockaddr *sa = addr;

    if (addr == NULL || len < sizeof(sa->sa_family))
        return -EINVAL;
    if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in))
        return 0;
    if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6))
        return 0;
    return -EAFNOSUPPORT;
}

int hpcn_verbs_listen(hpcn_verbs_t *ctx, const void *addr, size_t addr_len, int backlog,
                      uint64_t *id_out, int *port_out)
{
    struct rdma_cm_id *id;
    int err;

    if (ctx == NULL || id_out == NULL || port_out == NULL || backlog <= 0)
        return -EINVAL;
    err = check_sockaddr(addr, addr_len);
    if (err != 0)
        return err;

    if (rdma_create_id(ctx->cm_channel, &id, NULL, RDMA_PS_TCP) != 0)
        return -errno_or(ENOMEM);
    if (rdma_bind_addr(id, (struct sockaddr *)addr) != 0) {
        err = errno_or(EADDRNOTAVAIL);
        goto destroy_id;
    }
    if (rdma_listen(id, backlog) != 0) {
        err = errno_or(EIO);
        goto destroy_id;
    }

    ctx->live_ids++;
    *id_out = (uint64_t)(uintptr_t)id;
    *port_out = ntohs(rdma_get_src_port(id));
    return 0;

destroy_id:
    rdma_destroy_id(id);
    return -err;
}

int hpcn_verbs_connect_start(hpcn_verbs_t *ctx, const void *dst, size_t dst_len, int timeout_ms,
                             uint64_t *id_out)
{
    struct rdma_cm_id *id;
    int err;

    if (ctx == NULL || id_out == NULL || timeout_ms <= 0)
        return -EINVAL;
    err = check_sockaddr(dst, dst_len);
    if (err != 0)
        return err;

    if (rdma_create_id(ctx->cm_channel, &id, NULL, RDMA_PS_TCP) != 0)
        return -errno_or(ENOMEM);
    if (rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, timeout_ms) != 0) {
        err = errno_or(EHOSTUNREACH);
        goto destroy_id;
    }

    ctx->live_ids++;
    *id_out = (uint64_t)(uintptr_t)id;
    return 0;

destroy_id:
    rdma_destroy_id(id);
    return -err;
}

int hpcn_verbs_resolve_route(uint64_t id, int timeout_ms)
{
    if (id == 0 || timeout_ms <= 0)
        return -EINVAL;
    if (rdma_resolve_route(cm_id(id), timeout_ms) != 0)
        return -errno_or(EHOSTUNREACH);
    return 0;
}

int hpcn_verbs_qp_create(hpcn_verbs_t *ctx, uint64_t id, int send_depth, int recv_depth,
                         uint32_t *qp_num_out)
{
    struct ibv_qp_init_attr attr;
    struct rdma_cm_id *cm;

    if (ctx == NULL || id == 0 || send_depth <= 0 || recv_depth <= 0 || qp_num_out == NULL)
        return -EINVAL;
    cm = cm_id(id);
    if (cm->qp != NULL)
        return -EEXIST;
    if (cm->verbs != ctx->verbs)
        return -EXDEV; /* the route leaves through another device than this transport's */

    memset(&attr, 0, sizeof(attr));
    attr.send_cq = ctx->cq;
    attr.recv_cq = ctx->cq;
    attr.qp_type = IBV_QPT_RC;
    attr.sq_sig_all = 1;
    attr.cap.max_send_wr = (uint32_t)send_depth;
    attr.cap.max_recv_wr = (uint32_t)recv_depth;
    attr.cap.max_send_sge = HPCN_MAX_SGE;
    attr.cap.max_recv_sge = HPCN_MAX_SGE;
    if (rdma_create_qp(cm, ctx->pd, &attr) != 0)
        return -errno_or(ENOMEM);
    *qp_num_out = cm->qp->qp_num;
    return 0;
}

static int clamp(int value, int limit)
{
    if (value < 0)
        return 0;
    if (value > limit)
        value = limit;
    return value > 255 ? 255 : value; /* rdma_conn_param holds uint8_t */
}

int hpcn_verbs_connect(hpcn_verbs_t *ctx, uint64_t id, const void *private_data, size_t len)
{
    struct rdma_conn_param param;

    if (ctx == NULL || id == 0 || len > CONNECT_PRIVATE_DATA_MAX ||
        (private_data == NULL && len > 0))
        return -EINVAL;
    memset(&param, 0, sizeof(param));
    param.private_data = private_data;
    param.private_data_len = (uint8_t)len;
    param.responder_resources = (uint8_t)clamp(RD_ATOMIC_WANTED, ctx->max_qp_rd_atom);
    param.initiator_depth = (uint8_t)clamp(RD_ATOMIC_WANTED, ctx->max_qp_init_rd_atom);
    param.retry_count = 7;
    param.rnr_retry_count = 7; /* credits prevent RNR; should one happen, retry, don't fail */
    if (rdma_connect(cm_id(id), &param) != 0)
        return -errno_or(EIO);
    return 0;
}

int hpcn_verbs_accept(hpcn_verbs_t *ctx, uint64_t id, const void *private_data, size_t len,
                      int peer_responder_resources, int peer_initiator_depth)
{
    struct rdma_conn_param param;

    if (ctx == NULL || id == 0 || len > CONNECT_PRIVATE_DATA_MAX ||
        (private_data == NULL && len > 0))
        return -EINVAL;
    memset(&param, 0, sizeof(param));
    param.private_data = private_data;
    param.private_data_len = (uint8_t)len;
    /* Serve as many READs as the peer will issue, issue no more than it serves. */
    param.responder_resources = (uint8_t)clamp(peer_initiator_depth, ctx->max_qp_rd_atom);
    param.initiator_depth = (uint8_t)clamp(peer_responder_resources, ctx->max_qp_init_rd_atom);
    param.rnr_retry_count = 7;
    if (rdma_accept(cm_id(id), &param) != 0)
        return -errno_or(EIO);
    return 0;
}

int hpcn_verbs_reject(uint64_t id)
{
    if (id == 0)
        return -EINVAL;
    if (rdma_reject(cm_id(id), NULL, 0) != 0)
        return -errno_or(EIO);
    return 0;
}

int hpcn_verbs_notify_established(uint64_t id)
{
    if (id == 0)
        return -EINVAL;
    if (rdma_notify(cm_id(id), IBV_EVENT_COMM_EST) != 0)
        return -errno_or(EIO);
    return 0;
}

int hpcn_verbs_disconnect(uint64_t id)
{
    if (id == 0)
        return -EINVAL;
    if (rdma_disconnect(cm_id(id)) != 0)
        return -errno_or(EIO);
    return 0;
}

int hpcn_verbs_destroy_id(hpcn_verbs_t *ctx, uint64_t id)
{
    struct rdma_cm_id *cm;

    if (ctx == NULL || id == 0)
        return -EINVAL;
    cm = cm_id(id);
    if (cm->qp != NULL)
        rdma_destroy_qp(cm); /* void: nothing to report */
    if (rdma_destroy_id(cm) != 0)
        return -errno_or(EIO);
    ctx->live_ids--;
    return 0;
}

int hpcn_verbs_local_port(uint64_t id)
{
    if (id == 0)
        return -EINVAL;
    return ntohs(rdma_get_src_port(cm_id(id)));
}

int hpcn_verbs_peer_address(uint64_t id, size_t out_len, uint8_t *out)
{
    struct sockaddr *sa;

    if (id == 0 || out == NULL)
        return -EINVAL;
    sa = rdma_get_peer_addr(cm_id(id));
    if (sa == NULL)
        return -ENOTCONN;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

        if (out_len < 6)
            return -ENOSPC;
        memcpy(out, &in->sin_addr, 4);
        memcpy(out + 4, &in->sin_port, 2);
        return 6;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

        if (out_len < 18)
            return -ENOSPC;
        memcpy(out, &in6->sin6_addr, 16);
        memcpy(out + 16, &in6->sin6_port, 2);
        return 18;
    }
    return -ENOTCONN;
}

int hpcn_verbs_mr_reg(hpcn_verbs_t *ctx, void *addr, size_t length, uint32_t access,
                      hpcn_mr_info_t *info_out)
{
    const uint32_t known = HPCN_ACCESS_WINDOWS | HPCN_ACCESS_REMOTE_READ |
                           HPCN_ACCESS_REMOTE_WRITE;
    int flags = IBV_ACCESS_LOCAL_WRITE;
    struct ibv_mr *mr;

    if (ctx == NULL || addr == NULL || length == 0 || info_out == NULL || (access & ~known))
        return -EINVAL;
    if (access & HPCN_ACCESS_WINDOWS)
        flags |= IBV_ACCESS_MW_BIND;
    if (access & HPCN_ACCESS_REMOTE_READ)
        flags |= IBV_ACCESS_REMOTE_READ;
    if (access & HPCN_ACCESS_REMOTE_WRITE)
        flags |= IBV_ACCESS_REMOTE_WRITE;
    errno = 0;
    mr = ibv_reg_mr(ctx->pd, addr, length, flags);
    if (mr == NULL)
        return -errno_or(ENOMEM);
    atomic_fetch_add(&ctx->live_mrs, 1);
    info_out->handle = (uint64_t)(uintptr_t)mr;
    info_out->addr = (uint64_t)(uintptr_t)mr->addr;
    info_out->lkey = mr->lkey;
    info_out->rkey = mr->rkey;
    return 0;
}

int hpcn_verbs_mr_dereg(hpcn_verbs_t *ctx, uint64_t handle)
{
    int rc;

    if (ctx == NULL || handle == 0)
        return -EINVAL;
    rc = ibv_dereg_mr((struct ibv_mr *)(uintptr_t)handle);
    if (rc != 0)
        return -rc;
    atomic_fetch_sub(&ctx->live_mrs, 1);
    return 0;
}

int hpcn_verbs_mw_alloc(hpcn_verbs_t *ctx, uint64_t *handle_out)
{
    struct ibv_mw *mw;

    if (ctx == NULL || handle_out == NULL)
        return -EINVAL;
    if (!ctx->has_windows)
        return -EOPNOTSUPP;
    errno = 0;
    mw = ibv_alloc_mw(ctx->pd, IBV_MW_TYPE_2);
    if (mw == NULL)
        return -errno_or(ENOMEM);
    atomic_fetch_add(&ctx->live_mws, 1);
    *handle_out = (uint64_t)(uintptr_t)mw;
    return 0;
}

int hpcn_verbs_mw_dealloc(hpcn_verbs_t *ctx, uint64_t handle)
{
    int rc;

    if (ctx == NULL || handle == 0)
        return -EINVAL;
    rc = ibv_dealloc_mw((struct ibv_mw *)(uintptr_t)handle);
    if (rc != 0)
        return -rc;
    atomic_fetch_sub(&ctx->live_mws, 1);
    return 0;
}

static int check_sges(const hpcn_sge_t *sge, int num_sge, struct ibv_sge *out)
{
    int i;

    if (num_sge < 0 || num_sge > HPCN_MAX_SGE || (sge == NULL && num_sge > 0))
        return -EINVAL;
    for (i = 0; i < num_sge; i++) {
        if (sge[i].addr == 0)
            return -EINVAL;
        out[i].addr = sge[i].addr;
        out[i].length = sge[i].length;
        out[i].lkey = sge[i].lkey;
    }
    return 0;
}

static struct ibv_qp *qp_of(uint64_t id)
{
    return cm_id(id)->qp;
}

/* Posts one send-queue work request on id's QP; 0 or -errno. */
static int post_one(uint64_t id, struct ibv_send_wr *wr)
{
    struct ibv_send_wr *bad;
    struct ibv_qp *qp = qp_of(id);
    int rc;

    if (qp == NULL)
        return -ENOTCONN;
    rc = ibv_post_send(qp, wr, &bad);
    return rc == 0 ? 0 : -rc;
}


static int post_send_wr(uint64_t id, uint64_t wr_id, const hpcn_sge_t *sge, int num_sge,
                        int with_imm, uint32_t imm)
{
    struct ibv_sge sg[HPCN_MAX_SGE];
    struct ibv_send_wr wr;
    int rc;

    if (id == 0)
        return -EINVAL;
    rc = check_sges(sge, num_sge, sg);
    if (rc != 0)
        return rc;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.sg_list = num_sge > 0 ? sg : NULL;
    wr.num_sge = num_sge;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.opcode = with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
    wr.imm_data = htonl(imm);
    return post_one(id, &wr);
}

int hpcn_verbs_post_send(uint64_t id, uint64_t wr_id, const hpcn_sge_t *sge, int num_sge)
{
    return post_send_wr(id, wr_id, sge, num_sge, 0, 0);
}

int hpcn_verbs_post_send_imm(uint64_t id, uint64_t wr_id, const hpcn_sge_t *sge, int num_sge,
                             uint32_t imm)
{
    return post_send_wr(id, wr_id, sge, num_sge, 1, imm);
}

int64_t hpcn_verbs_post_bind(uint64_t id, uint64_t wr_id, uint64_t mw, uint64_t mr,
                             uint64_t addr, uint64_t length, uint32_t access)
{
    const uint32_t remote = HPCN_ACCESS_REMOTE_READ | HPCN_ACCESS_REMOTE_WRITE;
    struct ibv_mw *window = (struct ibv_mw *)(uintptr_t)mw;
    struct ibv_send_wr wr;
    uint32_t rkey;
    int flags = 0;
    int rc;

    if (id == 0 || mw == 0 || mr == 0 || length == 0 || (access & ~remote) || access == 0 ||
        addr > UINT64_MAX - length)
        return -EINVAL;
    if (access & HPCN_ACCESS_REMOTE_READ)
        flags |= IBV_ACCESS_REMOTE_READ;
    if (access & HPCN_ACCESS_REMOTE_WRITE)
        flags |= IBV_ACCESS_REMOTE_WRITE;
    /* A fresh key byte per bind: a key handed out for an earlier transfer stops working. */
    rkey = ibv_inc_rkey(window->rkey);
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.opcode = IBV_WR_BIND_MW;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.bind_mw.mw = window;
    wr.bind_mw.rkey = rkey;
    wr.bind_mw.bind_info.mr = (struct ibv_mr *)(uintptr_t)mr;
    wr.bind_mw.bind_info.addr = addr;
    wr.bind_mw.bind_info.length = length;
    wr.bind_mw.bind_info.mw_access_flags = (unsigned int)flags;
    rc = post_one(id, &wr);
    if (rc != 0)
        return rc;
    window->rkey = rkey; /* the provider may have done so already; same value */
    return (int64_t)rkey;
}

int hpcn_verbs_post_local_inv(uint64_t id, uint64_t wr_id, uint32_t rkey)
{
    struct ibv_send_wr wr;

    if (id == 0)
        return -EINVAL;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.opcode = IBV_WR_LOCAL_INV;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.invalidate_rkey = rkey;
    return post_one(id, &wr);
}

int hpcn_verbs_post_recv(uint64_t id, uint64_t wr_id, const hpcn_sge_t *sge, int num_sge)
{
    struct ibv_sge sg[HPCN_MAX_SGE];
    struct ibv_recv_wr wr;
    struct ibv_recv_wr *bad;
    struct ibv_qp *qp;
    int rc;

    if (id == 0 || num_sge == 0)
        return -EINVAL;
    rc = check_sges(sge, num_sge, sg);
    if (rc != 0)
        return rc;
    qp = qp_of(id);
    if (qp == NULL)
        return -ENOTCONN;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.sg_list = sg;
    wr.num_sge = num_sge;
    rc = ibv_post_recv(qp, &wr, &bad);
    return rc == 0 ? 0 : -rc;
}

int hpcn_verbs_post_rdma(uint64_t id, uint64_t wr_id, int is_read, const hpcn_sge_t *local,
                         uint64_t remote_addr, uint32_t rkey)
{
    struct ibv_sge sg[1];
    struct ibv_send_wr wr;
    int rc;

    if (id == 0 || local == NULL || remote_addr == 0)
        return -EINVAL;
    rc = check_sges(local, 1, sg);
    if (rc != 0)
        return rc;
    if (remote_addr > UINT64_MAX - local->length)
        return -EINVAL; /* the remote range would wrap around */
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.sg_list = sg;
    wr.num_sge = 1;
    wr.opcode = is_read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey = rkey;
    return post_one(id, &wr);
}
