/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.hadoophpc.mapreduce.shuffle.ServiceLimits;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Concurrent admissions against {@link OpenBudget}'s caps, and files shared between holders. */
class OpenBudgetTest {
  private static final int THREADS = 16;

  @TempDir
  Path tmp;

  @Test
  void concurrentSessionsNeverPassTheCaps() throws Exception {
    OpenBudget b = new OpenBudget(new ServiceLimits(5, 3, 10, 10, 64, 10, 10));
    List<Boolean> jobA = all(() -> b.admitSession("a"));
    List<Boolean> jobB = all(() -> b.admitSession("b"));
    assertEquals(3, jobA.stream().filter(x -> x).count()); // per job
    assertEquals(2, jobB.stream().filter(x -> x).count()); // the total
    assertEquals(5, b.sessions());
    b.sessionClosed("a");
    assertEquals(4, b.sessions());
  }

  @Test
  void holdersOfOneFileShareOneChannelAndTheCapCountsFiles() throws Exception {
    OpenBudget b = new OpenBudget(new ServiceLimits(10, 10, 2, 2, 64, 10, 10));
    Path f = Files.write(tmp.resolve("file.out"), new byte[10]);
    List<OpenBudget.SharedFile> held = all(() -> b.acquire("a", f.toString(), () -> open(f)));
    for (OpenBudget.SharedFile h : held) {
      assertSame(held.get(0), h);
    }
    assertEquals(1, b.files());
    Path g = Files.write(tmp.resolve("other.out"), new byte[10]);
    Path h = Files.write(tmp.resolve("third.out"), new byte[10]);
    OpenBudget.SharedFile second = b.acquire("a", g.toString(), () -> open(g));
    assertNull(b.acquire("a", h.toString(), () -> open(h)), "a third file passes the cap");
    FileChannel ch = held.get(0).channel();
    for (OpenBudget.SharedFile x : held) {
      x.release();
    }
    assertFalse(ch.isOpen(), "closed with its last holder");
    second.release();
    assertEquals(0, b.files());
  }

  private static FileChannel open(Path p) throws IOException {
    return FileChannel.open(p, StandardOpenOption.READ);
  }

  /** {@code task} run by {@link #THREADS} threads released at once; their results. */
  private static <T> List<T> all(Callable<T> task) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    CyclicBarrier start = new CyclicBarrier(THREADS);
    try {
      List<Future<T>> fs = new ArrayList<>();
      for (int i = 0; i < THREADS; i++) {
        fs.add(pool.submit(() -> {
          start.await();
          return task.call();
        }));
      }
      List<T> out = new ArrayList<>();
      for (Future<T> f : fs) {
        out.add(f.get(60, TimeUnit.SECONDS));
      }
      return out;
    } finally {
      pool.shutdownNow();
    }
  }
}
