/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * The device probe must never crash: it either lists >= 0 ports or returns a clean -errno.
 * Build hosts usually have no HCA, so this mostly proves the "no devices" path; the
 * Soft-RoCE VM lane runs the same binary against rxe0.
 */
#include "hpcn.h"
#include "hpcn_test.h"

#include <errno.h>
#include <string.h>

static int probe_lists_ports_or_fails_cleanly(void)
{
    hpcn_port_t *ports = (hpcn_port_t *)&ports; /* sentinel: must stay untouched on failure */
    size_t count = 12345;
    size_t i;
    int rc;

    rc = hpcn_device_probe(&ports, &count);
    if (rc < 0) {
        printf("(probe failed cleanly: %s) ", strerror(-rc));
        HPCN_CHECK(ports == (hpcn_port_t *)&ports);
        HPCN_CHECK(count == 12345);
        return 0;
    }

    HPCN_CHECK(rc == 0);
    HPCN_CHECK(count == 0 || ports != NULL);
    printf("(%zu port records) ", count);
    for (i = 0; i < count; i++) {
        const hpcn_port_t *p = &ports[i];

        HPCN_CHECK(p->device_name[0] != '\0');
        HPCN_CHECK(memchr(p->device_name, '\0', sizeof(p->device_name)) != NULL);
        HPCN_CHECK(memchr(p->fw_ver, '\0', sizeof(p->fw_ver)) != NULL);
        HPCN_CHECK(p->reserved == 0);
        if (p->err_no != 0) {
            HPCN_CHECK(p->failed_call != HPCN_CALL_NONE);
            continue;
        }
        HPCN_CHECK(p->port_num >= 1 && p->port_num <= p->phys_port_cnt);
        HPCN_CHECK(p->gid_count <= HPCN_GID_SCAN_MAX);
        HPCN_CHECK(p->active_mtu == 0 || (p->active_mtu >= 256 && p->active_mtu <= 4096));
    }
    hpcn_device_probe_free(ports);
    return 0;
}

static int probe_rejects_null_outputs(void)
{
    hpcn_port_t *ports = NULL;
    size_t count = 0;

    HPCN_CHECK(hpcn_device_probe(NULL, &count) == -EINVAL);
    HPCN_CHECK(hpcn_device_probe(&ports, NULL) == -EINVAL);
    return 0;
}

static int names_cover_every_enum_value(void)
{
    HPCN_CHECK(strcmp(hpcn_link_layer_name(HPCN_LINK_INFINIBAND), "InfiniBand") == 0);
    HPCN_CHECK(strcmp(hpcn_link_layer_name(HPCN_LINK_ROCE), "RoCE") == 0);
    HPCN_CHECK(strcmp(hpcn_link_layer_name(HPCN_LINK_UNKNOWN), "unknown") == 0);
    HPCN_CHECK(strcmp(hpcn_port_state_name(HPCN_PORT_ACTIVE), "ACTIVE") == 0);
    HPCN_CHECK(strcmp(hpcn_port_state_name(HPCN_PORT_DOWN), "DOWN") == 0);
    HPCN_CHECK(strcmp(hpcn_port_state_name((hpcn_port_state_t)99), "UNKNOWN") == 0);
    HPCN_CHECK(strcmp(hpcn_call_name(HPCN_CALL_IBV_OPEN_DEVICE), "ibv_open_device") == 0);
    HPCN_CHECK(strcmp(hpcn_call_name(HPCN_CALL_NONE), "") == 0);
    hpcn_device_probe_free(NULL);
    return 0;
}

int main(void)
{
    int failures = 0;

    failures += HPCN_RUN(probe_lists_ports_or_fails_cleanly);
    failures += HPCN_RUN(probe_rejects_null_outputs);
    failures += HPCN_RUN(names_cover_every_enum_value);
    return failures == 0 ? 0 : 1;
}
