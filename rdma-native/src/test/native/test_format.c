/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * The port record format Java parses (RdmaDevices.fromRecords). The expected strings are the
 * ones RdmaDevicesTest feeds to the parser, so the two sides are checked against one text.
 */
#include "hpcn.h"
#include "hpcn_test.h"

#include <errno.h>
#include <string.h>

static hpcn_port_t active_ib_port(void)
{
    hpcn_port_t port;

    memset(&port, 0, sizeof(port));
    port.node_guid = 0x0002c90300a0b1c2ull;
    port.port_num = 1;
    port.phys_port_cnt = 2;
    port.state = HPCN_PORT_ACTIVE;
    port.link_layer = HPCN_LINK_INFINIBAND;
    port.active_mtu = 4096;
    port.lid = 7;
    port.gid_count = 1;
    strcpy(port.device_name, "mlx5_0");
    strcpy(port.fw_ver, "16.35.2000");
    return port;
}

static int formats_a_healthy_port(void)
{
    hpcn_port_t port = active_ib_port();
    char record[HPCN_PORT_RECORD_MAX];

    HPCN_CHECK(hpcn_port_format(&port, sizeof(record), record) == 0);
    HPCN_CHECK(strcmp(record, "mlx5_0\t1\tInfiniBand\tACTIVE\t4096\t7\t1\t0002c90300a0b1c2"
                              "\t16.35.2000\t0\t\t") == 0);
    return 0;
}

static int formats_a_device_failure_with_strerror(void)
{
    hpcn_port_t port;
    char record[HPCN_PORT_RECORD_MAX];

    memset(&port, 0, sizeof(port));
    strcpy(port.device_name, "mlx5_1");
    port.err_no = EACCES;
    port.failed_call = HPCN_CALL_IBV_OPEN_DEVICE;

    HPCN_CHECK(hpcn_port_format(&port, sizeof(record), record) == 0);
    HPCN_CHECK(strcmp(record, "mlx5_1\t0\tunknown\tUNKNOWN\t0\t0\t0\t0000000000000000\t\t13"
                              "\tibv_open_device\tPermission denied") == 0);
    return 0;
}

static int separators_and_non_ascii_are_neutralised(void)
{
    hpcn_port_t port = active_ib_port();
    char record[HPCN_PORT_RECORD_MAX];
    char text[16];

    strcpy(port.fw_ver, "1.0\tbeta\xc3\xa9");
    HPCN_CHECK(hpcn_port_format(&port, sizeof(record), record) == 0);
    HPCN_CHECK(strstr(record, "\t1.0 beta??\t") != NULL);

    strcpy(text, "a\nb\x01");
    hpcn_printable_copy(text, sizeof(text), text);
    HPCN_CHECK(strcmp(text, "a b?") == 0);
    hpcn_printable_copy("truncated", 4, text);
    HPCN_CHECK(strcmp(text, "tru") == 0);
    return 0;
}

static int short_buffer_is_refused_untouched(void)
{
    hpcn_port_t port = active_ib_port();
    char record[8] = "keep";

    HPCN_CHECK(hpcn_port_format(&port, sizeof(record), record) == -ENOSPC);
    HPCN_CHECK(strcmp(record, "keep") == 0);
    HPCN_CHECK(hpcn_port_format(NULL, sizeof(record), record) == -EINVAL);
    HPCN_CHECK(hpcn_port_format(&port, sizeof(record), NULL) == -EINVAL);
    return 0;
}

int main(void)
{
    int failures = 0;

    failures += HPCN_RUN(formats_a_healthy_port);
    failures += HPCN_RUN(formats_a_device_failure_with_strerror);
    failures += HPCN_RUN(separators_and_non_ascii_are_neutralised);
    failures += HPCN_RUN(short_buffer_is_refused_untouched);
    return failures == 0 ? 0 : 1;
}
