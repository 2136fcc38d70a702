/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * Version and record-layout handshake. Java compares these values with its own constants at
 * load time and refuses a mismatched library instead of reading garbage off-heap later.
 */
#include "hpcn.h"

#include <errno.h>
#include <stddef.h>

_Static_assert(sizeof(hpcn_port_t) % 8 == 0, "hpcn_port_t must stay 8-byte padded");
_Static_assert(sizeof(hpcn_wc_t) % 8 == 0, "hpcn_wc_t records are packed back to back");
_Static_assert(sizeof(hpcn_cm_event_t) % 8 == 0, "hpcn_cm_event_t records are packed back to back");

int hpcn_abi_version(void)
{
    return HPCN_ABI_VERSION;
}

const char *hpcn_version(void)
{
    return HPCN_VERSION;
}

int hpcn_abi_layout(size_t capacity, int32_t *layout, size_t *count_out)
{
    const int32_t values[HPCN_ABI_LAYOUT_LEN] = {
        (int32_t)sizeof(hpcn_port_t),
        (int32_t)offsetof(hpcn_port_t, node_guid),
        (int32_t)offsetof(hpcn_port_t, port_num),
        (int32_t)offsetof(hpcn_port_t, phys_port_cnt),
        (int32_t)offsetof(hpcn_port_t, state),
        (int32_t)offsetof(hpcn_port_t, link_layer),
        (int32_t)offsetof(hpcn_port_t, active_mtu),
        (int32_t)offsetof(hpcn_port_t, lid),
        (int32_t)offsetof(hpcn_port_t, gid_count),
        (int32_t)offsetof(hpcn_port_t, err_no),
        (int32_t)offsetof(hpcn_port_t, failed_call),
        (int32_t)offsetof(hpcn_port_t, device_name),
        (int32_t)offsetof(hpcn_port_t, fw_ver),
        (int32_t)sizeof(hpcn_wc_t),
        (int32_t)offsetof(hpcn_wc_t, wr_id),
        (int32_t)offsetof(hpcn_wc_t, status),
        (int32_t)offsetof(hpcn_wc_t, opcode),
        (int32_t)offsetof(hpcn_wc_t, byte_len),
        (int32_t)offsetof(hpcn_wc_t, qp_num),
        (int32_t)offsetof(hpcn_wc_t, imm),
        (int32_t)offsetof(hpcn_wc_t, flags),
        (int32_t)offsetof(hpcn_wc_t, vendor_status),
        (int32_t)sizeof(hpcn_cm_event_t),
        (int32_t)offsetof(hpcn_cm_event_t, id),
        (int32_t)offsetof(hpcn_cm_event_t, listen_id),
        (int32_t)offsetof(hpcn_cm_event_t, type),
        (int32_t)offsetof(hpcn_cm_event_t, status),
        (int32_t)offsetof(hpcn_cm_event_t, private_data_len),
        (int32_t)offsetof(hpcn_cm_event_t, responder_resources),
        (int32_t)offsetof(hpcn_cm_event_t, initiator_depth),
        (int32_t)offsetof(hpcn_cm_event_t, private_data),
    };
    size_t i;

    if (layout == NULL || count_out == NULL)
        return -EINVAL;
    if (capacity < HPCN_ABI_LAYOUT_LEN)
        return -ENOSPC;

    for (i = 0; i < HPCN_ABI_LAYOUT_LEN; i++)
        layout[i] = values[i];
    *count_out = HPCN_ABI_LAYOUT_LEN;
    return 0;
}
