/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.hhh;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;

import org.apache.hadoop.hdfs.server.datanode.BlockMetadataHeader;
import org.apache.hadoop.util.DataChecksum;

/**
 * Checksums for replicas written to RAM_DISK (used by the DataNode's dataset in the in-memory
 * modes, {@code HhhFsDatasetBridge}).
 *
 * <p>Why: a LAZY_PERSIST file with one replica is sent without checksums, and stock's DataNode
 * keeps a RAM_DISK replica's meta file to its header. Reading such a replica whose length is
 * not a multiple of {@code dfs.bytes-per-checksum} then fails in Hadoop 3.5.0 ("Expected to read
 * 4 bytes from offset 7 but reached end of file": the reader looks up the last partial chunk's
 * checksum), so a file of an odd length was unreadable until persisted and evicted. When such a
 * replica is finalized its checksums are computed from the bytes in memory and written to its
 * meta file, as stock does for every other replica.
 */
public final class RamDiskChecksums {
  private RamDiskChecksums() {
  }

  /**
   * Fills {@code meta}, which holds only its header, with the checksums of {@code data} in the
   * header's type; leaves a meta file that already has checksums (or a NULL type) alone.
   */
  public static void writeChecksums(File data, File meta) throws IOException {
    DataChecksum sum;
    try (DataInputStream in = new DataInputStream(new BufferedInputStream(
        new FileInputStream(meta)))) {
      sum = BlockMetadataHeader.readHeader(in).getChecksum();
    }
    int header = BlockMetadataHeader.getHeaderSize();
    if (sum.getChecksumSize() == 0 || meta.length() > header) {
      return;
    }
    int chunk = sum.getBytesPerChecksum();
    int chunksPerRead = Math.max(1, (1 << 20) / chunk);
    ByteBuffer bytes = ByteBuffer.allocate(chunk * chunksPerRead);
    ByteBuffer sums = ByteBuffer.allocate(sum.getChecksumSize() * chunksPerRead);
    try (InputStream in = new FileInputStream(data);
        RandomAccessFile out = new RandomAccessFile(meta, "rw")) {
      out.seek(header);
      int n;
      while ((n = in.readNBytes(bytes.array(), 0, bytes.capacity())) > 0) {
        bytes.position(0).limit(n);
        int chunks = (n + chunk - 1) / chunk;
        sums.clear().limit(chunks * sum.getChecksumSize());
        sum.calculateChunkedSums(bytes, sums);
        out.write(sums.array(), 0, sums.limit());
      }
    }
  }
}
