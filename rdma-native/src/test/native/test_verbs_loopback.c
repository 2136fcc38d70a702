/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * A real RC connection through rdma_cm between two transport contexts on one device (the
 * Soft-RoCE lane's rxe0): SEND/RECV with a header SGE, RDMA WRITE then READ of a registered
 * buffer with the data verified, a refused connection, and a clean teardown that leaves no
 * ids or registrations behind; memory windows (type 2) that open exactly the bytes of one
 * transfer to one QP, for reading, until invalidated, and nothing through a slab registered for
 * windows only. With
 * the argument "bench": the cost of a window bind + invalidate against a registration +
 * deregistration per transfer, 64 KiB .. 4 MiB (printed, never asserted). Exits 77 (skipped) without a device that has an IPv4 GID,
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
    HPCN_CHECK(hpcn_verbs_mr_reg(server.ctx, server.mem, BUF_SIZE,
                                 HPCN_ACCESS_REMOTE_READ | HPCN_ACCESS_REMOTE_WRITE,
                                 &server.mr) == 0);
    HPCN_CHECK(hpcn_verbs_mr_reg(client.ctx, client.mem, BUF_SIZE, 0, &client.mr) == 0);
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

/* ---- memory windows ------------------------------------------------------------------- */

#define SLAB_SIZE (4 * 1024 * 1024)

typedef struct pair {
    side_t server;
    side_t client;
    uint64_t listen_id;
} pair_t;

/* Server and client contexts, each with a SLAB_SIZE slab registered for windows only. */
static int pair_open(pair_t *p)
{
    const char *call = NULL;

    memset(p, 0, sizeof(*p));
    HPCN_CHECK(hpcn_verbs_open(device, 256, &p->server.ctx, &call) == 0);
    HPCN_CHECK(hpcn_verbs_open(device, 256, &p->client.ctx, &call) == 0);
    HPCN_CHECK(hpcn_verbs_has_windows(p->server.ctx) == 1);
    p->server.mem = aligned_alloc(4096, SLAB_SIZE);
    p->client.mem = aligned_alloc(4096, SLAB_SIZE);
    HPCN_CHECK(p->server.mem != NULL && p->client.mem != NULL);
    memset(p->server.mem, 0x5a, SLAB_SIZE);
    memset(p->client.mem, 0, SLAB_SIZE);
    HPCN_CHECK(hpcn_verbs_mr_reg(p->server.ctx, p->server.mem, SLAB_SIZE, HPCN_ACCESS_WINDOWS,
                                 &p->server.mr) == 0);
    HPCN_CHECK(hpcn_verbs_mr_reg(p->client.ctx, p->client.mem, SLAB_SIZE, HPCN_ACCESS_WINDOWS,
                                 &p->client.mr) == 0);
    return 0;
}

/* Connects a new client id to the pair's server (listening on first use). */
static int pair_connect(pair_t *p, uint64_t *client_id, uint64_t *server_id)
{
    struct sockaddr_in addr = device_addr;
    hpcn_cm_event_t ev;
    uint32_t qpn;
    int port;

    if (p->listen_id == 0) {
        addr.sin_port = 0;
        HPCN_CHECK(hpcn_verbs_listen(p->server.ctx, &addr, sizeof(addr), 8, &p->listen_id,
                                     &port) == 0);
    }
    port = hpcn_verbs_local_port(p->listen_id);
    addr.sin_port = htons((uint16_t)port);
    HPCN_CHECK(hpcn_verbs_connect_start(p->client.ctx, &addr, sizeof(addr), 5000,
                                        client_id) == 0);
    HPCN_CHECK(expect_event(p->client.ctx, HPCN_CM_ADDR_RESOLVED, &ev) == 0);
    HPCN_CHECK(hpcn_verbs_resolve_route(*client_id, 5000) == 0);
    HPCN_CHECK(expect_event(p->client.ctx, HPCN_CM_ROUTE_RESOLVED, &ev) == 0);
    HPCN_CHECK(hpcn_verbs_qp_create(p->client.ctx, *client_id, 64, 4, &qpn) == 0);
    HPCN_CHECK(hpcn_verbs_connect(p->client.ctx, *client_id, NULL, 0) == 0);
    HPCN_CHECK(expect_event(p->server.ctx, HPCN_CM_CONNECT_REQUEST, &ev) == 0);
    *server_id = ev.id;
    HPCN_CHECK(hpcn_verbs_qp_create(p->server.ctx, *server_id, 64, 4, &qpn) == 0);
    HPCN_CHECK(hpcn_verbs_accept(p->server.ctx, *server_id, NULL, 0, ev.responder_resources,
                                 ev.initiator_depth) == 0);
    HPCN_CHECK(expect_event(p->client.ctx, HPCN_CM_ESTABLISHED, &ev) == 0);
    HPCN_CHECK(expect_event(p->server.ctx, HPCN_CM_ESTABLISHED, &ev) == 0);
    return 0;
}

static int pair_close(pair_t *p)
{
    if (p->listen_id != 0)
        HPCN_CHECK(hpcn_verbs_destroy_id(p->server.ctx, p->listen_id) == 0);
    HPCN_CHECK(hpcn_verbs_mr_dereg(p->client.ctx, p->client.mr.handle) == 0);
    HPCN_CHECK(hpcn_verbs_mr_dereg(p->server.ctx, p->server.mr.handle) == 0);
    HPCN_CHECK(hpcn_verbs_close(p->client.ctx) == 0);
    HPCN_CHECK(hpcn_verbs_close(p->server.ctx) == 0);
    free(p->client.mem);
    free(p->server.mem);
    return 0;
}

/* The client RDMA-READs len bytes of (remote, rkey) into its slab; the completion status. */
static int client_read(pair_t *p, uint64_t client_id, uint64_t wr_id, uint64_t remote,
                       uint32_t rkey, uint32_t len, hpcn_wc_t *wc)
{
    hpcn_sge_t sge = { .addr = p->client.mr.addr, .length = len, .lkey = p->client.mr.lkey };

    HPCN_CHECK(hpcn_verbs_post_rdma(client_id, wr_id, 1, &sge, remote, rkey) == 0);
    HPCN_CHECK(next_wc(p->client.ctx, wr_id, wc) == 0);
    return 0;
}

static int drop_connection(pair_t *p, uint64_t client_id, uint64_t server_id)
{
    hpcn_wc_t wc;
    int n;

    HPCN_CHECK(hpcn_verbs_destroy_id(p->client.ctx, client_id) == 0);
    HPCN_CHECK(hpcn_verbs_destroy_id(p->server.ctx, server_id) == 0);
    /* Leftover completions (flushes) of destroyed QPs. */
    while ((n = hpcn_verbs_poll_cq(p->server.ctx, &wc, 1)) > 0)
        ;
    while ((n = hpcn_verbs_poll_cq(p->client.ctx, &wc, 1)) > 0)
        ;
    return 0;
}

/*
 * A window bound on connection A for 64 KiB opens exactly those bytes to A's peer: the read
 * of the granted bytes returns them; one byte past them, the slab's own rkey, the same key on
 * another connection and the key after a local invalidate are remote access errors.
 */
static int windows_open_exactly_one_transfer(void)
{
    const uint32_t granted = 64 * 1024;
    const uint64_t offset = 1024 * 1024;
    pair_t p;
    hpcn_wc_t wc;
    uint64_t a_client;
    uint64_t a_server;
    uint64_t b_client;
    uint64_t b_server;
    uint64_t mw;
    int64_t rkey;
    int i;

    HPCN_CHECK(pair_open(&p) == 0);
    for (i = 0; i < (int)granted; i++)
        p.server.mem[offset + i] = (uint8_t)(i * 31 + 7);
    HPCN_CHECK(pair_connect(&p, &a_client, &a_server) == 0);
    HPCN_CHECK(hpcn_verbs_mw_alloc(p.server.ctx, &mw) == 0);
    HPCN_CHECK(hpcn_verbs_live_mws(p.server.ctx) == 1);
    rkey = hpcn_verbs_post_bind(a_server, 1, mw, p.server.mr.handle,
                                p.server.mr.addr + offset, granted, HPCN_ACCESS_REMOTE_READ);
    HPCN_CHECK(rkey >= 0);
    HPCN_CHECK(next_wc(p.server.ctx, 1, &wc) == 0);
    HPCN_CHECK(wc.status == HPCN_WC_SUCCESS && wc.opcode == HPCN_WC_OP_BIND_MW);

    /* Granted: the exact bytes. */
    HPCN_CHECK(client_read(&p, a_client, 10, p.server.mr.addr + offset, (uint32_t)rkey, granted,
                           &wc) == 0);
    HPCN_CHECK(wc.status == HPCN_WC_SUCCESS);
    HPCN_CHECK(memcmp(p.client.mem, p.server.mem + offset, granted) == 0);

    /* Another connection with the same key: refused, nothing read. */
    HPCN_CHECK(pair_connect(&p, &b_client, &b_server) == 0);
    memset(p.client.mem, 0, granted);
    HPCN_CHECK(client_read(&p, b_client, 11, p.server.mr.addr + offset, (uint32_t)rkey, granted,
                           &wc) == 0);
    printf("(other QP: %s) ", hpcn_verbs_wc_status_text(wc.vendor_status));
    HPCN_CHECK(wc.status == HPCN_WC_ERROR);
    HPCN_CHECK(p.client.mem[0] == 0 && p.client.mem[granted - 1] == 0);
    HPCN_CHECK(drop_connection(&p, b_client, b_server) == 0);

    /* The slab's own rkey opens nothing (registered for windows only). */
    HPCN_CHECK(pair_connect(&p, &b_client, &b_server) == 0);
    HPCN_CHECK(client_read(&p, b_client, 12, p.server.mr.addr, p.server.mr.rkey, 4096, &wc) == 0);
    HPCN_CHECK(wc.status == HPCN_WC_ERROR);
    HPCN_CHECK(drop_connection(&p, b_client, b_server) == 0);

    /*
     * One byte past the grant on the granted connection. The IB spec bounds a window's access
     * to its own range, which hardware enforces; rdma_rxe of Linux 6.1 checks the range of the
     * registration under the window instead (the read succeeds there, seen in the lane), so on
     * rxe this is printed, not asserted: the lane cannot prove window bounds.
     */
    HPCN_CHECK(client_read(&p, a_client, 13, p.server.mr.addr + offset, (uint32_t)rkey,
                           granted + 1, &wc) == 0);
    printf("(past the grant: %s) ", hpcn_verbs_wc_status_text(wc.vendor_status));
    if (strncmp(device, "rxe", 3) != 0)
        HPCN_CHECK(wc.status == HPCN_WC_ERROR);
    /*
     * A bound window holds its QP: deallocate it before the QP goes (rxe waits for it for
     * tens of seconds otherwise), as the transport does.
     */
    HPCN_CHECK(hpcn_verbs_mw_dealloc(p.server.ctx, mw) == 0);
    HPCN_CHECK(drop_connection(&p, a_client, a_server) == 0);

    /*
     * On a new connection, a new window: bind, invalidate, bind again. The second bind has
     * another key; the first key is dead, the second opens the bytes.
     */
    HPCN_CHECK(hpcn_verbs_mw_alloc(p.server.ctx, &mw) == 0);
    HPCN_CHECK(pair_connect(&p, &a_client, &a_server) == 0);
    rkey = hpcn_verbs_post_bind(a_server, 2, mw, p.server.mr.handle, p.server.mr.addr + offset,
                                granted, HPCN_ACCESS_REMOTE_READ);
    HPCN_CHECK(rkey >= 0);
    HPCN_CHECK(next_wc(p.server.ctx, 2, &wc) == 0 && wc.status == HPCN_WC_SUCCESS);
    HPCN_CHECK(hpcn_verbs_post_local_inv(a_server, 3, (uint32_t)rkey) == 0);
    HPCN_CHECK(next_wc(p.server.ctx, 3, &wc) == 0);
    HPCN_CHECK(wc.status == HPCN_WC_SUCCESS && wc.opcode == HPCN_WC_OP_LOCAL_INV);
    {
        int64_t again = hpcn_verbs_post_bind(a_server, 4, mw, p.server.mr.handle,
                                             p.server.mr.addr + offset, granted,
                                             HPCN_ACCESS_REMOTE_READ);

        HPCN_CHECK(again >= 0 && again != rkey);
        HPCN_CHECK(next_wc(p.server.ctx, 4, &wc) == 0 && wc.status == HPCN_WC_SUCCESS);
        HPCN_CHECK(client_read(&p, a_client, 14, p.server.mr.addr + offset, (uint32_t)again,
                               16, &wc) == 0);
        HPCN_CHECK(wc.status == HPCN_WC_SUCCESS);
    }
    HPCN_CHECK(client_read(&p, a_client, 15, p.server.mr.addr + offset, (uint32_t)rkey, 16,
                           &wc) == 0);
    HPCN_CHECK(wc.status == HPCN_WC_ERROR);

    HPCN_CHECK(hpcn_verbs_close(p.server.ctx) == -EBUSY); /* the window is alive */
    HPCN_CHECK(hpcn_verbs_mw_dealloc(p.server.ctx, mw) == 0);
    HPCN_CHECK(hpcn_verbs_live_mws(p.server.ctx) == 0);
    HPCN_CHECK(drop_connection(&p, a_client, a_server) == 0);
    return pair_close(&p);
}

static double elapsed_us(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e6 + (double)(b->tv_nsec - a->tv_nsec) / 1e3;
}

/*
 * Per transfer: bind a window + invalidate it (each a signalled work request, waited for), or
 * ibv_reg_mr + ibv_dereg_mr of the transfer's bytes. Prints microseconds per transfer.
 */
static int bench_windows_against_registration(void)
{
    static const uint32_t sizes[] = { 64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024 };
    const int rounds = 200;
    struct timespec t0;
    struct timespec t1;
    pair_t p;
    hpcn_wc_t wc;
    uint64_t client_id;
    uint64_t server_id;
    uint64_t mw;
    size_t s;
    int i;

    HPCN_CHECK(pair_open(&p) == 0);
    HPCN_CHECK(pair_connect(&p, &client_id, &server_id) == 0);
    HPCN_CHECK(hpcn_verbs_mw_alloc(p.server.ctx, &mw) == 0);
    printf("\n%-10s %16s %16s\n", "bytes", "bind+inv us", "reg+dereg us");
    for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        double bind_us;
        double reg_us;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (i = 0; i < rounds; i++) {
            int64_t rkey = hpcn_verbs_post_bind(server_id, 1, mw, p.server.mr.handle,
                                                p.server.mr.addr, sizes[s],
                                                HPCN_ACCESS_REMOTE_READ);

            HPCN_CHECK(rkey >= 0);
            HPCN_CHECK(next_wc(p.server.ctx, 1, &wc) == 0 && wc.status == HPCN_WC_SUCCESS);
            HPCN_CHECK(hpcn_verbs_post_local_inv(server_id, 2, (uint32_t)rkey) == 0);
            HPCN_CHECK(next_wc(p.server.ctx, 2, &wc) == 0 && wc.status == HPCN_WC_SUCCESS);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        bind_us = elapsed_us(&t0, &t1) / rounds;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (i = 0; i < rounds; i++) {
            hpcn_mr_info_t mr;

            HPCN_CHECK(hpcn_verbs_mr_reg(p.server.ctx, p.server.mem, sizes[s],
                                         HPCN_ACCESS_REMOTE_READ, &mr) == 0);
            HPCN_CHECK(hpcn_verbs_mr_dereg(p.server.ctx, mr.handle) == 0);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        reg_us = elapsed_us(&t0, &t1) / rounds;
        printf("%-10u %16.1f %16.1f\n", sizes[s], bind_us, reg_us);
    }
    HPCN_CHECK(hpcn_verbs_mw_dealloc(p.server.ctx, mw) == 0); /* before its QP goes */
    HPCN_CHECK(drop_connection(&p, client_id, server_id) == 0);
    return pair_close(&p);
}

int main(int argc, char **argv)
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
    if (argc > 1 && strcmp(argv[1], "bench") == 0)
        return HPCN_RUN(bench_windows_against_registration);
    failures += HPCN_RUN(loopback_send_write_read);
    failures += HPCN_RUN(connect_to_closed_port_is_refused);
    failures += HPCN_RUN(windows_open_exactly_one_transfer);
    return failures == 0 ? 0 : 1;
}
