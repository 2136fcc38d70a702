/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * The verbs layer without a device: argument validation, error paths that must leave outputs
 * untouched, and the enum translations Java relies on instead of IBV_* values. Runs on every
 * build host; test_verbs_loopback covers the device path.
 */
#include "hpcn.h"
#include "hpcn_test.h"

#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

static int open_rejects_bad_arguments(void)
{
    hpcn_verbs_t *ctx = (hpcn_verbs_t *)&ctx;
    const char *call = "untouched";

    HPCN_CHECK(hpcn_verbs_open(NULL, 16, &ctx, &call) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_open("", 16, &ctx, &call) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_open("rxe0", 0, &ctx, &call) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_open("rxe0", 16, NULL, &call) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_open("rxe0", 16, &ctx, NULL) == -EINVAL);
    HPCN_CHECK(ctx == (hpcn_verbs_t *)&ctx);
    HPCN_CHECK(strcmp(call, "untouched") == 0);
    return 0;
}

static int open_of_missing_device_fails_cleanly(void)
{
    hpcn_verbs_t *ctx = (hpcn_verbs_t *)&ctx;
    const char *call = NULL;
    int rc;

    rc = hpcn_verbs_open("hpcn-no-such-device", 16, &ctx, &call);
    printf("(%s: %s) ", call != NULL ? call : "?", strerror(-rc));
    HPCN_CHECK(rc < 0);
    HPCN_CHECK(call != NULL && call[0] != '\0');
    HPCN_CHECK(ctx == (hpcn_verbs_t *)&ctx);
    return 0;
}

static int null_context_is_einval_everywhere(void)
{
    hpcn_wc_t wc;
    hpcn_cm_event_t ev;
    hpcn_mr_info_t mr;
    uint64_t id;
    uint32_t qpn;
    int port;
    char buf[16];

    HPCN_CHECK(hpcn_verbs_close(NULL) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_wake(NULL) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_wait(NULL, 0) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_poll_cq(NULL, &wc, 1) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_poll_cm(NULL, &ev, 1) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_live_ids(NULL) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_live_mrs(NULL) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_cq_size(NULL) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_cq_resize(NULL, 8) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_listen(NULL, buf, sizeof(buf), 8, &id, &port) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_connect_start(NULL, buf, sizeof(buf), 100, &id) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_qp_create(NULL, 1, 1, 1, &qpn) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_connect(NULL, 1, NULL, 0) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_accept(NULL, 1, NULL, 0, 1, 1) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_destroy_id(NULL, 1) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_mr_reg(NULL, buf, sizeof(buf), HPCN_ACCESS_WINDOWS, &mr) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_mw_alloc(NULL, &id) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_mw_dealloc(NULL, 1) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_live_mws(NULL) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_has_windows(NULL) == 0);
    HPCN_CHECK(hpcn_verbs_mr_dereg(NULL, 1) == -EINVAL);
    return 0;
}

static int zero_handles_are_einval(void)
{
    hpcn_sge_t sge = { .addr = 0x1000, .length = 8, .lkey = 1 };

    HPCN_CHECK(hpcn_verbs_resolve_route(0, 100) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_reject(0) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_notify_established(0) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_disconnect(0) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_local_port(0) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_peer_address(0, 18, (uint8_t *)&sge) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_send(0, 1, &sge, 1) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_send_imm(0, 1, &sge, 1, 7) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_recv(0, 1, &sge, 1) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_rdma(0, 1, 1, &sge, 0x2000, 5) == -EINVAL);
    return 0;
}

static int post_validates_scatter_gather_before_touching_the_qp(void)
{
    /* A non-zero handle that must never be dereferenced: validation comes first. */
    uint64_t bogus = 0;
    hpcn_sge_t sge[3] = {
        { .addr = 0x1000, .length = 8, .lkey = 1 },
        { .addr = 0x2000, .length = 8, .lkey = 1 },
        { .addr = 0x3000, .length = 8, .lkey = 1 },
    };
    hpcn_sge_t null_addr = { .addr = 0, .length = 8, .lkey = 1 };

    bogus = (uint64_t)(uintptr_t)&bogus;
    HPCN_CHECK(hpcn_verbs_post_send(bogus, 1, sge, 3) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_send(bogus, 1, sge, -1) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_send(bogus, 1, NULL, 1) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_send(bogus, 1, &null_addr, 1) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_recv(bogus, 1, sge, 0) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_recv(bogus, 1, sge, 3) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_rdma(bogus, 1, 0, NULL, 0x2000, 5) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_rdma(bogus, 1, 0, sge, 0, 5) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_rdma(bogus, 1, 0, &null_addr, 0x2000, 5) == -EINVAL);
    /* A remote range that wraps around the address space is refused before posting. */
    HPCN_CHECK(hpcn_verbs_post_rdma(bogus, 1, 1, sge, UINT64_MAX - 3, 5) == -EINVAL);
    /* Binds: no length, no access, unknown access bits, a wrapping range. */
    HPCN_CHECK(hpcn_verbs_post_bind(bogus, 1, bogus, bogus, 0x1000, 0,
                                    HPCN_ACCESS_REMOTE_READ) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_bind(bogus, 1, bogus, bogus, 0x1000, 8, 0) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_bind(bogus, 1, bogus, bogus, 0x1000, 8,
                                    HPCN_ACCESS_WINDOWS) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_bind(bogus, 1, bogus, bogus, UINT64_MAX - 3, 8,
                                    HPCN_ACCESS_REMOTE_READ) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_bind(0, 1, bogus, bogus, 0x1000, 8,
                                    HPCN_ACCESS_REMOTE_READ) == -EINVAL);
    HPCN_CHECK(hpcn_verbs_post_local_inv(0, 1, 5) == -EINVAL);
    return 0;
}

static int completion_status_flush_is_not_an_error(void)
{
    HPCN_CHECK(hpcn_verbs_wc_status_from_ibv(IBV_WC_SUCCESS) == HPCN_WC_SUCCESS);
    HPCN_CHECK(hpcn_verbs_wc_status_from_ibv(IBV_WC_WR_FLUSH_ERR) == HPCN_WC_FLUSHED);
    HPCN_CHECK(hpcn_verbs_wc_status_from_ibv(IBV_WC_REM_ACCESS_ERR) == HPCN_WC_ERROR);
    HPCN_CHECK(hpcn_verbs_wc_status_from_ibv(IBV_WC_RETRY_EXC_ERR) == HPCN_WC_ERROR);
    HPCN_CHECK(hpcn_verbs_wc_status_text(IBV_WC_REM_ACCESS_ERR) != NULL);
    HPCN_CHECK(strlen(hpcn_verbs_wc_status_text(IBV_WC_REM_ACCESS_ERR)) > 0);
    return 0;
}

static int opcodes_translate(void)
{
    HPCN_CHECK(hpcn_verbs_wc_opcode_from_ibv(IBV_WC_SEND) == HPCN_WC_OP_SEND);
    HPCN_CHECK(hpcn_verbs_wc_opcode_from_ibv(IBV_WC_RECV) == HPCN_WC_OP_RECV);
    HPCN_CHECK(hpcn_verbs_wc_opcode_from_ibv(IBV_WC_RECV_RDMA_WITH_IMM) == HPCN_WC_OP_RECV);
    HPCN_CHECK(hpcn_verbs_wc_opcode_from_ibv(IBV_WC_RDMA_WRITE) == HPCN_WC_OP_RDMA_WRITE);
    HPCN_CHECK(hpcn_verbs_wc_opcode_from_ibv(IBV_WC_RDMA_READ) == HPCN_WC_OP_RDMA_READ);
    HPCN_CHECK(hpcn_verbs_wc_opcode_from_ibv(IBV_WC_COMP_SWAP) == HPCN_WC_OP_UNKNOWN);
    return 0;
}

static int cm_events_translate(void)
{
    HPCN_CHECK(hpcn_verbs_cm_type_from_rdma(RDMA_CM_EVENT_CONNECT_REQUEST) ==
               HPCN_CM_CONNECT_REQUEST);
    HPCN_CHECK(hpcn_verbs_cm_type_from_rdma(RDMA_CM_EVENT_ESTABLISHED) == HPCN_CM_ESTABLISHED);
    HPCN_CHECK(hpcn_verbs_cm_type_from_rdma(RDMA_CM_EVENT_DISCONNECTED) ==
               HPCN_CM_DISCONNECTED);
    HPCN_CHECK(hpcn_verbs_cm_type_from_rdma(RDMA_CM_EVENT_REJECTED) == HPCN_CM_REJECTED);
    HPCN_CHECK(hpcn_verbs_cm_type_from_rdma(RDMA_CM_EVENT_TIMEWAIT_EXIT) == HPCN_CM_OTHER);
    HPCN_CHECK(strcmp(hpcn_cm_event_name(HPCN_CM_ESTABLISHED), "ESTABLISHED") == 0);
    HPCN_CHECK(strcmp(hpcn_cm_event_name((hpcn_cm_event_type_t)99), "OTHER") == 0);
    return 0;
}

static int records_are_packed_for_java(void)
{
    HPCN_CHECK(sizeof(hpcn_wc_t) == 40);
    HPCN_CHECK(sizeof(hpcn_cm_event_t) == 96);
    HPCN_CHECK(sizeof(hpcn_sge_t) == 16);
    return 0;
}

int main(void)
{
    int failures = 0;

    failures += HPCN_RUN(open_rejects_bad_arguments);
    failures += HPCN_RUN(open_of_missing_device_fails_cleanly);
    failures += HPCN_RUN(null_context_is_einval_everywhere);
    failures += HPCN_RUN(zero_handles_are_einval);
    failures += HPCN_RUN(post_validates_scatter_gather_before_touching_the_qp);
    failures += HPCN_RUN(completion_status_flush_is_not_an_error);
    failures += HPCN_RUN(opcodes_translate);
    failures += HPCN_RUN(cm_events_translate);
    failures += HPCN_RUN(records_are_packed_for_java);
    return failures == 0 ? 0 : 1;
}
