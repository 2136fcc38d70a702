/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * JNI bindings for org.hadoophpc.net.verbs.VerbsNatives (the verbs transport's only caller,
 * which is why its natives live beside it rather than in nativeio.NativeMethods). Registered
 * from JNI_OnLoad like every other native of the library.
 *
 * Slow path (set-up, tear-down, registration) throws NativeIoException(call, errno, strerror).
 * Data path (wait, poll, post, wake, disconnect) returns >= 0 or -errno and never throws; it
 * takes only primitives and pre-allocated direct buffers. Handles are jlongs (pointers).
 */
#include "hpcn.h"
#include "hpcn_jni.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <jni.h>

#define PRIVATE_DATA_MAX 56

static inline hpcn_verbs_t *ctx_of(jlong handle)
{
    return (hpcn_verbs_t *)(uintptr_t)handle;
}

/* Builds an IPv4/IPv6 socket address from a 4- or 16-byte array; 0 or a positive errno. */
static int sockaddr_from(JNIEnv *env, jbyteArray ip, jint port, struct sockaddr_storage *out,
                         size_t *len_out)
{
    jsize len;

    if (ip == NULL || port < 0 || port > 65535)
        return EINVAL;
    len = (*env)->GetArrayLength(env, ip);
    memset(out, 0, sizeof(*out));
    if (len == 4) {
        struct sockaddr_in *in = (struct sockaddr_in *)out;

        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)port);
        (*env)->GetByteArrayRegion(env, ip, 0, 4, (jbyte *)&in->sin_addr);
        *len_out = sizeof(*in);
        return 0;
    }
    if (len == 16) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;

        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        (*env)->GetByteArrayRegion(env, ip, 0, 16, (jbyte *)&in6->sin6_addr);
        *len_out = sizeof(*in6);
        return 0;
    }
    return EAFNOSUPPORT;
}

/* Copies a private-data array into buf; its length, or -1 with an exception pending. */
static jint private_data_from(JNIEnv *env, jbyteArray data, jbyte *buf, const char *call)
{
    jsize len;

    if (data == NULL)
        return 0;
    len = (*env)->GetArrayLength(env, data);
    if (len > PRIVATE_DATA_MAX) {
        hpcn_jni_throw(env, call, EMSGSIZE);
        return -1;
    }
    (*env)->GetByteArrayRegion(env, data, 0, len, buf);
    return len;
}

static jlong JNICALL native_open(JNIEnv *env, jclass cls, jstring device, jint cq_entries)
{
    const char *failed_call = "hpcn_verbs_open";
    hpcn_verbs_t *ctx;
    const char *name;
    int rc;

    (void)cls;
    if (device == NULL) {
        hpcn_jni_throw(env, failed_call, EINVAL);
        return 0;
    }
    name = (*env)->GetStringUTFChars(env, device, NULL);
    if (name == NULL)
        return 0;
    rc = hpcn_verbs_open(name, cq_entries, &ctx, &failed_call);
    (*env)->ReleaseStringUTFChars(env, device, name);
    if (rc < 0) {
        hpcn_jni_throw(env, failed_call, -rc);
        return 0;
    }
    return (jlong)(uintptr_t)ctx;
}

static void JNICALL native_close(JNIEnv *env, jclass cls, jlong ctx)
{
    int rc;

    (void)cls;
    rc = hpcn_verbs_close(ctx_of(ctx));
    if (rc < 0)
        hpcn_jni_throw(env, "hpcn_verbs_close", -rc);
}

static jint JNICALL native_live_ids(JNIEnv *env, jclass cls, jlong ctx)
{
    (void)env;
    (void)cls;
    return hpcn_verbs_live_ids(ctx_of(ctx));
}

static jint JNICALL native_live_mrs(JNIEnv *env, jclass cls, jlong ctx)
{
    (void)env;
    (void)cls;
    return hpcn_verbs_live_mrs(ctx_of(ctx));
}

static jint JNICALL native_cq_size(JNIEnv *env, jclass cls, jlong ctx)
{
    (void)env;
    (void)cls;
    return hpcn_verbs_cq_size(ctx_of(ctx));
}

static void JNICALL native_resize_cq(JNIEnv *env, jclass cls, jlong ctx, jint entries)
{
    int rc;

    (void)cls;
    rc = hpcn_verbs_cq_resize(ctx_of(ctx), entries);
    if (rc < 0)
        hpcn_jni_throw(env, "ibv_resize_cq", -rc);
}

static jlong JNICALL native_listen(JNIEnv *env, jclass cls, jlong ctx, jbyteArray ip, jint port,
                                   jint backlog)
{
    struct sockaddr_storage addr;
    size_t len = 0;
    uint64_t id;
    int bound;
    int rc;

    (void)cls;
    rc = sockaddr_from(env, ip, port, &addr, &len);
    if (rc != 0) {
        hpcn_jni_throw(env, "rdma_bind_addr", rc);
        return 0;
    }
    rc = hpcn_verbs_listen(ctx_of(ctx), &addr, len, backlog, &id, &bound);
    if (rc < 0) {
        hpcn_jni_throw(env, "rdma_listen", -rc);
        return 0;
    }
    return (jlong)id;
}

static jint JNICALL native_local_port(JNIEnv *env, jclass cls, jlong id)
{
    (void)env;
    (void)cls;
    return hpcn_verbs_local_port((uint64_t)id);
}

static jbyteArray JNICALL native_peer_address(JNIEnv *env, jclass cls, jlong id)
{
    uint8_t raw[18];
    jbyteArray out;
    int n;

    (void)cls;
    n = hpcn_verbs_peer_address((uint64_t)id, sizeof(raw), raw);
    if (n < 0) {
        hpcn_jni_throw(env, "rdma_get_peer_addr", -n);
        return NULL;
    }
    out = (*env)->NewByteArray(env, n);
    if (out == NULL)
        return NULL;
    (*env)->SetByteArrayRegion(env, out, 0, n, (const jbyte *)raw);
    return out;
}

static jlong JNICALL native_connect_start(JNIEnv *env, jclass cls, jlong ctx, jbyteArray ip,
                                          jint port, jint timeout_ms)
{
    struct sockaddr_storage addr;
    size_t len = 0;
    uint64_t id;
    int rc;

    (void)cls;
    rc = sockaddr_from(env, ip, port, &addr, &len);
    if (rc != 0) {
        hpcn_jni_throw(env, "rdma_resolve_addr", rc);
        return 0;
    }
    rc = hpcn_verbs_connect_start(ctx_of(ctx), &addr, len, timeout_ms, &id);
    if (rc < 0) {
        hpcn_jni_throw(env, "rdma_resolve_addr", -rc);
        return 0;
    }
    return (jlong)id;
}

static void JNICALL native_resolve_route(JNIEnv *env, jclass cls, jlong id, jint timeout_ms)
{
    int rc;

    (void)cls;
    rc = hpcn_verbs_resolve_route((uint64_t)id, timeout_ms);
    if (rc < 0)
        hpcn_jni_throw(env, "rdma_resolve_route", -rc);
}

static jint JNICALL native_create_qp(JNIEnv *env, jclass cls, jlong ctx, jlong id,
                                     jint send_depth, jint recv_depth)
{
    uint32_t qp_num;
    int rc;

    (void)cls;
    rc = hpcn_verbs_qp_create(ctx_of(ctx), (uint64_t)id, send_depth, recv_depth, &qp_num);
    if (rc < 0) {
        hpcn_jni_throw(env, "rdma_create_qp", -rc);
        return 0;
    }
    return (jint)qp_num;
}

static void JNICALL native_connect(JNIEnv *env, jclass cls, jlong ctx, jlong id,
                                   jbyteArray private_data)
{
    jbyte buf[PRIVATE_DATA_MAX];
    jint len;
    int rc;

    (void)cls;
    len = private_data_from(env, private_data, buf, "rdma_connect");
    if (len < 0)
        return;
    rc = hpcn_verbs_connect(ctx_of(ctx), (uint64_t)id, buf, (size_t)len);
    if (rc < 0)
        hpcn_jni_throw(env, "rdma_connect", -rc);
}

static void JNICALL native_accept(JNIEnv *env, jclass cls, jlong ctx, jlong id,
                                  jbyteArray private_data, jint peer_responder_resources,
                                  jint peer_initiator_depth)
{
    jbyte buf[PRIVATE_DATA_MAX];
    jint len;
    int rc;

    (void)cls;
    len = private_data_from(env, private_data, buf, "rdma_accept");
    if (len < 0)
        return;
    rc = hpcn_verbs_accept(ctx_of(ctx), (uint64_t)id, buf, (size_t)len,
                           peer_responder_resources, peer_initiator_depth);
    if (rc < 0)
        hpcn_jni_throw(env, "rdma_accept", -rc);
}

static jint JNICALL native_reject(JNIEnv *env, jclass cls, jlong id)
{
    (void)env;
    (void)cls;
    return hpcn_verbs_reject((uint64_t)id);
}

static jint JNICALL native_notify_established(JNIEnv *env, jclass cls, jlong id)
{
    (void)env;
    (void)cls;
    return hpcn_verbs_notify_established((uint64_t)id);
}

static jint JNICALL native_disconnect(JNIEnv *env, jclass cls, jlong id)
{
    (void)env;
    (void)cls;
    return hpcn_verbs_disconnect((uint64_t)id);
}

static void JNICALL native_destroy_id(JNIEnv *env, jclass cls, jlong ctx, jlong id)
{
    int rc;

    (void)cls;
    rc = hpcn_verbs_destroy_id(ctx_of(ctx), (uint64_t)id);
    if (rc < 0)
        hpcn_jni_throw(env, "rdma_destroy_id", -rc);
}

static jlong JNICALL native_reg_mr(JNIEnv *env, jclass cls, jlong ctx, jobject slab,
                                   jlong offset, jlong length, jint access, jlongArray info)
{
    hpcn_mr_info_t mr;
    jlong values[3];
    void *addr;
    jlong capacity;
    int rc;

    (void)cls;
    if (slab == NULL || info == NULL || (*env)->GetArrayLength(env, info) < 3) {
        hpcn_jni_throw(env, "ibv_reg_mr", EINVAL);
        return 0;
    }
    addr = (*env)->GetDirectBufferAddress(env, slab);
    capacity = (*env)->GetDirectBufferCapacity(env, slab);
    if (addr == NULL || capacity <= 0 || offset < 0 || length <= 0 || offset > capacity ||
        length > capacity - offset) {
        hpcn_jni_throw(env, "ibv_reg_mr", EINVAL); /* not a direct buffer, or out of it */
        return 0;
    }
    rc = hpcn_verbs_mr_reg(ctx_of(ctx), (uint8_t *)addr + offset, (size_t)length,
                           (uint32_t)access, &mr);
    if (rc < 0) {
        hpcn_jni_throw(env, "ibv_reg_mr", -rc);
        return 0;
    }
    values[0] = (jlong)mr.addr;
    values[1] = (jlong)mr.lkey;
    values[2] = (jlong)mr.rkey;
    (*env)->SetLongArrayRegion(env, info, 0, 3, values);
    return (jlong)mr.handle;
}

static void JNICALL native_dereg_mr(JNIEnv *env, jclass cls, jlong ctx, jlong handle)
{
    int rc;

    (void)cls;
    rc = hpcn_verbs_mr_dereg(ctx_of(ctx), (uint64_t)handle);
    if (rc < 0)
        hpcn_jni_throw(env, "ibv_dereg_mr", -rc);
}

static jboolean JNICALL native_has_windows(JNIEnv *env, jclass cls, jlong ctx)
{
    (void)env;
    (void)cls;
    return hpcn_verbs_has_windows(ctx_of(ctx)) ? JNI_TRUE : JNI_FALSE;
}

static jlong JNICALL native_mw_alloc(JNIEnv *env, jclass cls, jlong ctx)
{
    uint64_t handle;
    int rc;

    (void)cls;
    rc = hpcn_verbs_mw_alloc(ctx_of(ctx), &handle);
    if (rc < 0) {
        hpcn_jni_throw(env, "ibv_alloc_mw", -rc);
        return 0;
    }
    return (jlong)handle;
}

static void JNICALL native_mw_dealloc(JNIEnv *env, jclass cls, jlong ctx, jlong handle)
{
    int rc;

    (void)cls;
    rc = hpcn_verbs_mw_dealloc(ctx_of(ctx), (uint64_t)handle);
    if (rc < 0)
        hpcn_jni_throw(env, "ibv_dealloc_mw", -rc);
}

static jint JNICALL native_live_mws(JNIEnv *env, jclass cls, jlong ctx)
{
    (void)env;
    (void)cls;
    return hpcn_verbs_live_mws(ctx_of(ctx));
}

static jlong JNICALL native_post_bind(JNIEnv *env, jclass cls, jlong id, jlong wr_id, jlong mw,
                                      jlong mr, jlong addr, jint len, jint access)
{
    (void)env;
    (void)cls;
    if (len <= 0)
        return -EINVAL;
    return (jlong)hpcn_verbs_post_bind((uint64_t)id, (uint64_t)wr_id, (uint64_t)mw,
                                       (uint64_t)mr, (uint64_t)addr, (uint64_t)len,
                                       (uint32_t)access);
}

static jint JNICALL native_post_local_inv(JNIEnv *env, jclass cls, jlong id, jlong wr_id,
                                          jint rkey)
{
    (void)env;
    (void)cls;
    return hpcn_verbs_post_local_inv((uint64_t)id, (uint64_t)wr_id, (uint32_t)rkey);
}

static jint JNICALL native_wake(JNIEnv *env, jclass cls, jlong ctx)
{
    (void)env;
    (void)cls;
    return hpcn_verbs_wake(ctx_of(ctx));
}

static jint JNICALL native_wait_events(JNIEnv *env, jclass cls, jlong ctx, jint timeout_ms)
{
    (void)env;
    (void)cls;
    return hpcn_verbs_wait(ctx_of(ctx), timeout_ms);
}

/* The records area of a direct buffer, or NULL when it is not one or too small. */
static void *records_of(JNIEnv *env, jobject records, jint max, size_t record_size)
{
    void *addr;
    jlong capacity;

    if (records == NULL || max < 0)
        return NULL;
    addr = (*env)->GetDirectBufferAddress(env, records);
    capacity = (*env)->GetDirectBufferCapacity(env, records);
    if (addr == NULL || capacity < 0 || (size_t)capacity < (size_t)max * record_size)
        return NULL;
    return addr;
}

static jint JNICALL native_poll_cq(JNIEnv *env, jclass cls, jlong ctx, jobject records, jint max)
{
    hpcn_wc_t *out = records_of(env, records, max, sizeof(hpcn_wc_t));

    (void)cls;
    if (out == NULL)
        return -EINVAL;
    return hpcn_verbs_poll_cq(ctx_of(ctx), out, max);
}

static jint JNICALL native_poll_cm(JNIEnv *env, jclass cls, jlong ctx, jobject records, jint max)
{
    hpcn_cm_event_t *out = records_of(env, records, max, sizeof(hpcn_cm_event_t));

    (void)cls;
    if (out == NULL)
        return -EINVAL;
    return hpcn_verbs_poll_cm(ctx_of(ctx), out, max);
}

/* One header SGE (always) and one payload SGE when len > 0. */
static int two_sges(jlong hdr_addr, jint hdr_len, jint hdr_lkey, jlong addr, jint len, jint lkey,
                    hpcn_sge_t *sge)
{
    if (hdr_len <= 0 || len < 0)
        return -EINVAL;
    sge[0].addr = (uint64_t)hdr_addr;
    sge[0].length = (uint32_t)hdr_len;
    sge[0].lkey = (uint32_t)hdr_lkey;
    if (len == 0)
        return 1;
    sge[1].addr = (uint64_t)addr;
    sge[1].length = (uint32_t)len;
    sge[1].lkey = (uint32_t)lkey;
    return 2;
}

static jint JNICALL native_post_send(JNIEnv *env, jclass cls, jlong id, jlong wr_id,
                                     jlong hdr_addr, jint hdr_len, jint hdr_lkey, jlong addr,
                                     jint len, jint lkey)
{
    hpcn_sge_t sge[HPCN_MAX_SGE];
    int n = two_sges(hdr_addr, hdr_len, hdr_lkey, addr, len, lkey, sge);

    (void)env;
    (void)cls;
    if (n < 0)
        return n;
    return hpcn_verbs_post_send((uint64_t)id, (uint64_t)wr_id, sge, n);
}

static jint JNICALL native_post_recv(JNIEnv *env, jclass cls, jlong id, jlong wr_id,
                                     jlong hdr_addr, jint hdr_len, jint hdr_lkey, jlong addr,
                                     jint len, jint lkey)
{
    hpcn_sge_t sge[HPCN_MAX_SGE];
    int n = two_sges(hdr_addr, hdr_len, hdr_lkey, addr, len, lkey, sge);

    (void)env;
    (void)cls;
    if (n < 0)
        return n;
    return hpcn_verbs_post_recv((uint64_t)id, (uint64_t)wr_id, sge, n);
}

static jint JNICALL native_post_rdma(JNIEnv *env, jclass cls, jlong id, jlong wr_id,
                                     jboolean read, jlong addr, jint len, jint lkey,
                                     jlong remote_addr, jint rkey)
{
    hpcn_sge_t local;

    (void)env;
    (void)cls;
    if (len < 0)
        return -EINVAL;
    local.addr = (uint64_t)addr;
    local.length = (uint32_t)len;
    local.lkey = (uint32_t)lkey;
    return hpcn_verbs_post_rdma((uint64_t)id, (uint64_t)wr_id, read == JNI_TRUE, &local,
                                (uint64_t)remote_addr, (uint32_t)rkey);
}

static jstring JNICALL native_wc_status_text(JNIEnv *env, jclass cls, jint vendor_status)
{
    char text[128];

    (void)cls;
    hpcn_printable_copy(hpcn_verbs_wc_status_text((uint32_t)vendor_status), sizeof(text), text);
    return (*env)->NewStringUTF(env, text);
}

static const JNINativeMethod verbs_methods[] = {
    { "open", "(Ljava/lang/String;I)J", (void *)native_open },
    { "close", "(J)V", (void *)native_close },
    { "liveIds", "(J)I", (void *)native_live_ids },
    { "liveMrs", "(J)I", (void *)native_live_mrs },
    { "cqSize", "(J)I", (void *)native_cq_size },
    { "resizeCq", "(JI)V", (void *)native_resize_cq },
    { "listen", "(J[BII)J", (void *)native_listen },
    { "localPort", "(J)I", (void *)native_local_port },
    { "peerAddress", "(J)[B", (void *)native_peer_address },
    { "connectStart", "(J[BII)J", (void *)native_connect_start },
    { "resolveRoute", "(JI)V", (void *)native_resolve_route },
    { "createQp", "(JJII)I", (void *)native_create_qp },
    { "connect", "(JJ[B)V", (void *)native_connect },
    { "accept", "(JJ[BII)V", (void *)native_accept },
    { "reject", "(J)I", (void *)native_reject },
    { "notifyEstablished", "(J)I", (void *)native_notify_established },
    { "disconnect", "(J)I", (void *)native_disconnect },
    { "destroyId", "(JJ)V", (void *)native_destroy_id },
    { "regMr", "(JLjava/nio/ByteBuffer;JJI[J)J", (void *)native_reg_mr },
    { "hasWindows", "(J)Z", (void *)native_has_windows },
    { "mwAlloc", "(J)J", (void *)native_mw_alloc },
    { "mwDealloc", "(JJ)V", (void *)native_mw_dealloc },
    { "liveMws", "(J)I", (void *)native_live_mws },
    { "postBind", "(JJJJJII)J", (void *)native_post_bind },
    { "postLocalInv", "(JJI)I", (void *)native_post_local_inv },
    { "deregMr", "(JJ)V", (void *)native_dereg_mr },
    { "wake", "(J)I", (void *)native_wake },
    { "waitEvents", "(JI)I", (void *)native_wait_events },
    { "pollCq", "(JLjava/nio/ByteBuffer;I)I", (void *)native_poll_cq },
    { "pollCm", "(JLjava/nio/ByteBuffer;I)I", (void *)native_poll_cm },
    { "postSend", "(JJJIIJII)I", (void *)native_post_send },
    { "postRecv", "(JJJIIJII)I", (void *)native_post_recv },
    { "postRdma", "(JJZJIIJI)I", (void *)native_post_rdma },
    { "wcStatusText", "(I)Ljava/lang/String;", (void *)native_wc_status_text },
};

jint hpcn_jni_verbs_register(JNIEnv *env, jclass cls)
{
    jint rc = (*env)->RegisterNatives(env, cls, verbs_methods,
                                      (jint)(sizeof(verbs_methods) / sizeof(verbs_methods[0])));

    return rc == JNI_OK ? JNI_OK : JNI_ERR;
}
