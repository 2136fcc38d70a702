/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * Shared between libhadoop.so's JNI translation units (hidden, like everything but the
 * Java_* entry points listed in hpch_jni_util.c).
 */
#ifndef HPCH_JNI_H
#define HPCH_JNI_H

#include <jni.h>
#include <sys/types.h>

/* Throws org.apache.hadoop.io.nativeio.NativeIOException(strerror(err) [+ ": " + what], Errno). */
void hpch_throw_errno(JNIEnv *env, int err, const char *what);

/* Throws a new class_name(message); class_name is a JNI class name with a String constructor. */
void hpch_throw(JNIEnv *env, const char *class_name, const char *message);

/*
 * hadoop.workaround.non.threadsafe.getpwuid: some NSS modules (LDAP ones, historically) are
 * not thread-safe even through the _r calls, so with the flag on every passwd/group lookup
 * takes one lock. Set once by initNativePosix.
 */
void hpch_ids_serialize(int on);
void hpch_ids_lock(void);
void hpch_ids_unlock(void);

/*
 * The user or group name of an id as a new Java string; an id without a name becomes its
 * decimal number, as ls and the JDK's PosixFileAttributes show it. NULL with an exception
 * pending on a lookup failure.
 */
jstring hpch_user_name(JNIEnv *env, uid_t uid);
jstring hpch_group_name(JNIEnv *env, gid_t gid);

#endif /* HPCH_JNI_H */
