/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
/**
 * The Lustre file system binding: {@code file://} with stripe layouts, stripe-sized blocks and
 * OST-derived block locations for paths under the configured Lustre directory.
 */
package org.hadoophpc.fs.lustre;
