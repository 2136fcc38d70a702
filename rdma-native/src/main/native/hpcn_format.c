/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * Text that crosses into Java. Kept out of hpcn_jni.c so the native tests can check the
 * record format without a JVM.
 */
#include "hpcn.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void hpcn_printable_copy(const char *text, size_t out_len, char *out)
{
    size_t i;

    for (i = 0; text[i] != '\0' && i + 1 < out_len; i++) {
        unsigned char c = (unsigned char)text[i];

        if (c == '\t' || c == '\n' || c == '\r')
            out[i] = ' ';
        else if (c < 0x20 || c >= 0x7f)
            out[i] = '?';
        else
            out[i] = (char)c;
    }
    out[i] = '\0';
}

void hpcn_errno_describe(int err, size_t out_len, char *out)
{
    /* XSI strerror_r (the build defines no _GNU_SOURCE): returns 0 and fills out. */
    if (strerror_r(err, out, out_len) != 0)
        snprintf(out, out_len, "unknown error %d", err);
    hpcn_printable_copy(out, out_len, out); /* a non-C locale may translate the text */
}

int hpcn_port_format(const hpcn_port_t *port, size_t out_len, char *record)
{
    char name[HPCN_NAME_MAX];
    char fw_ver[HPCN_FW_VER_MAX];
    char error[256] = "";
    char text[HPCN_PORT_RECORD_MAX];
    int written;

    if (port == NULL || record == NULL || out_len == 0)
        return -EINVAL;

    /* The struct's strings are NUL-terminated by construction; bound the copy anyway. */
    memcpy(name, port->device_name, sizeof(name));
    name[sizeof(name) - 1] = '\0';
    memcpy(fw_ver, port->fw_ver, sizeof(fw_ver));
    fw_ver[sizeof(fw_ver) - 1] = '\0';
    hpcn_printable_copy(name, sizeof(name), name);
    hpcn_printable_copy(fw_ver, sizeof(fw_ver), fw_ver);
    if (port->err_no != 0)
        hpcn_errno_describe(port->err_no, sizeof(error), error);

    written = snprintf(text, sizeof(text),
                       "%s\t%" PRIu32 "\t%s\t%s\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32
                       "\t%016" PRIx64 "\t%s\t%" PRId32 "\t%s\t%s",
                       name, port->port_num,
                       hpcn_link_layer_name((hpcn_link_layer_t)port->link_layer),
                       hpcn_port_state_name((hpcn_port_state_t)port->state), port->active_mtu,
                       port->lid, port->gid_count, port->node_guid, fw_ver, port->err_no,
                       hpcn_call_name((hpcn_call_t)port->failed_call), error);
    if (written < 0 || (size_t)written >= sizeof(text) || (size_t)written >= out_len)
        return -ENOSPC;
    memcpy(record, text, (size_t)written + 1);
    return 0;
}
