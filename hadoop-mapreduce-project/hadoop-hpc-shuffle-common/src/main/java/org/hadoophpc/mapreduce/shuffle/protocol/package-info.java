/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
/**
 * Messages between the reducer plugin and the NodeManager's HpcShuffleHandler, carried as
 * transport requests: open (authenticated, lists the maps), read (one chunk of one partition,
 * answered with the raw bytes), close. One class per message.
 */
package org.hadoophpc.mapreduce.shuffle.protocol;
