/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle.protocol;

/**
 * A message of another hpc shuffle protocol version: the NodeManager and the job run different
 * hadoop-hpc releases. The service answers it with {@link ShuffleError#VERSION}; an older
 * service answers a newer reducer with {@link ShuffleError#BAD_REQUEST} and this text.
 */
public class VersionMismatchException extends ProtocolException {
  private static final long serialVersionUID = 1L;

  public VersionMismatchException(int version) {
    super("hpc shuffle protocol version " + version + " is not " + Wire.VERSION
        + ": NodeManager and job run different hadoop-hpc releases");
  }
}
