/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * JNI bindings for org.hadoophpc.nativeio.NativeMethods. Every function here is static and
 * registered in JNI_OnLoad, so JNI_OnLoad/JNI_OnUnload are the library's only exports and a
 * renamed Java method fails loudly at load time instead of at first call.
 *
 * The verbs transport's natives (slow and data path) are in hpcn_jni_verbs.c, bound on request
 * (NativeMethods.bindVerbs) because their class is in the transport's jar.
 * Only slow-path natives live here; they throw NativeIoException(call, errno, strerror).
 * Strings handed to Java go through hpcn_printable_copy() because NewStringUTF wants
 * modified UTF-8 and dlerror()/sysfs text is arbitrary bytes.
 *
 * Record formats (keep in step with RdmaDevices.java and LustreApi.java):
 *   probeDevices(): one String per hpcn_port_t, formatted by hpcn_port_format (hpcn.h).
 *   probeLustre(library): one String, 3 tab-separated fields:
 *     status ("AVAILABLE" | "NOT_FOUND" | "INCOMPLETE"), comma-separated missing symbols,
 *     dlerror() text (may be empty; last field, so it may hold anything but a NUL).
 *   lustreLayout(path): long[] { stripe size, stripe count, OST of stripe 0, 1, ... } with as
 *     many OSTs as hpcn_lustre_layout_get knew (see hpcn.h; 0 size/count: unknown).
 *   memlockLimit(): bytes, Long.MAX_VALUE for "no limit applies" (UINT64_MAX in C).
 */
#include "hpcn.h"
#include "hpcn_jni.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jni.h>

#define NATIVE_METHODS_CLASS "org/hadoophpc/nativeio/NativeMethods"
#define EXCEPTION_CLASS "org/hadoophpc/nativeio/NativeIoException"
#define RECORD_MAX 1024
#define LUSTRE_STRIPES_MAX 2000 /* Lustre's LOV_MAX_STRIPE_COUNT */

static struct {
    jclass string_class;
    jclass exception_class;
    jmethodID exception_ctor; /* NativeIoException(String call, int errno, String message) */
    jfieldID descriptor_fd;   /* java.io.FileDescriptor.fd (JNI does not check access) */
} cache;

void hpcn_jni_throw(JNIEnv *env, const char *call, int err)
{
    char message[256];
    jstring jcall;
    jstring jmessage;
    jobject exception;

    hpcn_errno_describe(err, sizeof(message), message);

    jcall = (*env)->NewStringUTF(env, call);
    if (jcall == NULL)
        return; /* OutOfMemoryError is pending */
    jmessage = (*env)->NewStringUTF(env, message);
    if (jmessage == NULL)
        goto delete_call;
    exception = (*env)->NewObject(env, cache.exception_class, cache.exception_ctor, jcall,
                                  (jint)err, jmessage);
    if (exception == NULL)
        goto delete_message;
    (*env)->Throw(env, (jthrowable)exception);
    (*env)->DeleteLocalRef(env, exception);

delete_message:
    (*env)->DeleteLocalRef(env, jmessage);
delete_call:
    (*env)->DeleteLocalRef(env, jcall);
}

static jint JNICALL native_abi_version(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    return hpcn_abi_version();
}

static jstring JNICALL native_version(JNIEnv *env, jclass cls)
{
    (void)cls;
    return (*env)->NewStringUTF(env, hpcn_version());
}

static jintArray JNICALL native_abi_layout(JNIEnv *env, jclass cls)
{
    int32_t layout[HPCN_ABI_LAYOUT_LEN];
    jint values[HPCN_ABI_LAYOUT_LEN];
    jintArray array;
    size_t count;
    size_t i;
    int rc;

    (void)cls;
    rc = hpcn_abi_layout(HPCN_ABI_LAYOUT_LEN, layout, &count);
    if (rc < 0) {
        hpcn_jni_throw(env, "hpcn_abi_layout", -rc);
        return NULL;
    }
    for (i = 0; i < count; i++)
        values[i] = layout[i];

    array = (*env)->NewIntArray(env, (jsize)count);
    if (array == NULL)
        return NULL;
    (*env)->SetIntArrayRegion(env, array, 0, (jsize)count, values);
    return array;
}

static jobjectArray JNICALL native_probe_devices(JNIEnv *env, jclass cls)
{
    hpcn_port_t *ports;
    jobjectArray records;
    size_t count;
    size_t i;
    int rc;

    (void)cls;
    rc = hpcn_device_probe(&ports, &count);
    if (rc < 0) {
        hpcn_jni_throw(env, "ibv_get_device_list", -rc);
        return NULL;
    }

    records = (*env)->NewObjectArray(env, (jsize)count, cache.string_class, NULL);
    if (records == NULL)
        goto free_ports;
    for (i = 0; i < count; i++) {
        char record[HPCN_PORT_RECORD_MAX];
        jstring text;

        rc = hpcn_port_format(&ports[i], sizeof(record), record);
        if (rc < 0) {
            hpcn_jni_throw(env, "hpcn_port_format", -rc);
            goto delete_records;
        }
        text = (*env)->NewStringUTF(env, record);
        if (text == NULL)
            goto delete_records;
        (*env)->SetObjectArrayElement(env, records, (jsize)i, text);
        (*env)->DeleteLocalRef(env, text);
    }
    hpcn_device_probe_free(ports);
    return records;

delete_records:
    (*env)->DeleteLocalRef(env, records);
free_ports:
    hpcn_device_probe_free(ports);
    return NULL;
}

static const char *lustre_status_name(hpcn_lustre_status_t status)
{
    switch (status) {
    case HPCN_LUSTRE_AVAILABLE:  return "AVAILABLE";
    case HPCN_LUSTRE_NOT_FOUND:  return "NOT_FOUND";
    case HPCN_LUSTRE_INCOMPLETE: return "INCOMPLETE";
    }
    return "NOT_FOUND";
}

static jstring JNICALL native_probe_lustre(JNIEnv *env, jclass cls, jstring library)
{
    hpcn_lustre_probe_t probe;
    char missing[RECORD_MAX] = "";
    char detail[HPCN_LUSTRE_DETAIL_MAX];
    char record[RECORD_MAX + HPCN_LUSTRE_DETAIL_MAX + 16];
    const char *path;
    size_t used = 0;
    unsigned i;
    int rc;

    (void)cls;
    if (library == NULL) {
        hpcn_jni_throw(env, "hpcn_lustre_probe", EINVAL);
        return NULL;
    }
    path = (*env)->GetStringUTFChars(env, library, NULL);
    if (path == NULL)
        return NULL;
    rc = hpcn_lustre_probe(path, &probe);
    (*env)->ReleaseStringUTFChars(env, library, path);
    if (rc < 0) {
        hpcn_jni_throw(env, "hpcn_lustre_probe", -rc);
        return NULL;
    }

    for (i = 0; i < HPCN_LUSTRE_SYMBOL_COUNT; i++) {
        if ((probe.missing & (1u << i)) == 0)
            continue;
        used += (size_t)snprintf(missing + used, sizeof(missing) - used, "%s%s",
                                 used == 0 ? "" : ",", hpcn_lustre_symbol_name(i));
    }
    hpcn_printable_copy(probe.detail, sizeof(detail), detail);
    snprintf(record, sizeof(record), "%s\t%s\t%s", lustre_status_name(probe.status), missing,
             detail);
    return (*env)->NewStringUTF(env, record);
}

static jlongArray JNICALL native_lustre_layout(JNIEnv *env, jclass cls, jstring jpath)
{
    uint64_t *values; /* size, count, then the OSTs */
    uint32_t known;
    jlongArray array = NULL;
    const char *path;
    int rc;

    (void)cls;
    if (jpath == NULL) {
        hpcn_jni_throw(env, "llapi_layout_get_by_path", EINVAL);
        return NULL;
    }
    values = calloc(2 + LUSTRE_STRIPES_MAX, sizeof(*values));
    if (values == NULL) {
        hpcn_jni_throw(env, "llapi_layout_get_by_path", ENOMEM);
        return NULL;
    }
    path = (*env)->GetStringUTFChars(env, jpath, NULL);
    if (path == NULL)
        goto free_values;
    rc = hpcn_lustre_layout_get(path, values + 2, LUSTRE_STRIPES_MAX, &values[0], &values[1],
                                &known);
    (*env)->ReleaseStringUTFChars(env, jpath, path);
    if (rc < 0) {
        hpcn_jni_throw(env, "llapi_layout_get_by_path", -rc);
        goto free_values;
    }
    array = (*env)->NewLongArray(env, (jsize)(2 + known));
    if (array != NULL)
        (*env)->SetLongArrayRegion(env, array, 0, (jsize)(2 + known), (const jlong *)values);

free_values:
    free(values);
    return array;
}

static void JNICALL native_lustre_create(JNIEnv *env, jclass cls, jstring jpath,
                                         jlong stripe_size, jlong stripe_count, jint mode)
{
    const char *path;
    int rc;

    (void)cls;
    if (jpath == NULL || stripe_size < 0 || stripe_count < 0) {
        hpcn_jni_throw(env, "llapi_layout_file_create", EINVAL);
        return;
    }
    path = (*env)->GetStringUTFChars(env, jpath, NULL);
    if (path == NULL)
        return;
    rc = hpcn_lustre_file_create(path, (uint64_t)stripe_size, (uint64_t)stripe_count, mode);
    (*env)->ReleaseStringUTFChars(env, jpath, path);
    if (rc < 0)
        hpcn_jni_throw(env, "llapi_layout_file_create", -rc);
}

/* The address of a direct buffer's first byte, or NULL with NativeIoException(EINVAL) thrown. */
static void *direct_address(JNIEnv *env, const char *call, jobject buffer, jlong len)
{
    void *addr;

    if (buffer == NULL || len < 0) {
        hpcn_jni_throw(env, call, EINVAL);
        return NULL;
    }
    addr = (*env)->GetDirectBufferAddress(env, buffer);
    if (addr == NULL || len > (*env)->GetDirectBufferCapacity(env, buffer)) {
        hpcn_jni_throw(env, call, EINVAL); /* a heap buffer, or len past its end */
        return NULL;
    }
    return addr;
}

static void JNICALL native_mlock(JNIEnv *env, jclass cls, jobject buffer, jlong len)
{
    void *addr;
    int rc;

    (void)cls;
    addr = direct_address(env, "mlock", buffer, len);
    if (addr == NULL)
        return;
    rc = hpcn_mlock(addr, (size_t)len);
    if (rc < 0)
        hpcn_jni_throw(env, "mlock", -rc);
}

static void JNICALL native_munlock(JNIEnv *env, jclass cls, jobject buffer, jlong len)
{
    void *addr;
    int rc;

    (void)cls;
    addr = direct_address(env, "munlock", buffer, len);
    if (addr == NULL)
        return;
    rc = hpcn_munlock(addr, (size_t)len);
    if (rc < 0)
        hpcn_jni_throw(env, "munlock", -rc);
}

static jlong JNICALL native_memlock_limit(JNIEnv *env, jclass cls)
{
    uint64_t limit;
    int rc;

    (void)cls;
    rc = hpcn_memlock_limit(&limit);
    if (rc < 0) {
        hpcn_jni_throw(env, "getrlimit(RLIMIT_MEMLOCK)", -rc);
        return 0;
    }
    return limit > INT64_MAX ? INT64_MAX : (jlong)limit;
}

static jlong JNICALL native_page_size(JNIEnv *env, jclass cls)
{
    long size;

    (void)cls;
    size = hpcn_page_size();
    if (size < 0) {
        hpcn_jni_throw(env, "sysconf(_SC_PAGESIZE)", (int)-size);
        return 0;
    }
    return (jlong)size;
}

static void JNICALL native_fadvise(JNIEnv *env, jclass cls, jobject descriptor, jlong offset,
                                   jlong len, jint advice)
{
    int rc;

    (void)cls;
    if (descriptor == NULL || offset < 0 || len < 0) {
        hpcn_jni_throw(env, "posix_fadvise", EINVAL);
        return;
    }
    rc = hpcn_fadvise((*env)->GetIntField(env, descriptor, cache.descriptor_fd),
                      (uint64_t)offset, (uint64_t)len, advice);
    if (rc < 0)
        hpcn_jni_throw(env, "posix_fadvise", -rc);
}

/*
 * The verbs natives live in another jar (hadoop-hpc-transport), possibly under another class
 * loader, so they are bound when that class asks, with the class it hands over, and never looked
 * up by name at load time (a JVM with hadoop-hpc-common alone must load the library).
 */
static void JNICALL native_bind_verbs(JNIEnv *env, jclass cls, jclass verbs)
{
    (void)cls;
    if (verbs == NULL) {
        hpcn_jni_throw(env, "bindVerbs", EINVAL);
        return;
    }
    /* On a mismatch RegisterNatives leaves NoSuchMethodError pending for the caller. */
    (void)hpcn_jni_verbs_register(env, verbs);
}

static const JNINativeMethod native_methods[] = {
    { "abiVersion", "()I", (void *)native_abi_version },
    { "version", "()Ljava/lang/String;", (void *)native_version },
    { "abiLayout", "()[I", (void *)native_abi_layout },
    { "probeDevices", "()[Ljava/lang/String;", (void *)native_probe_devices },
    { "probeLustre", "(Ljava/lang/String;)Ljava/lang/String;", (void *)native_probe_lustre },
    { "lustreLayout", "(Ljava/lang/String;)[J", (void *)native_lustre_layout },
    { "lustreCreate", "(Ljava/lang/String;JJI)V", (void *)native_lustre_create },
    { "mlock", "(Ljava/nio/ByteBuffer;J)V", (void *)native_mlock },
    { "munlock", "(Ljava/nio/ByteBuffer;J)V", (void *)native_munlock },
    { "memlockLimit", "()J", (void *)native_memlock_limit },
    { "pageSize", "()J", (void *)native_page_size },
    { "fadvise", "(Ljava/io/FileDescriptor;JJI)V", (void *)native_fadvise },
    { "bindVerbs", "(Ljava/lang/Class;)V", (void *)native_bind_verbs },
};

static jclass global_class(JNIEnv *env, const char *name)
{
    jclass local = (*env)->FindClass(env, name);
    jclass global;

    if (local == NULL)
        return NULL; /* NoClassDefFoundError is pending and reaches System.load's caller */
    global = (*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    return global;
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
    JNIEnv *env;
    jclass natives;
    jint rc;

    (void)reserved;
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK)
        return JNI_ERR;

    cache.string_class = global_class(env, "java/lang/String");
    if (cache.string_class == NULL)
        return JNI_ERR;
    cache.exception_class = global_class(env, EXCEPTION_CLASS);
    if (cache.exception_class == NULL)
        goto delete_string_class;
    cache.exception_ctor = (*env)->GetMethodID(env, cache.exception_class, "<init>",
                                               "(Ljava/lang/String;ILjava/lang/String;)V");
    if (cache.exception_ctor == NULL)
        goto delete_exception_class;

    {
        jclass descriptor = (*env)->FindClass(env, "java/io/FileDescriptor");

        if (descriptor == NULL)
            goto delete_exception_class;
        cache.descriptor_fd = (*env)->GetFieldID(env, descriptor, "fd", "I");
        (*env)->DeleteLocalRef(env, descriptor);
        if (cache.descriptor_fd == NULL)
            goto delete_exception_class;
    }

    natives = (*env)->FindClass(env, NATIVE_METHODS_CLASS);
    if (natives == NULL)
        goto delete_exception_class;
    rc = (*env)->RegisterNatives(env, natives, native_methods,
                                 (jint)(sizeof(native_methods) / sizeof(native_methods[0])));
    (*env)->DeleteLocalRef(env, natives);
    if (rc != JNI_OK)
        goto delete_exception_class;

    return JNI_VERSION_1_8;

delete_exception_class:
    (*env)->DeleteGlobalRef(env, cache.exception_class);
    cache.exception_class = NULL;
    cache.exception_ctor = NULL;
delete_string_class:
    (*env)->DeleteGlobalRef(env, cache.string_class);
    cache.string_class = NULL;
    return JNI_ERR;
}

JNIEXPORT void JNICALL JNI_OnUnload(JavaVM *vm, void *reserved)
{
    JNIEnv *env;

    (void)reserved;
    hpcn_lustre_unload();
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK)
        return;
    if (cache.exception_class != NULL)
        (*env)->DeleteGlobalRef(env, cache.exception_class);
    if (cache.string_class != NULL)
        (*env)->DeleteGlobalRef(env, cache.string_class);
    cache.exception_class = NULL;
    cache.exception_ctor = NULL;
    cache.string_class = NULL;
}
