/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * User and group names: NativeIO$POSIX's id lookups (hpch_jni.h) and
 * org.apache.hadoop.security.JniBasedUnixGroupsMapping, which the default group mapping
 * (JniBasedUnixGroupsMappingWithFallback) switches to once libhadoop is loaded, so every
 * NameNode and ResourceManager permission check asks it. Results must equal `id -gn; id -Gn`
 * (ShellBasedUnixGroupsMapping): primary group first, no repeats, an unknown user has none.
 */
#include "hpch_jni.h"

#include <errno.h>
#include <grp.h>
#include <netdb.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOOKUP_BUFFER_MAX (1u << 20) /* an NSS entry larger than 1 MiB is refused (ERANGE) */
#define GROUPS_MAX 65536             /* Linux's NGROUPS_MAX */

/* ---- passwd/group lookups ---------------------------------------------------------------- */

/*
 * One NSS lookup into buffer; copies what it needs out before returning (buffer is freed
 * then). Returns 0 (found or not: *out says), or an errno; ERANGE asks for a larger buffer.
 */
typedef int (*lookup_fn)(const void *key, char *buffer, size_t size, void *out);

/* NSS modules answer "no such entry" as 0 + NULL or as one of these (getpwuid_r(3)). */
static int not_found(int rc)
{
    return rc == ENOENT || rc == ESRCH || rc == EBADF || rc == EPERM;
}

/* Runs lookup with a buffer that doubles on ERANGE up to LOOKUP_BUFFER_MAX, under the lock. */
static int with_buffer(lookup_fn lookup, const void *key, void *out)
{
    for (size_t size = 1024;; size *= 2) {
        char *buffer = malloc(size);
        int rc;

        if (buffer == NULL)
            return ENOMEM;
        hpch_ids_lock();
        do {
            rc = lookup(key, buffer, size, out);
        } while (rc == EINTR);
        hpch_ids_unlock();
        free(buffer);
        if (rc != ERANGE || size >= LOOKUP_BUFFER_MAX)
            return rc;
    }
}

/* out: char ** set to a malloc'd name, or NULL for no entry. */
static int user_name_lookup(const void *key, char *buffer, size_t size, void *out)
{
    struct passwd entry;
    struct passwd *result = NULL;
    int rc = getpwuid_r(*(const uid_t *)key, &entry, buffer, size, &result);

    if (rc != 0 && !not_found(rc))
        return rc;
    *(char **)out = rc == 0 && result != NULL ? strdup(result->pw_name) : NULL;
    return rc == 0 && result != NULL && *(char **)out == NULL ? ENOMEM : 0;
}

static int group_name_lookup(const void *key, char *buffer, size_t size, void *out)
{
    struct group entry;
    struct group *result = NULL;
    int rc = getgrgid_r(*(const gid_t *)key, &entry, buffer, size, &result);

    if (rc != 0 && !not_found(rc))
        return rc;
    *(char **)out = rc == 0 && result != NULL ? strdup(result->gr_name) : NULL;
    return rc == 0 && result != NULL && *(char **)out == NULL ? ENOMEM : 0;
}

/* The user's primary gid. */
typedef struct primary_group {
    int found;
    gid_t gid;
} primary_group_t;

static int primary_group_lookup(const void *key, char *buffer, size_t size, void *out)
{
    struct passwd entry;
    struct passwd *result = NULL;
    primary_group_t *primary = out;
    int rc = getpwnam_r((const char *)key, &entry, buffer, size, &result);

    if (rc != 0 && !not_found(rc))
        return rc;
    primary->found = rc == 0 && result != NULL;
    if (primary->found)
        primary->gid = result->pw_gid;
    return 0;
}

static int lookup_group(gid_t gid, char **name_out)
{
    return with_buffer(group_name_lookup, &gid, name_out);
}

/* name, or the decimal id when there is no entry. */
static jstring name_or_number(JNIEnv *env, int rc, char *name, unsigned long id)
{
    jstring result;
    char number[32];

    if (rc == 0 && name != NULL) {
        result = (*env)->NewStringUTF(env, name);
        free(name);
        return result;
    }
    if (rc != 0) {
        hpch_throw_errno(env, rc, "looking up an id's name");
        return NULL;
    }
    snprintf(number, sizeof(number), "%lu", id);
    return (*env)->NewStringUTF(env, number);
}

jstring hpch_user_name(JNIEnv *env, uid_t uid)
{
    char *name = NULL;
    int rc = with_buffer(user_name_lookup, &uid, &name);

    return name_or_number(env, rc, name, (unsigned long)uid);
}

jstring hpch_group_name(JNIEnv *env, gid_t gid)
{
    char *name = NULL;
    int rc = lookup_group(gid, &name);

    return name_or_number(env, rc, name, (unsigned long)gid);
}

/* ---- JniBasedUnixGroupsMapping ---------------------------------------------------------- */

/* The user's gids, primary first, without repeats; *count 0 for an unknown user. */
static int user_gids(const char *user, gid_t **gids_out, int *count_out)
{
    primary_group_t group = { 0, 0 };
    gid_t primary;
    gid_t *gids;
    int count = 64;
    int rc;
    int unique = 0;

    rc = with_buffer(primary_group_lookup, user, &group);
    if (rc != 0)
        return rc;
    primary = group.gid;
    if (!group.found) {
        *gids_out = NULL;
        *count_out = 0;
        return 0;
    }
    for (;;) {
        int asked = count;

        gids = malloc(sizeof(gid_t) * (size_t)count);
        if (gids == NULL)
            return ENOMEM;
        hpch_ids_lock();
        rc = getgrouplist(user, primary, gids, &count);
        hpch_ids_unlock();
        if (rc >= 0)
            break;
        free(gids);
        if (count <= asked) /* getgrouplist failed without asking for more room */
            count = asked * 2;
        if (count > GROUPS_MAX)
            return ERANGE;
    }
    /* getgrouplist puts the group argument in the list; move it first, drop repeats. */
    for (int i = 0; i < count; i++) {
        int seen = 0;

        for (int j = 0; j < unique && !seen; j++)
            seen = gids[j] == gids[i];
        if (!seen)
            gids[unique++] = gids[i];
    }
    for (int i = 1; i < unique; i++) {
        if (gids[i] == primary) {
            memmove(gids + 1, gids, sizeof(gid_t) * (size_t)i);
            gids[0] = primary;
            break;
        }
    }
    *gids_out = gids;
    *count_out = unique;
    return 0;
}

static jobjectArray string_array(JNIEnv *env, char **names, int count)
{
    jclass string_class = (*env)->FindClass(env, "java/lang/String");
    jobjectArray array;

    if (string_class == NULL)
        return NULL;
    array = (*env)->NewObjectArray(env, count, string_class, NULL);
    (*env)->DeleteLocalRef(env, string_class);
    if (array == NULL)
        return NULL;
    for (int i = 0; i < count; i++) {
        jstring name = (*env)->NewStringUTF(env, names[i]);

        if (name == NULL)
            return NULL;
        (*env)->SetObjectArrayElement(env, array, i, name);
        (*env)->DeleteLocalRef(env, name);
    }
    return array;
}

/* JniBasedUnixGroupsMapping.logError(int gid, String error): a group without a name is left
 * out of the answer, and Java logs it. */
static void log_unnamed_group(JNIEnv *env, jclass cls, gid_t gid)
{
    jmethodID log = (*env)->GetStaticMethodID(env, cls, "logError", "(ILjava/lang/String;)V");
    jstring message;

    if (log == NULL) {
        (*env)->ExceptionClear(env); /* an older class without the hook: skip quietly */
        return;
    }
    message = (*env)->NewStringUTF(env, "no group entry for this id");
    if (message == NULL)
        return;
    (*env)->CallStaticVoidMethod(env, cls, log, (jint)gid, message);
    (*env)->DeleteLocalRef(env, message);
}

static jobjectArray JNICALL groups_for_user(JNIEnv *env, jclass cls, jstring juser)
{
    const char *user;
    gid_t *gids = NULL;
    char **names = NULL;
    int count = 0;
    int named = 0;
    int rc;
    jobjectArray result = NULL;

    if (juser == NULL) {
        hpch_throw(env, "java/lang/NullPointerException", "user is null");
        return NULL;
    }
    user = (*env)->GetStringUTFChars(env, juser, NULL);
    if (user == NULL)
        return NULL;
    rc = user_gids(user, &gids, &count);
    (*env)->ReleaseStringUTFChars(env, juser, user);
    if (rc != 0) {
        hpch_throw_errno(env, rc, "getgrouplist");
        return NULL;
    }
    names = calloc((size_t)count + 1, sizeof(char *));
    if (names == NULL) {
        hpch_throw_errno(env, ENOMEM, NULL);
        goto free_gids;
    }
    for (int i = 0; i < count; i++) {
        char *name = NULL;

        rc = lookup_group(gids[i], &name);
        if (rc == 0 && name != NULL) {
            names[named++] = name;
            continue;
        }
        if (rc != 0) {
            hpch_throw_errno(env, rc, "getgrgid_r");
            goto free_names;
        }
        log_unnamed_group(env, cls, gids[i]);
        if ((*env)->ExceptionCheck(env))
            goto free_names;
    }
    result = string_array(env, names, named);
free_names:
    for (int i = 0; i < named; i++)
        free(names[i]);
    free(names);
free_gids:
    free(gids);
    return result;
}

static const JNINativeMethod groups_methods[] = {
    { "getGroupsForUser", "(Ljava/lang/String;)[Ljava/lang/String;", (void *)groups_for_user },
};

/* JniBasedUnixGroupsMapping's static initializer; cls is that class. */
JNIEXPORT void JNICALL
Java_org_apache_hadoop_security_JniBasedUnixGroupsMapping_anchorNative(JNIEnv *env, jclass cls)
{
    (*env)->RegisterNatives(env, cls, groups_methods,
                            (jint)(sizeof(groups_methods) / sizeof(groups_methods[0])));
}

/* ---- JniBasedUnixGroupsNetgroupMapping ------------------------------------------------- */

/*
 * The users of a netgroup (hadoop.security.group.mapping = the netgroup mapping, for ACLs
 * naming @netgroups). setnetgrent keeps its cursor in libc's global state: one caller at a
 * time. Triples without a user part are skipped.
 */
JNIEXPORT jobjectArray JNICALL
Java_org_apache_hadoop_security_JniBasedUnixGroupsNetgroupMapping_getUsersForNetgroupJNI(
    JNIEnv *env, jobject self, jstring jgroup)
{
    static pthread_mutex_t netgroup_mutex = PTHREAD_MUTEX_INITIALIZER;
    const char *group;
    char **users = NULL;
    int count = 0;
    int capacity = 0;
    int failed = 0;
    jobjectArray result = NULL;

    (void)self;
    if (jgroup == NULL) {
        hpch_throw(env, "java/lang/NullPointerException", "netgroup is null");
        return NULL;
    }
    group = (*env)->GetStringUTFChars(env, jgroup, NULL);
    if (group == NULL)
        return NULL;
    pthread_mutex_lock(&netgroup_mutex);
    if (setnetgrent(group) == 1) {
        char buffer[4096];
        char *host;
        char *user;
        char *domain;

        while (!failed && getnetgrent_r(&host, &user, &domain, buffer, sizeof(buffer)) == 1) {
            if (user == NULL || user[0] == '\0')
                continue;
            if (count == capacity) {
                int grown = capacity == 0 ? 16 : capacity * 2;
                char **more = grown <= GROUPS_MAX ? realloc(users, sizeof(char *) * (size_t)grown)
                                                  : NULL;

                if (more == NULL) {
                    failed = 1;
                    break;
                }
                users = more;
                capacity = grown;
            }
            users[count] = strdup(user);
            if (users[count] == NULL)
                failed = 1;
            else
                count++;
        }
    }
    endnetgrent();
    pthread_mutex_unlock(&netgroup_mutex);
    (*env)->ReleaseStringUTFChars(env, jgroup, group);

    if (failed)
        hpch_throw_errno(env, ENOMEM, "netgroup users");
    else
        result = string_array(env, users, count);
    for (int i = 0; i < count; i++)
        free(users[i]);
    free(users);
    return result;
}
