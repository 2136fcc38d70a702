/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * libhadoop.so: natives of Apache Hadoop 3.5.0's classes (the JNI names are Hadoop's API, the
 * code is ours), so NativeCodeLoader.isNativeCodeLoaded() holds and SecureIOUtils, NativeIO,
 * NativeCrc32 and JniBasedUnixGroupsMapping work.
 *
 * Why exported names and no JNI_OnLoad: NativeCodeLoader's static initializer loads this
 * library. A JNI_OnLoad that called FindClass(NativeIO) would initialize NativeIO right then,
 * while NativeCodeLoader.isNativeCodeLoaded() is still false, and NativeIO would stay
 * unavailable for the life of the JVM. So each Hadoop class's first native is exported by
 * name and registers the rest of that class's natives on the class it is called with
 * (RegisterNatives; a mismatch fails that class's initialization, which Hadoop catches):
 *   NativeIO.initNative              -> NativeIO's natives           (hpch_jni_nativeio.c)
 *   NativeIO$POSIX.initNativePosix   -> NativeIO$POSIX's natives     (hpch_jni_nativeio.c)
 *   JniBasedUnixGroupsMapping.anchorNative -> getGroupsForUser       (hpch_jni_groups.c)
 * Classes without an init native export theirs by name: NativeCodeLoader (here), NativeCrc32
 * (hpch_jni_crc.c), JniBasedUnixGroupsNetgroupMapping (hpch_jni_groups.c),
 * SharedFileDescriptorFactory (hpch_jni_shm.c).
 * check_exports.cmake keeps the exported set to exactly these.
 */
#include "hpch_jni.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define NATIVE_IO_EXCEPTION "org/apache/hadoop/io/nativeio/NativeIOException"
#define ERRNO_CLASS "org/apache/hadoop/io/nativeio/Errno"

/* The errno values Hadoop's Errno enum names; anything else is Errno.UNKNOWN. */
static const struct {
    int err;
    const char *name;
} errno_names[] = {
    { EPERM, "EPERM" },     { ENOENT, "ENOENT" },   { ESRCH, "ESRCH" },
    { EINTR, "EINTR" },     { EIO, "EIO" },         { ENXIO, "ENXIO" },
    { E2BIG, "E2BIG" },     { ENOEXEC, "ENOEXEC" }, { EBADF, "EBADF" },
    { ECHILD, "ECHILD" },   { EAGAIN, "EAGAIN" },   { ENOMEM, "ENOMEM" },
    { EACCES, "EACCES" },   { EFAULT, "EFAULT" },   { ENOTBLK, "ENOTBLK" },
    { EBUSY, "EBUSY" },     { EEXIST, "EEXIST" },   { EXDEV, "EXDEV" },
    { ENODEV, "ENODEV" },   { ENOTDIR, "ENOTDIR" }, { EISDIR, "EISDIR" },
    { EINVAL, "EINVAL" },   { ENFILE, "ENFILE" },   { EMFILE, "EMFILE" },
    { ENOTTY, "ENOTTY" },   { ETXTBSY, "ETXTBSY" }, { EFBIG, "EFBIG" },
    { ENOSPC, "ENOSPC" },   { ESPIPE, "ESPIPE" },   { EROFS, "EROFS" },
    { EMLINK, "EMLINK" },   { EPIPE, "EPIPE" },     { EDOM, "EDOM" },
    { ERANGE, "ERANGE" },   { ELOOP, "ELOOP" },     { ENAMETOOLONG, "ENAMETOOLONG" },
    { ENOTEMPTY, "ENOTEMPTY" }, { EOVERFLOW, "EOVERFLOW" },
};

static const char *errno_name(int err)
{
    for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
        if (errno_names[i].err == err)
            return errno_names[i].name;
    return "UNKNOWN";
}

void hpch_throw(JNIEnv *env, const char *class_name, const char *message)
{
    jclass cls = (*env)->FindClass(env, class_name);

    if (cls == NULL)
        return; /* NoClassDefFoundError is pending */
    (*env)->ThrowNew(env, cls, message);
    (*env)->DeleteLocalRef(env, cls);
}

void hpch_throw_errno(JNIEnv *env, int err, const char *what)
{
    char text[512];
    char buf[256];
    const char *description;
    jclass errno_class;
    jclass exception_class = NULL;
    jfieldID field;
    jobject errno_value;
    jstring message;
    jmethodID ctor;
    jobject exception;

    description = strerror_r(err, buf, sizeof(buf)); /* GNU strerror_r: _GNU_SOURCE build */
    if (what != NULL)
        snprintf(text, sizeof(text), "%s: %s", description, what);
    else
        snprintf(text, sizeof(text), "%s", description);

    errno_class = (*env)->FindClass(env, ERRNO_CLASS);
    if (errno_class == NULL)
        return;
    field = (*env)->GetStaticFieldID(env, errno_class, errno_name(err),
                                     "L" ERRNO_CLASS ";");
    if (field == NULL)
        goto delete_errno_class;
    errno_value = (*env)->GetStaticObjectField(env, errno_class, field);
    exception_class = (*env)->FindClass(env, NATIVE_IO_EXCEPTION);
    if (exception_class == NULL)
        goto delete_errno_value;
    ctor = (*env)->GetMethodID(env, exception_class, "<init>",
                               "(Ljava/lang/String;L" ERRNO_CLASS ";)V");
    if (ctor == NULL)
        goto delete_exception_class;
    message = (*env)->NewStringUTF(env, text);
    if (message == NULL)
        goto delete_exception_class;
    exception = (*env)->NewObject(env, exception_class, ctor, message, errno_value);
    if (exception != NULL) {
        (*env)->Throw(env, (jthrowable)exception);
        (*env)->DeleteLocalRef(env, exception);
    }
    (*env)->DeleteLocalRef(env, message);
delete_exception_class:
    (*env)->DeleteLocalRef(env, exception_class);
delete_errno_value:
    (*env)->DeleteLocalRef(env, errno_value);
delete_errno_class:
    (*env)->DeleteLocalRef(env, errno_class);
}

/* ---- passwd/group lookups ----------------------------------------------------------------- */

static pthread_mutex_t ids_mutex = PTHREAD_MUTEX_INITIALIZER;
static volatile int ids_serialized = 1; /* Hadoop's default for the workaround key */

void hpch_ids_serialize(int on)
{
    ids_serialized = on;
}

void hpch_ids_lock(void)
{
    if (ids_serialized)
        pthread_mutex_lock(&ids_mutex);
}

void hpch_ids_unlock(void)
{
    if (ids_serialized)
        pthread_mutex_unlock(&ids_mutex);
}

/* ---- org.apache.hadoop.util.NativeCodeLoader ---------------------------------------------- */

/* This build has no ISA-L, zstd or OpenSSL support: Hadoop then uses its Java fallbacks. */
static jboolean not_built(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    return JNI_FALSE;
}

JNIEXPORT jboolean JNICALL
Java_org_apache_hadoop_util_NativeCodeLoader_buildSupportsIsal(JNIEnv *env, jclass cls)
{
    return not_built(env, cls);
}

JNIEXPORT jboolean JNICALL
Java_org_apache_hadoop_util_NativeCodeLoader_buildSupportsZstd(JNIEnv *env, jclass cls)
{
    return not_built(env, cls);
}

JNIEXPORT jboolean JNICALL
Java_org_apache_hadoop_util_NativeCodeLoader_buildSupportsOpenssl(JNIEnv *env, jclass cls)
{
    return not_built(env, cls);
}

/* The path this library was loaded from (what `hadoop checknative` prints). */
JNIEXPORT jstring JNICALL
Java_org_apache_hadoop_util_NativeCodeLoader_getLibraryName(JNIEnv *env, jclass cls)
{
    Dl_info info;

    (void)cls;
    if (dladdr((void *)Java_org_apache_hadoop_util_NativeCodeLoader_getLibraryName, &info) == 0
        || info.dli_fname == NULL)
        return (*env)->NewStringUTF(env, "libhadoop.so");
    return (*env)->NewStringUTF(env, info.dli_fname);
}
