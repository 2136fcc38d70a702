/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * Shared between the JNI translation units (hidden, like everything but JNI_OnLoad/OnUnload).
 */
#ifndef HPCN_JNI_H
#define HPCN_JNI_H

#include <jni.h>

/* Throws NativeIoException(call, err, strerror(err)); err is a positive errno. */
void hpcn_jni_throw(JNIEnv *env, const char *call, int err);

/*
 * Registers the verbs natives on cls (org.hadoophpc.net.verbs.VerbsNatives, handed over by
 * NativeMethods.bindVerbs); JNI_OK or JNI_ERR with an exception pending.
 */
jint hpcn_jni_verbs_register(JNIEnv *env, jclass cls);

#endif /* HPCN_JNI_H */
