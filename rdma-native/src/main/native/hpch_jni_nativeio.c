/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * org.apache.hadoop.io.nativeio.NativeIO and NativeIO$POSIX: what SecureIOUtils (shuffle,
 * SpillRecord, log aggregation, task logs), RawLocalFileSystem, the DataNode (fadvise,
 * sync_file_range, mlock for caching, hard links and renames during upgrades) and the
 * NodeManager call once libhadoop is loaded. Registered from the classes' init natives (see
 * hpch_jni_util.c for why). Not registered, because Hadoop reaches them only where guarded:
 * NativeIO.copyFileUnbuffered0 (Windows only) and the PMDK natives (isPmemCheck, pmemMapFile,
 * pmemUnMap, pmemCopy, pmemDrain, pmemSync: only after isPmdkAvailable(), false without PMDK);
 * getPmdkLibPath is registered and answers null.
 */
#include "hpch_jni.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define STAT_CLASS "org/apache/hadoop/io/nativeio/NativeIO$POSIX$Stat"

/* Set by initNativePosix before any NativeIO$POSIX native can run (they are registered there). */
static struct {
    jclass fd_class;       /* java.io.FileDescriptor, global */
    jmethodID fd_ctor;     /* FileDescriptor() */
    jfieldID fd_field;     /* FileDescriptor.fd (JNI does not check access) */
    jclass stat_class;     /* NativeIO$POSIX$Stat, global */
    jmethodID stat_ctor;   /* Stat(int ownerId, int groupId, int mode), package-private */
} posix;

/* -1 with an exception pending when the FileDescriptor is null. */
static int fd_of(JNIEnv *env, jobject descriptor)
{
    if (descriptor == NULL) {
        hpch_throw(env, "java/lang/NullPointerException", "FileDescriptor is null");
        return -1;
    }
    return (*env)->GetIntField(env, descriptor, posix.fd_field);
}

/* The path's bytes as the platform sees them; NULL with an exception pending. */
static const char *path_chars(JNIEnv *env, jstring path)
{
    if (path == NULL) {
        hpch_throw(env, "java/lang/NullPointerException", "path is null");
        return NULL;
    }
    return (*env)->GetStringUTFChars(env, path, NULL);
}

/* ---- NativeIO$POSIX -------------------------------------------------------------------------- */

static jobject JNICALL posix_open(JNIEnv *env, jclass cls, jstring path, jint flags, jint mode)
{
    const char *chars;
    jobject descriptor;
    int fd;

    (void)cls;
    chars = path_chars(env, path);
    if (chars == NULL)
        return NULL;
    /* O_CLOEXEC always: daemons fork shells, which must not inherit shuffle or block files. */
    do {
        fd = open(chars, flags | O_CLOEXEC, (mode_t)mode);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int err = errno;

        hpch_throw_errno(env, err, chars);
        (*env)->ReleaseStringUTFChars(env, path, chars);
        return NULL;
    }
    (*env)->ReleaseStringUTFChars(env, path, chars);
    descriptor = (*env)->NewObject(env, posix.fd_class, posix.fd_ctor);
    if (descriptor == NULL) {
        close(fd);
        return NULL;
    }
    (*env)->SetIntField(env, descriptor, posix.fd_field, fd);
    return descriptor;
}

static jobject new_stat(JNIEnv *env, const struct stat *st)
{
    return (*env)->NewObject(env, posix.stat_class, posix.stat_ctor, (jint)st->st_uid,
                             (jint)st->st_gid, (jint)st->st_mode);
}

static jobject JNICALL posix_fstat(JNIEnv *env, jclass cls, jobject descriptor)
{
    struct stat st;
    int fd;

    (void)cls;
    fd = fd_of(env, descriptor);
    if ((*env)->ExceptionCheck(env))
        return NULL;
    if (fstat(fd, &st) != 0) {
        hpch_throw_errno(env, errno, NULL);
        return NULL;
    }
    return new_stat(env, &st);
}

static jobject JNICALL posix_stat(JNIEnv *env, jclass cls, jstring path)
{
    struct stat st;
    const char *chars;
    int rc;

    (void)cls;
    chars = path_chars(env, path);
    if (chars == NULL)
        return NULL;
    rc = stat(chars, &st);
    if (rc != 0) {
        hpch_throw_errno(env, errno, chars);
        (*env)->ReleaseStringUTFChars(env, path, chars);
        return NULL;
    }
    (*env)->ReleaseStringUTFChars(env, path, chars);
    return new_stat(env, &st);
}

static void JNICALL posix_chmod(JNIEnv *env, jclass cls, jstring path, jint mode)
{
    const char *chars;

    (void)cls;
    chars = path_chars(env, path);
    if (chars == NULL)
        return;
    if (chmod(chars, (mode_t)mode) != 0)
        hpch_throw_errno(env, errno, chars);
    (*env)->ReleaseStringUTFChars(env, path, chars);
}

static void JNICALL posix_fadvise_native(JNIEnv *env, jclass cls, jobject descriptor,
                                         jlong offset, jlong len, jint advice)
{
    int fd;
    int rc;

    (void)cls;
    fd = fd_of(env, descriptor);
    if ((*env)->ExceptionCheck(env))
        return;
    rc = posix_fadvise(fd, (off_t)offset, (off_t)len, advice);
    if (rc != 0) /* returns the error number, errno untouched */
        hpch_throw_errno(env, rc, NULL);
}

static void JNICALL posix_sync_file_range(JNIEnv *env, jclass cls, jobject descriptor,
                                          jlong offset, jlong nbytes, jint flags)
{
    int fd;

    (void)cls;
    fd = fd_of(env, descriptor);
    if ((*env)->ExceptionCheck(env))
        return;
    if (sync_file_range(fd, (off64_t)offset, (off64_t)nbytes, (unsigned int)flags) == 0)
        return;
    /* NativeIO.syncFileRangeIfPossible stops calling on UnsupportedOperationException. */
    if (errno == ENOSYS)
        hpch_throw(env, "java/lang/UnsupportedOperationException",
                   "sync_file_range is not supported by this kernel");
    else
        hpch_throw_errno(env, errno, NULL);
}

static void JNICALL posix_mlock(JNIEnv *env, jclass cls, jobject buffer, jlong len)
{
    void *address;
    jlong capacity;

    (void)cls;
    address = (*env)->GetDirectBufferAddress(env, buffer);
    capacity = (*env)->GetDirectBufferCapacity(env, buffer);
    if (address == NULL || len < 0 || len > capacity) {
        hpch_throw(env, "java/lang/IllegalArgumentException",
                   "mlock needs a direct buffer of at least len bytes");
        return;
    }
    if (mlock(address, (size_t)len) != 0)
        hpch_throw_errno(env, errno, NULL);
}

static jlong JNICALL posix_fd_owner_uid(JNIEnv *env, jclass cls, jobject descriptor)
{
    struct stat st;
    int fd;

    (void)cls;
    fd = fd_of(env, descriptor);
    if ((*env)->ExceptionCheck(env))
        return -1;
    if (fstat(fd, &st) != 0) {
        hpch_throw_errno(env, errno, NULL);
        return -1;
    }
    return (jlong)st.st_uid;
}

static jstring JNICALL posix_user_name_long(JNIEnv *env, jclass cls, jlong uid)
{
    (void)cls;
    return hpch_user_name(env, (uid_t)uid);
}

static jstring JNICALL posix_user_name(JNIEnv *env, jclass cls, jint uid)
{
    (void)cls;
    return hpch_user_name(env, (uid_t)uid);
}

static jstring JNICALL posix_group_name(JNIEnv *env, jclass cls, jint gid)
{
    (void)cls;
    return hpch_group_name(env, (gid_t)gid);
}

static jlong JNICALL posix_mmap(JNIEnv *env, jclass cls, jobject descriptor, jint prot,
                                jboolean shared, jlong length)
{
    void *address;
    int fd;

    (void)cls;
    fd = fd_of(env, descriptor);
    if ((*env)->ExceptionCheck(env))
        return 0;
    if (length <= 0) {
        hpch_throw_errno(env, EINVAL, "mmap length");
        return 0;
    }
    address = mmap(NULL, (size_t)length, prot, shared ? MAP_SHARED : MAP_PRIVATE, fd, 0);
    if (address == MAP_FAILED) {
        hpch_throw_errno(env, errno, NULL);
        return 0;
    }
    return (jlong)(intptr_t)address;
}

static void JNICALL posix_munmap(JNIEnv *env, jclass cls, jlong address, jlong length)
{
    (void)cls;
    if (munmap((void *)(intptr_t)address, (size_t)length) != 0)
        hpch_throw_errno(env, errno, NULL);
}

/* This build has no PMDK: DataNode's persistent-memory cache reports it unsupported. */
static jstring JNICALL posix_pmdk_lib_path(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    return NULL;
}

static const JNINativeMethod posix_methods[] = {
    { "open", "(Ljava/lang/String;II)Ljava/io/FileDescriptor;", (void *)posix_open },
    { "fstat", "(Ljava/io/FileDescriptor;)L" STAT_CLASS ";", (void *)posix_fstat },
    { "stat", "(Ljava/lang/String;)L" STAT_CLASS ";", (void *)posix_stat },
    { "chmodImpl", "(Ljava/lang/String;I)V", (void *)posix_chmod },
    { "posix_fadvise", "(Ljava/io/FileDescriptor;JJI)V", (void *)posix_fadvise_native },
    { "sync_file_range", "(Ljava/io/FileDescriptor;JJI)V", (void *)posix_sync_file_range },
    { "mlock_native", "(Ljava/nio/ByteBuffer;J)V", (void *)posix_mlock },
    { "getUIDforFDOwnerforOwner", "(Ljava/io/FileDescriptor;)J", (void *)posix_fd_owner_uid },
    { "getUserName", "(J)Ljava/lang/String;", (void *)posix_user_name_long },
    { "getUserName", "(I)Ljava/lang/String;", (void *)posix_user_name },
    { "getGroupName", "(I)Ljava/lang/String;", (void *)posix_group_name },
    { "mmap", "(Ljava/io/FileDescriptor;IZJ)J", (void *)posix_mmap },
    { "munmap", "(JJ)V", (void *)posix_munmap },
    { "getPmdkLibPath", "()Ljava/lang/String;", (void *)posix_pmdk_lib_path },
};

/* Sets static int field name of cls to value; 0, or -1 with NoSuchFieldError pending. */
static int set_int(JNIEnv *env, jclass cls, const char *name, jint value)
{
    jfieldID field = (*env)->GetStaticFieldID(env, cls, name, "I");

    if (field == NULL)
        return -1;
    (*env)->SetStaticIntField(env, cls, field, value);
    return 0;
}

/* The constants Hadoop's Java passes back to open, posix_fadvise, sync_file_range and reads
 * out of Stat.getMode(): this platform's values. */
static int set_posix_constants(JNIEnv *env, jclass posix_class, jclass stat_class)
{
    static const struct {
        const char *name;
        jint value;
    } posix_ints[] = {
        { "O_RDONLY", O_RDONLY }, { "O_WRONLY", O_WRONLY }, { "O_RDWR", O_RDWR },
        { "O_CREAT", O_CREAT }, { "O_EXCL", O_EXCL }, { "O_NOCTTY", O_NOCTTY },
        { "O_TRUNC", O_TRUNC }, { "O_APPEND", O_APPEND }, { "O_NONBLOCK", O_NONBLOCK },
        { "O_SYNC", O_SYNC },
        { "POSIX_FADV_NORMAL", POSIX_FADV_NORMAL }, { "POSIX_FADV_RANDOM", POSIX_FADV_RANDOM },
        { "POSIX_FADV_SEQUENTIAL", POSIX_FADV_SEQUENTIAL },
        { "POSIX_FADV_WILLNEED", POSIX_FADV_WILLNEED },
        { "POSIX_FADV_DONTNEED", POSIX_FADV_DONTNEED },
        { "POSIX_FADV_NOREUSE", POSIX_FADV_NOREUSE },
        { "SYNC_FILE_RANGE_WAIT_BEFORE", SYNC_FILE_RANGE_WAIT_BEFORE },
        { "SYNC_FILE_RANGE_WRITE", SYNC_FILE_RANGE_WRITE },
        { "SYNC_FILE_RANGE_WAIT_AFTER", SYNC_FILE_RANGE_WAIT_AFTER },
    };
    static const struct {
        const char *name;
        jint value;
    } stat_ints[] = {
        { "S_IFMT", S_IFMT }, { "S_IFIFO", S_IFIFO }, { "S_IFCHR", S_IFCHR },
        { "S_IFDIR", S_IFDIR }, { "S_IFBLK", S_IFBLK }, { "S_IFREG", S_IFREG },
        { "S_IFLNK", S_IFLNK }, { "S_IFSOCK", S_IFSOCK }, { "S_ISUID", S_ISUID },
        { "S_ISGID", S_ISGID }, { "S_ISVTX", S_ISVTX }, { "S_IRUSR", S_IRUSR },
        { "S_IWUSR", S_IWUSR }, { "S_IXUSR", S_IXUSR },
    };
    jfieldID fadvise;

    for (size_t i = 0; i < sizeof(posix_ints) / sizeof(posix_ints[0]); i++)
        if (set_int(env, posix_class, posix_ints[i].name, posix_ints[i].value) != 0)
            return -1;
    for (size_t i = 0; i < sizeof(stat_ints) / sizeof(stat_ints[0]); i++)
        if (set_int(env, stat_class, stat_ints[i].name, stat_ints[i].value) != 0)
            return -1;
    fadvise = (*env)->GetStaticFieldID(env, posix_class, "fadvisePossible", "Z");
    if (fadvise == NULL)
        return -1;
    (*env)->SetStaticBooleanField(env, posix_class, fadvise, JNI_TRUE);
    return 0;
}

static jclass global_class(JNIEnv *env, const char *name)
{
    jclass local = (*env)->FindClass(env, name);
    jclass global;

    if (local == NULL)
        return NULL;
    global = (*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    return global;
}

/*
 * NativeIO$POSIX's static initializer; cls is NativeIO$POSIX. Any failure leaves an exception
 * pending, which POSIX's initializer catches: NativeIO.POSIX.isAvailable() then stays false.
 */
JNIEXPORT void JNICALL
Java_org_apache_hadoop_io_nativeio_NativeIO_00024POSIX_initNativePosix(JNIEnv *env, jclass cls,
                                                                       jboolean workaround)
{
    jclass fd_class;
    jclass stat_class;

    hpch_ids_serialize(workaround == JNI_TRUE);
    if (posix.fd_class == NULL) { /* once per JVM: the class initializer runs once */
        fd_class = global_class(env, "java/io/FileDescriptor");
        if (fd_class == NULL)
            return;
        stat_class = global_class(env, STAT_CLASS);
        if (stat_class == NULL)
            goto delete_fd_class;
        posix.fd_ctor = (*env)->GetMethodID(env, fd_class, "<init>", "()V");
        posix.fd_field = (*env)->GetFieldID(env, fd_class, "fd", "I");
        posix.stat_ctor = (*env)->GetMethodID(env, stat_class, "<init>", "(III)V");
        if (posix.fd_ctor == NULL || posix.fd_field == NULL || posix.stat_ctor == NULL)
            goto delete_stat_class;
        if (set_posix_constants(env, cls, stat_class) != 0)
            goto delete_stat_class;
        posix.stat_class = stat_class;
        posix.fd_class = fd_class;
    }
    (*env)->RegisterNatives(env, cls, posix_methods,
                            (jint)(sizeof(posix_methods) / sizeof(posix_methods[0])));
    return;

delete_stat_class:
    (*env)->DeleteGlobalRef(env, stat_class);
delete_fd_class:
    (*env)->DeleteGlobalRef(env, fd_class);
}

/* ---- NativeIO -------------------------------------------------------------------------------- */

static jlong JNICALL nativeio_memlock_limit(JNIEnv *env, jclass cls)
{
    struct rlimit limit;

    (void)cls;
    if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0) {
        hpch_throw_errno(env, errno, NULL);
        return 0;
    }
    if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > (rlim_t)INT64_MAX)
        return INT64_MAX;
    return (jlong)limit.rlim_cur;
}

/* Runs op(src, dst) and throws NativeIOException naming both paths on failure. */
static void two_paths(JNIEnv *env, jstring src, jstring dst, int (*op)(const char *, const char *))
{
    const char *src_chars;
    const char *dst_chars;

    src_chars = path_chars(env, src);
    if (src_chars == NULL)
        return;
    dst_chars = path_chars(env, dst);
    if (dst_chars == NULL)
        goto release_src;
    if (op(src_chars, dst_chars) != 0) {
        char what[2 * PATH_MAX + 8];

        int err = errno;
        snprintf(what, sizeof(what), "%s -> %s", src_chars, dst_chars);
        hpch_throw_errno(env, err, what);
    }
    (*env)->ReleaseStringUTFChars(env, dst, dst_chars);
release_src:
    (*env)->ReleaseStringUTFChars(env, src, src_chars);
}

static void JNICALL nativeio_rename(JNIEnv *env, jclass cls, jstring src, jstring dst)
{
    (void)cls;
    two_paths(env, src, dst, rename);
}

static void JNICALL nativeio_link(JNIEnv *env, jclass cls, jstring src, jstring dst)
{
    (void)cls;
    two_paths(env, src, dst, link);
}

static const JNINativeMethod nativeio_methods[] = {
    { "getMemlockLimit0", "()J", (void *)nativeio_memlock_limit },
    { "renameTo0", "(Ljava/lang/String;Ljava/lang/String;)V", (void *)nativeio_rename },
    { "link0", "(Ljava/lang/String;Ljava/lang/String;)V", (void *)nativeio_link },
};

/* NativeIO's static initializer; cls is NativeIO. The flag only matters to initNativePosix. */
JNIEXPORT void JNICALL
Java_org_apache_hadoop_io_nativeio_NativeIO_initNative(JNIEnv *env, jclass cls,
                                                       jboolean workaround)
{
    (void)workaround;
    (*env)->RegisterNatives(env, cls, nativeio_methods,
                            (jint)(sizeof(nativeio_methods) / sizeof(nativeio_methods[0])));
}
