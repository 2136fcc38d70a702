/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * A real RC connection through rdma_cm between two transport contexts on one device (the
 * Soft-RoCE lane's rxe0): SEND/RECV with a header SGE, RDMA WRITE then READ of a registered
 * buffer with the data verified, a refused connection, and a clean teardown that leaves no
 * ids or registrations behind. Exits 77 (skipped) without a device that has an IPv4 GID,
 * unless HPCN_REQUIRE_VERBS=1. HPCN_TEST_DEVICE picks the device (default: first active).
 */
#include "hpcn.h"
#include "hpcn_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <infiniband/verbs.h>

#define SKIP 77
#define BUF_SIZE (64 * 1024)
#define HDR_LEN 16
#define STEP_MS 100
#define DEADLINE_MS 20000

static char device[HPCN_NAME_MAX];
static struct sockaddr_in device_addr;

static long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* The IPv4 address behind the device's IPv4-mapped GID (::ffff:a.b.c.d), if any. */
static int find_ipv4(const char *name, struct in_addr *out)
{
    static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    struct ibv_device **list;
    struct ibv_context *ctx = NULL;
    struct ibv_port_attr attr;
    union ibv_gid gid;
    int found = 0;
    int n = 0;
    int i;

    list = ibv_get_device_list(&n);
    if (list == NULL)
        return 0;
    for (i = 0; i < n; i++) {
        if (strcmp(ibv_get_device_name(list[i]), name) == 0) {
            ctx = ibv_open_device(list[i]);
            break;
        }
    }
    ibv_free_device_list(list);
    if (ctx == NULL)
        return 0;
    if (ibv_query_port(ctx, 1, &attr) == 0) {
        for (i = 0; i < attr.gid_tbl_len && !found; i++) {
            if (ibv_query_gid(ctx, 1, i, &gid) == 0 && memcmp(gid.raw, prefix, 12) == 0) {
                memcpy(&out->s_addr, gid.raw + 12, 4);
                found = 1;
            }
        }
    }
    ibv_close_device(ctx);
    return found;
}

static int pick_device(void)
{
    const char *wanted = getenv("HPCN_TEST_DEVICE");
    hpcn_port_t *ports = NULL;
    size_t count = 0;
    size_t i;

    if (wanted != NULL && wanted[0] != '\0') {
        snprintf(device, sizeof(device), "%s", wanted);
    } else {
        if (hpcn_device_probe(&ports, &count) != 0)
            return 0;
        for (i = 0; i < count && device[0] == '\0'; i++) {
            if (ports[i].state == HPCN_PORT_ACTIVE)
                snprintf(device, sizeof(device), "%s", ports[i].device_name);
        }
        hpcn_device_probe_free(ports);
        if (device[0] == '\0')
            return 0;
    }
    memset(&device_addr, 0, sizeof(device_addr));
    device_addr.sin_family = AF_INET;
    return find_ipv4(device, &device_addr.sin_addr);
}

/* Waits for the next cm event of ctx (any id). */
static int next_cm_event(hpcn_verbs_t *ctx, hpcn_cm_event_t *ev)
{
    long deadline = now_ms() + DEADLINE_MS;

    while (now_ms() < deadline) {
        int n = hpcn_verbs_poll_cm(ctx, ev, 1);

        if (n < 0)
            return n;
        if (n == 1)
            return 0;
        n = hpcn_verbs_wait(ctx, STEP_MS);
        if (n < 0)
            return n;
    }
    return -ETIMEDOUT;
}

/* Waits for the completion of wr_id on ctx. */
static int next_wc(hpcn_verbs_t *ctx, uint64_t wr_id, hpcn_wc_t *wc)
{
    long deadline = now_ms() + DEADLINE_MS;

    while (now_ms() < deadline) {
        int n = hpcn_verbs_poll_cq(ctx, wc, 1);

        if (n < 0)
            return n;
        if (n == 1) {
            if (wc->wr_id != wr_id) {
                fprintf(stderr, "unexpected completion wr_id %llu status %u\n",
                        (unsigned long long)wc->wr_id, wc->status);
                return -EPROTO;
            }
            return 0;
        }
        n = hpcn_verbs_wait(ctx, STEP_MS);
        if (n < 0)
            return n;
    }
    return -ETIMEDOUT;
}

typedef struct side {
    hpcn_verbs_t *ctx;
    uint64_t id;
    uint8_t *mem;
    hpcn_mr_info_t mr;
} side_t;

static int expect_event(hpcn_verbs_t *ctx, hpcn_cm_event_type_t type, hpcn_cm_event_t *ev)
{
    int rc = next_cm_event(ctx, ev);

    if (rc != 0) {
        fprintf(stderr, "waiting for %s: %s\n", hpcn_cm_event_name(type), strerror(-rc));
        return rc;
    }
    if (ev->type != type) {
        fprintf(stderr, "expected %s, got %s (status %d)\n", hpcn_cm_event_name(type),
                hpcn_cm_event_name(ev->type), ev->status);
        return -EPROTO;
    }
    return 0;
}

static int loopback_send_write_read(void)
{
    static const char hello[] = "hello";
    static const char welcome[] = "welcome";
    const char *call = NULL;
    struct sockaddr_in addr = device_addr;
    hpcn_cm_event_t ev;
    hpcn_wc_t wc;
    hpcn_sge_t sge[2];
    side_t server = { 0 };
    side_t client = { 0 };
    uint64_t listen_id;
    uint32_t qpn;
    int port;
    int i;

    HPCN_CHECK(hpcn_verbs_open(device, 64, &server.ctx, &call) == 0);
    HPCN_CHECK(hpcn_verbs_open(device, 64, &client.ctx, &call) == 0);

    addr.sin_port = 0;
    HPCN_CHECK(hpcn_verbs_listen(server.ctx, &addr, sizeof(addr), 8, &listen_id, &port) == 0);
    HPCN_CHECK(port > 0 && port < 65536);
    HPCN_CHECK(hpcn_verbs_local_port(listen_id) == port);
    printf("(%s %s:%d) ", device, inet_ntoa(addr.sin_addr), port);

    server.mem = aligned_alloc(4096, BUF_SIZE);
    client.mem = aligned_alloc(4096, BUF_SIZE);
    HPCN_CHECK(server.mem != NULL && client.mem != NULL);
    memset(server.mem, 0, BUF_SIZE);
    memset(client.mem, 0, BUF_SIZE);
    HPCN_CHECK(hpcn_verbs_mr_reg(server.ctx, server.mem, BUF_SIZE, &server.mr) == 0);
    HPCN_CHECK(hpcn_verbs_mr_reg(client.ctx, client.mem, BUF_SIZE, &client.mr) == 0);
    HPCN_CHECK(hpcn_verbs_live_mrs(server.ctx) == 1);

    /* Active side: address, route, QP + first RECV, connect. */
    addr.sin_port = htons((uint16_t)port);
    HPCN_CHECK(hpcn_verbs_connect_start(client.ctx, &addr, sizeof(addr), 5000, &client.id) == 0);
    HPCN_CHECK(expect_event(client.ctx, HPCN_CM_ADDR_RESOLVED, &ev) == 0);
    HPCN_CHECK(ev.id == client.id);
    HPCN_CHECK(hpcn_verbs_resolve_route(client.id, 5000) == 0);
    HPCN_CHECK(expect_event(client.ctx, HPCN_CM_ROUTE_RESOLVED, &ev) == 0);
    HPCN_CHECK(hpcn_verbs_qp_create(client.ctx, client.id, 16, 16, &qpn) == 0);
    HPCN_CHECK(hpcn_verbs_qp_create(client.ctx, client.id, 16, 16, &qpn) == -EEXIST);
    HPCN_CHECK(hpcn_verbs_connect(client.ctx, client.id, hello, sizeof(hello)) == 0);

    /* Passive side: the request carries our private data; QP + RECV, accept. */
    HPCN_CHECK(expect_event(server.ctx, HPCN_CM_CONNECT_REQUEST, &ev) == 0);
    HPCN_CHECK(ev.listen_id == listen_id);
    HPCN_CHECK(ev.private_data_len >= sizeof(hello));
    HPCN_CHECK(memcmp(ev.private_data, hello, sizeof(hello)) == 0);
    server.id = ev.id;
    HPCN_CHECK(hpcn_verbs_live_ids(server.ctx) == 2);
    HPCN_CHECK(hpcn_verbs_qp_create(server.ctx, server.id, 16, 16, &qpn) == 0);
    sge[0] = (hpcn_sge_t){ .addr = server.mr.addr, .length = HDR_LEN, .lkey = server.mr.lkey };
    sge[1] = (hpcn_sge_t){ .addr = server.mr.addr + 4096, .length = 4096,
                           .lkey = server.mr.lkey };
    HPCN_CHECK(hpcn_verbs_post_recv(server.id, 100, sge, 2) == 0);
    HPCN_CHECK(hpcn_verbs_accept(server.ctx, server.id, welcome, sizeof(welcome),
                                 ev.responder_resources, ev.initiator_depth) == 0);

    HPCN_CHECK(expect_event(client.ctx, HPCN_CM_ESTABLISHED, &ev) == 0);
    HPCN_CHECK(ev.private_data_len >= sizeof(welcome));
    HPCN_CHECK(memcmp(ev.private_data, welcome, sizeof(welcome)) == 0);
    HPCN_CHECK(expect_event(server.ctx, HPCN_CM_ESTABLISHED, &ev) == 0);
    HPCN_CHECK(ev.id == server.id);
    {
        uint8_t peer[18];

        HPCN_CHECK(hpcn_verbs_peer_address(server.id, sizeof(peer), peer) == 6);
        HPCN_CHECK(memcmp(peer, &device_addr.sin_addr, 4) == 0);
        HPCN_CHECK(hpcn_verbs_peer_address(client.id, sizeof(peer), peer) == 6);
        HPCN_CHECK(memcmp(peer + 4, &addr.sin_port, 2) == 0);
    }

    /* SEND: header SGE + payload SGE, scattered into header area + payload area. */
    memcpy(client.mem, "HEADER-0123456789", HDR_LEN);
    for (i = 0; i < 1000; i++)
        client.mem[4096 + i] = (uint8_t)(i * 7);
    sge[0] = (hpcn_sge_t){ .addr = client.mr.addr, .length = HDR_LEN, .lkey = client.mr.lkey };
    sge[1] = (hpcn_sge_t){ .addr = client.mr.addr + 4096, .length = 1000,
                           .lkey = client.mr.lkey };
    HPCN_CHECK(hpcn_verbs_post_send(client.id, 200, sge, 2) == 0);
    HPCN_CHECK(next_wc(client.ctx, 200, &wc) == 0);
    HPCN_CHECK(wc.status == HPCN_WC_SUCCESS && wc.opcode == HPCN_WC_OP_SEND);
    HPCN_CHECK(next_wc(server.ctx, 100, &wc) == 0);
    HPCN_CHECK(wc.status == HPCN_WC_SUCCESS && wc.opcode == HPCN_WC_OP_RECV);
    HPCN_CHECK(wc.byte_len == HDR_LEN + 1000);
    HPCN_CHECK(memcmp(server.mem, client.mem, HDR_LEN) == 0);
    HPCN_CHECK(memcmp(server.mem + 4096, client.mem + 4096, 1000) == 0);

    /* RDMA WRITE 16 KiB into the server's buffer, then READ it back elsewhere. */
    for (i = 0; i < 16384; i++)
        client.mem[16384 + i] = (uint8_t)(i * 13 + 1);
    sge[0] = (hpcn_sge_t){ .addr = client.mr.addr + 16384, .length = 16384,
                           .lkey = client.mr.lkey };
    HPCN_CHECK(hpcn_verbs_post_rdma(client.id, 300, 0, &sge[0], server.mr.addr + 32768,
                                    server.mr.rkey) == 0);
    HPCN_CHECK(next_wc(client.ctx, 300, &wc) == 0);
    HPCN_CHECK(wc.status == HPCN_WC_SUCCESS && wc.opcode == HPCN_WC_OP_RDMA_WRITE);
    HPCN_CHECK(memcmp(server.mem + 32768, client.mem + 16384, 16384) == 0);

    sge[0] = (hpcn_sge_t){ .addr = client.mr.addr + 49152, .length = 16384,
                           .lkey = client.mr.lkey };
    HPCN_CHECK(hpcn_verbs_post_rdma(client.id, 301, 1, &sge[0], server.mr.addr + 32768,
                                    server.mr.rkey) == 0);
    HPCN_CHECK(next_wc(client.ctx, 301, &wc) == 0);
    HPCN_CHECK(wc.status == HPCN_WC_SUCCESS && wc.opcode == HPCN_WC_OP_RDMA_READ);
    HPCN_CHECK(memcmp(client.mem + 49152, client.mem + 16384, 16384) == 0);

    /* A RECV left posted flushes on disconnect: a flush, not an error. */
    sge[0] = (hpcn_sge_t){ .addr = server.mr.addr, .length = HDR_LEN, .lkey = server.mr.lkey };
    HPCN_CHECK(hpcn_verbs_post_recv(server.id, 101, sge, 1) == 0);
    HPCN_CHECK(hpcn_verbs_disconnect(client.id) == 0);
    HPCN_CHECK(expect_event(server.ctx, HPCN_CM_DISCONNECTED, &ev) == 0);
    HPCN_CHECK(hpcn_verbs_disconnect(server.id) == 0);
    HPCN_CHECK(next_wc(server.ctx, 101, &wc) == 0);
    HPCN_CHECK(wc.status == HPCN_WC_FLUSHED);
    HPCN_CHECK(expect_event(client.ctx, HPCN_CM_DISCONNECTED, &ev) == 0);

    /* Teardown in reverse order of creation; close refuses while anything is alive. */
    HPCN_CHECK(hpcn_verbs_close(server.ctx) == -EBUSY);
    HPCN_CHECK(hpcn_verbs_destroy_id(client.ctx, client.id) == 0);
    HPCN_CHECK(hpcn_verbs_destroy_id(server.ctx, server.id) == 0);
    HPCN_CHECK(hpcn_verbs_destroy_id(server.ctx, listen_id) == 0);
    HPCN_CHECK(hpcn_verbs_mr_dereg(client.ctx, client.mr.handle) == 0);
    HPCN_CHECK(hpcn_verbs_mr_dereg(server.ctx, server.mr.handle) == 0);
    HPCN_CHECK(hpcn_verbs_live_ids(server.ctx) == 0 && hpcn_verbs_live_mrs(server.ctx) == 0);
    HPCN_CHECK(hpcn_verbs_close(client.ctx) == 0);
    HPCN_CHECK(hpcn_verbs_close(server.ctx) == 0);
    free(client.mem);
    free(server.mem);
    return 0;
}

static int connect_to_closed_port_is_refused(void)
{
    const char *call = NULL;
    struct sockaddr_in addr = device_addr;
    hpcn_verbs_t *ctx;
    hpcn_cm_event_t ev;
    uint64_t listen_id;
    uint64_t id;
    uint32_t qpn;
    int port;

    HPCN_CHECK(hpcn_verbs_open(device, 16, &ctx, &call) == 0);
    /* Find a free port by listening and closing again. */
    addr.sin_port = 0;
    HPCN_CHECK(hpcn_verbs_listen(ctx, &addr, sizeof(addr), 1, &listen_id, &port) == 0);
    HPCN_CHECK(hpcn_verbs_destroy_id(ctx, listen_id) == 0);

    addr.sin_port = htons((uint16_t)port);
    HPCN_CHECK(hpcn_verbs_connect_start(ctx, &addr, sizeof(addr), 5000, &id) == 0);
    HPCN_CHECK(expect_event(ctx, HPCN_CM_ADDR_RESOLVED, &ev) == 0);
    HPCN_CHECK(hpcn_verbs_resolve_route(id, 5000) == 0);
    HPCN_CHECK(expect_event(ctx, HPCN_CM_ROUTE_RESOLVED, &ev) == 0);
    HPCN_CHECK(hpcn_verbs_qp_create(ctx, id, 4, 4, &qpn) == 0);
    HPCN_CHECK(hpcn_verbs_connect(ctx, id, NULL, 0) == 0);
    HPCN_CHECK(next_cm_event(ctx, &ev) == 0);
    printf("(%s, status %d) ", hpcn_cm_event_name(ev.type), ev.status);
    HPCN_CHECK(ev.type == HPCN_CM_REJECTED || ev.type == HPCN_CM_UNREACHABLE ||
               ev.type == HPCN_CM_CONNECT_ERROR);
    HPCN_CHECK(hpcn_verbs_destroy_id(ctx, id) == 0);
    HPCN_CHECK(hpcn_verbs_close(ctx) == 0);
    return 0;
}

int main(void)
{
    const char *require = getenv("HPCN_REQUIRE_VERBS");
    int failures = 0;

    if (!pick_device()) {
        if (require != NULL && strcmp(require, "1") == 0) {
            fprintf(stderr, "HPCN_REQUIRE_VERBS=1 but no active RDMA device with an IPv4 GID"
                            " (HPCN_TEST_DEVICE=%s)\n", getenv("HPCN_TEST_DEVICE") ?
                            getenv("HPCN_TEST_DEVICE") : "");
            return 1;
        }
        printf("skipped: no active RDMA device with an IPv4 GID: run dev-support/bin/test-rdma\n");
        return SKIP;
    }
    failures += HPCN_RUN(loopback_send_write_read);
    failures += HPCN_RUN(connect_to_closed_port_is_refused);
    return failures == 0 ? 0 : 1;
}
