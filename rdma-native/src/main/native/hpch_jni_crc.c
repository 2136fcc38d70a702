/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * org.apache.hadoop.util.NativeCrc32: DataChecksum sends every HDFS packet's checksums here
 * once libhadoop is loaded (no fallback on UnsatisfiedLinkError), for direct buffers and for
 * arrays. Offsets are checked against the buffers before any byte is read: Java passes
 * positions unchecked. A mismatch throws ChecksumException with the failing chunk's file
 * position, worded as DataChecksum's Java path words it.
 */
#include "hpch.h"
#include "hpch_jni.h"

#include <stdio.h>

#define CHECKSUM_EXCEPTION "org/apache/hadoop/fs/ChecksumException"
#define ILLEGAL_ARGUMENT "java/lang/IllegalArgumentException"

static const char *type_name(jint type)
{
    return type == HPCH_CRC32C ? "CRC32C" : "CRC32";
}

/* 0 when [offset, offset + len) lies in [0, capacity); else throws IllegalArgumentException. */
static int check_range(JNIEnv *env, jlong capacity, jlong offset, jlong len, const char *what)
{
    if (offset >= 0 && len >= 0 && offset <= capacity && len <= capacity - offset)
        return 0;
    hpch_throw(env, ILLEGAL_ARGUMENT, what);
    return -1;
}

static int check_arguments(JNIEnv *env, jint bytes_per_sum, jint type)
{
    if (bytes_per_sum <= 0) {
        hpch_throw(env, ILLEGAL_ARGUMENT, "bytesPerSum must be positive");
        return -1;
    }
    if (type != HPCH_CRC32 && type != HPCH_CRC32C) {
        hpch_throw(env, ILLEGAL_ARGUMENT, "checksum type must be CRC32 (1) or CRC32C (2)");
        return -1;
    }
    return 0;
}

static void throw_mismatch(JNIEnv *env, jint type, jint bytes_per_sum, jstring file_name,
                           jlong base_pos, const hpch_mismatch_t *mismatch)
{
    jlong position = base_pos + (jlong)mismatch->chunk * bytes_per_sum;
    const char *name = NULL;
    char message[1024];
    jclass cls;
    jmethodID ctor;
    jstring jmessage;
    jobject exception;

    if (file_name != NULL)
        name = (*env)->GetStringUTFChars(env, file_name, NULL);
    snprintf(message, sizeof(message),
             "Checksum %s not matched for file %s at position %lld: expected=%X but "
             "computed=%X, algorithm=native",
             type_name(type), name != NULL ? name : "", (long long)position,
             (unsigned)mismatch->expected, (unsigned)mismatch->computed);
    if (name != NULL)
        (*env)->ReleaseStringUTFChars(env, file_name, name);

    cls = (*env)->FindClass(env, CHECKSUM_EXCEPTION);
    if (cls == NULL)
        return;
    ctor = (*env)->GetMethodID(env, cls, "<init>", "(Ljava/lang/String;J)V");
    if (ctor == NULL)
        goto delete_class;
    jmessage = (*env)->NewStringUTF(env, message);
    if (jmessage == NULL)
        goto delete_class;
    exception = (*env)->NewObject(env, cls, ctor, jmessage, position);
    if (exception != NULL)
        (*env)->Throw(env, (jthrowable)exception);
    (*env)->DeleteLocalRef(env, jmessage);
delete_class:
    (*env)->DeleteLocalRef(env, cls);
}

static void direct_sums(JNIEnv *env, jint bytes_per_sum, jint type, jobject sums,
                        jint sums_offset, jobject data, jint data_offset, jint data_len,
                        jstring file_name, jlong base_pos, jboolean verify)
{
    uint8_t *sums_address;
    uint8_t *data_address;
    hpch_mismatch_t mismatch;

    if (check_arguments(env, bytes_per_sum, type) != 0)
        return;
    sums_address = (*env)->GetDirectBufferAddress(env, sums);
    data_address = (*env)->GetDirectBufferAddress(env, data);
    if (sums_address == NULL || data_address == NULL) {
        hpch_throw(env, ILLEGAL_ARGUMENT, "sums and data must be direct buffers");
        return;
    }
    if (check_range(env, (*env)->GetDirectBufferCapacity(env, data), data_offset, data_len,
                    "data offset and length exceed the data buffer") != 0 ||
        check_range(env, (*env)->GetDirectBufferCapacity(env, sums), sums_offset,
                    (jlong)hpch_sums_length((uint32_t)bytes_per_sum, (size_t)data_len),
                    "the sums buffer is too small for the data") != 0)
        return;
    if (hpch_chunked_sums((hpch_crc_type_t)type, (uint32_t)bytes_per_sum,
                          data_address + data_offset, (size_t)data_len,
                          sums_address + sums_offset, verify == JNI_TRUE, &mismatch) == 1)
        throw_mismatch(env, type, bytes_per_sum, file_name, base_pos, &mismatch);
}

JNIEXPORT void JNICALL
Java_org_apache_hadoop_util_NativeCrc32_nativeComputeChunkedSums(
    JNIEnv *env, jclass cls, jint bytes_per_sum, jint type, jobject sums, jint sums_offset,
    jobject data, jint data_offset, jint data_len, jstring file_name, jlong base_pos,
    jboolean verify)
{
    (void)cls;
    direct_sums(env, bytes_per_sum, type, sums, sums_offset, data, data_offset, data_len,
                file_name, base_pos, verify);
}

/* Deprecated in Hadoop, kept for its tests: nativeComputeChunkedSums with verify = true. */
JNIEXPORT void JNICALL
Java_org_apache_hadoop_util_NativeCrc32_nativeVerifyChunkedSums(
    JNIEnv *env, jclass cls, jint bytes_per_sum, jint type, jobject sums, jint sums_offset,
    jobject data, jint data_offset, jint data_len, jstring file_name, jlong base_pos)
{
    (void)cls;
    direct_sums(env, bytes_per_sum, type, sums, sums_offset, data, data_offset, data_len,
                file_name, base_pos, JNI_TRUE);
}

/*
 * Arrays are pinned with GetPrimitiveArrayCritical (no copy); nothing in between calls back
 * into the JVM, and the exception is built after both are released.
 */
JNIEXPORT void JNICALL
Java_org_apache_hadoop_util_NativeCrc32_nativeComputeChunkedSumsByteArray(
    JNIEnv *env, jclass cls, jint bytes_per_sum, jint type, jbyteArray sums, jint sums_offset,
    jbyteArray data, jint data_offset, jint data_len, jstring file_name, jlong base_pos,
    jboolean verify)
{
    uint8_t *sums_bytes;
    uint8_t *data_bytes;
    hpch_mismatch_t mismatch;
    int rc;

    (void)cls;
    if (check_arguments(env, bytes_per_sum, type) != 0)
        return;
    if (sums == NULL || data == NULL) {
        hpch_throw(env, "java/lang/NullPointerException", "sums and data must not be null");
        return;
    }
    if (check_range(env, (*env)->GetArrayLength(env, data), data_offset, data_len,
                    "data offset and length exceed the data array") != 0 ||
        check_range(env, (*env)->GetArrayLength(env, sums), sums_offset,
                    (jlong)hpch_sums_length((uint32_t)bytes_per_sum, (size_t)data_len),
                    "the sums array is too small for the data") != 0)
        return;

    data_bytes = (*env)->GetPrimitiveArrayCritical(env, data, NULL);
    if (data_bytes == NULL)
        return; /* OutOfMemoryError pending */
    sums_bytes = (*env)->GetPrimitiveArrayCritical(env, sums, NULL);
    if (sums_bytes == NULL) {
        (*env)->ReleasePrimitiveArrayCritical(env, data, data_bytes, JNI_ABORT);
        return;
    }
    rc = hpch_chunked_sums((hpch_crc_type_t)type, (uint32_t)bytes_per_sum,
                           data_bytes + data_offset, (size_t)data_len, sums_bytes + sums_offset,
                           verify == JNI_TRUE, &mismatch);
    (*env)->ReleasePrimitiveArrayCritical(env, sums, sums_bytes, verify ? JNI_ABORT : 0);
    (*env)->ReleasePrimitiveArrayCritical(env, data, data_bytes, JNI_ABORT);
    if (rc == 1)
        throw_mismatch(env, type, bytes_per_sum, file_name, base_pos, &mismatch);
}
