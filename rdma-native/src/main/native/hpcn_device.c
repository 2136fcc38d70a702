/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * Device probe: a read-only walk over ibv_get_device_list that opens each device just long
 * enough to query it. Nothing here allocates verbs resources beyond the context.
 */
#include "hpcn.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

_Static_assert(HPCN_NAME_MAX == IBV_SYSFS_NAME_MAX, "device name size follows libibverbs");
_Static_assert(HPCN_FW_VER_MAX == sizeof(((struct ibv_device_attr *)0)->fw_ver),
               "fw_ver size follows libibverbs");

const char *hpcn_port_state_name(hpcn_port_state_t state)
{
    switch (state) {
    case HPCN_PORT_NOP:          return "NOP";
    case HPCN_PORT_DOWN:         return "DOWN";
    case HPCN_PORT_INIT:         return "INIT";
    case HPCN_PORT_ARMED:        return "ARMED";
    case HPCN_PORT_ACTIVE:       return "ACTIVE";
    case HPCN_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
    case HPCN_PORT_UNKNOWN:      break;
    }
    return "UNKNOWN";
}

const char *hpcn_link_layer_name(hpcn_link_layer_t link_layer)
{
    switch (link_layer) {
    case HPCN_LINK_INFINIBAND: return "InfiniBand";
    case HPCN_LINK_ROCE:       return "RoCE";
    case HPCN_LINK_UNKNOWN:    break;
    }
    return "unknown";
}

const char *hpcn_call_name(hpcn_call_t call)
{
    switch (call) {
    case HPCN_CALL_IBV_OPEN_DEVICE:  return "ibv_open_device";
    case HPCN_CALL_IBV_QUERY_DEVICE: return "ibv_query_device";
    case HPCN_CALL_IBV_QUERY_PORT:   return "ibv_query_port";
    case HPCN_CALL_NONE:             break;
    }
    return "";
}

static hpcn_port_state_t port_state_from_ibv(enum ibv_port_state state)
{
    switch (state) {
    case IBV_PORT_NOP:          return HPCN_PORT_NOP;
    case IBV_PORT_DOWN:         return HPCN_PORT_DOWN;
    case IBV_PORT_INIT:         return HPCN_PORT_INIT;
    case IBV_PORT_ARMED:        return HPCN_PORT_ARMED;
    case IBV_PORT_ACTIVE:       return HPCN_PORT_ACTIVE;
    case IBV_PORT_ACTIVE_DEFER: return HPCN_PORT_ACTIVE_DEFER;
    }
    return HPCN_PORT_UNKNOWN;
}

static hpcn_link_layer_t link_layer_from_ibv(uint8_t link_layer)
{
    switch (link_layer) {
    /* Drivers that predate the link_layer attribute report UNSPECIFIED and are InfiniBand. */
    case IBV_LINK_LAYER_UNSPECIFIED:
    case IBV_LINK_LAYER_INFINIBAND:
        return HPCN_LINK_INFINIBAND;
    case IBV_LINK_LAYER_ETHERNET:
        return HPCN_LINK_ROCE;
    default:
        return HPCN_LINK_UNKNOWN;
    }
}

static uint32_t mtu_bytes(enum ibv_mtu mtu)
{
    switch (mtu) {
    case IBV_MTU_256:  return 256;
    case IBV_MTU_512:  return 512;
    case IBV_MTU_1024: return 1024;
    case IBV_MTU_2048: return 2048;
    case IBV_MTU_4096: return 4096;
    }
    return 0;
}

/*
 * RoCE GID tables have holes (entries vanish with their IP addresses), so scan the whole
 * table up to the cap and count the non-zero entries rather than stopping at the first zero.
 */
static uint32_t count_gids(struct ibv_context *ctx, uint8_t port_num, int gid_tbl_len)
{
    static const uint8_t zero[sizeof(union ibv_gid)];
    union ibv_gid gid;
    uint32_t count = 0;
    int limit = gid_tbl_len < HPCN_GID_SCAN_MAX ? gid_tbl_len : HPCN_GID_SCAN_MAX;
    int i;

    for (i = 0; i < limit; i++) {
        if (ibv_query_gid(ctx, port_num, i, &gid) != 0)
            break;
        if (memcmp(gid.raw, zero, sizeof(zero)) != 0)
            count++;
    }
    return count;
}

static void record_init(hpcn_port_t *rec, struct ibv_device *dev)
{
    memset(rec, 0, sizeof(*rec));
    snprintf(rec->device_name, sizeof(rec->device_name), "%s", ibv_get_device_name(dev));
}

static void record_failure(hpcn_port_t *rec, hpcn_call_t call, int err)
{
    rec->failed_call = call;
    rec->err_no = err != 0 ? err : EIO;
}

/* Appends the records of one device; returns how many it wrote (at least one). */
static size_t probe_one_device(struct ibv_device *dev, hpcn_port_t *out)
{
    struct ibv_device_attr dev_attr;
    struct ibv_context *ctx;
    size_t written = 0;
    uint8_t port;
    int rc;

    record_init(&out[0], dev);

    errno = 0;
    ctx = ibv_open_device(dev);
    if (ctx == NULL) {
        record_failure(&out[0], HPCN_CALL_IBV_OPEN_DEVICE, errno);
        return 1;
    }

    rc = ibv_query_device(ctx, &dev_attr);
    if (rc != 0) {
        record_failure(&out[0], HPCN_CALL_IBV_QUERY_DEVICE, rc);
        written = 1;
        goto close_device;
    }

    for (port = 1; port <= dev_attr.phys_port_cnt; port++) {
        hpcn_port_t *rec = &out[written++];
        struct ibv_port_attr port_attr;

        record_init(rec, dev);
        rec->node_guid = be64toh(dev_attr.node_guid);
        rec->phys_port_cnt = dev_attr.phys_port_cnt;
        rec->port_num = port;
        snprintf(rec->fw_ver, sizeof(rec->fw_ver), "%s", dev_attr.fw_ver);

        rc = ibv_query_port(ctx, port, &port_attr);
        if (rc != 0) {
            record_failure(rec, HPCN_CALL_IBV_QUERY_PORT, rc);
            continue;
        }
        rec->state = port_state_from_ibv(port_attr.state);
        rec->link_layer = link_layer_from_ibv(port_attr.link_layer);
        rec->active_mtu = mtu_bytes(port_attr.active_mtu);
        rec->lid = port_attr.lid;
        rec->gid_count = count_gids(ctx, port, port_attr.gid_tbl_len);
    }
    if (written == 0) {
        /* A device without ports still deserves a line saying it exists. */
        out[0].node_guid = be64toh(dev_attr.node_guid);
        snprintf(out[0].fw_ver, sizeof(out[0].fw_ver), "%s", dev_attr.fw_ver);
        written = 1;
    }

close_device:
    ibv_close_device(ctx);
    return written;
}

int hpcn_device_probe(hpcn_port_t **ports_out, size_t *count_out)
{
    struct ibv_device **list;
    hpcn_port_t *ports = NULL;
    size_t count = 0;
    int num_devices = 0;
    int i;

    if (ports_out == NULL || count_out == NULL)
        return -EINVAL;

    errno = 0;
    list = ibv_get_device_list(&num_devices);
    if (list == NULL) {
        int err = errno != 0 ? errno : EIO;

        /* No uverbs in the kernel: the same as an empty list for a probe. */
        if (err == ENOSYS) {
            *ports_out = NULL;
            *count_out = 0;
            return 0;
        }
        return -err;
    }

    if (num_devices > 0) {
        /* Port numbers are a uint8_t, so 255 records per device is a hard upper bound. */
        ports = calloc((size_t)num_devices * 255, sizeof(*ports));
        if (ports == NULL)
            goto free_device_list;
        for (i = 0; i < num_devices; i++)
            count += probe_one_device(list[i], &ports[count]);
    }

    ibv_free_device_list(list);
    *ports_out = ports;
    *count_out = count;
    return 0;

free_device_list:
    ibv_free_device_list(list);
    return -ENOMEM;
}

void hpcn_device_probe_free(hpcn_port_t *ports)
{
    free(ports);
}
