/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import java.io.File;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The RDMA devices of this host, or the reason there are none. {@link #probe()} never throws:
 * a missing native library, a host without RDMA, or a failing {@code ibv_get_device_list} all
 * become an empty result with a {@link #reason()} that says what to do. Immutable; every call
 * to {@link #probe()} asks the kernel again.
 */
public final class RdmaDevices {
  /** Where the kernel lists RDMA devices; read only to word the "no devices" reason. */
  static final String SYSFS_DIR = "/sys/class/infiniband";

  static final String NO_DEVICES_REASON = "no RDMA devices found: " + SYSFS_DIR
      + " is empty or missing; load an HCA driver or Soft-RoCE"
      + " (modprobe rdma_rxe; rdma link add rxe0 type rxe netdev <if>)";

  static final String NO_PROVIDER_REASON = "no RDMA devices found: " + SYSFS_DIR
      + " lists devices but libibverbs opened none; install rdma-core's ibverbs-providers"
      + " (the user-space driver for the HCA)";

  /** Number of tab-separated fields in a probeDevices() record (hpcn_port_format). */
  private static final int RECORD_FIELDS = 12;

  private final List<RdmaDevice> devices;
  private final String reason;

  private RdmaDevices(List<RdmaDevice> devices, String reason) {
    this.devices = List.copyOf(devices);
    this.reason = reason;
  }

  /** Lists the devices now; never throws. */
  public static RdmaDevices probe() {
    if (!HpcNative.isAvailable()) {
      return new RdmaDevices(List.of(),
          "libhpcnative unavailable: " + HpcNative.unavailabilityCause().getMessage());
    }
    String[] records;
    try {
      records = NativeMethods.probeDevices();
    } catch (NativeIoException e) {
      return new RdmaDevices(List.of(), "RDMA device probe failed: " + e.getMessage());
    }
    return fromRecords(records);
  }

  /**
   * Probes and returns the device called {@code name} (e.g. from {@code hadoop.rdma.dev.name}).
   *
   * @throws NativeIoException naming the devices that do exist, or why there are none
   */
  public static RdmaDevice find(String name) throws NativeIoException {
    return probe().device(name);
  }

  /** The device called {@code name} in this result; see {@link #find(String)}. */
  public RdmaDevice device(String name) throws NativeIoException {
    for (RdmaDevice device : devices) {
      if (device.name().equals(name)) {
        return device;
      }
    }
    String present = devices.isEmpty()
        ? "there are none (" + reason + ")"
        : "devices present: " + devices.stream()
            .map(d -> d.name() + " (" + linkLayers(d) + ")")
            .collect(Collectors.joining(", "));
    throw new NativeIoException("find RDMA device " + name, 0, "no such device; " + present);
  }

  private static String linkLayers(RdmaDevice device) {
    if (device.ports().isEmpty()) {
      return device.problem().map(Throwable::getMessage).orElse("no ports");
    }
    return device.ports().stream().map(p -> p.linkLayer().toString()).distinct()
        .collect(Collectors.joining("/"));
  }

  /** The devices, in kernel order; empty when {@link #reason()} is set. */
  public List<RdmaDevice> devices() {
    return devices;
  }

  public boolean isEmpty() {
    return devices.isEmpty();
  }

  /** Why there are no devices; empty when there are some. */
  public Optional<String> reason() {
    return Optional.ofNullable(reason);
  }

  /**
   * Builds the result from the native records: one per port, 12 tab-separated fields
   * {@code device, port, linkLayer, state, activeMtu, lid, gidCount, nodeGuidHex, fwVer, errno,
   * failedCall, strerror}; port 0 with errno set marks a device that could not be opened or
   * queried. The format is defined by hpcn_port_format in hpcn.h. Public so that code choosing
   * a device can be tested with records of hardware this machine lacks.
   */
  public static RdmaDevices fromRecords(String[] records) {
    Map<String, List<String[]>> byDevice = new LinkedHashMap<>();
    for (String record : records) {
      String[] f = record.split("\t", -1);
      if (f.length != RECORD_FIELDS) {
        throw new IllegalStateException("malformed device record from libhpcnative ("
            + f.length + " fields, expected " + RECORD_FIELDS + "): " + record);
      }
      byDevice.computeIfAbsent(f[0], k -> new ArrayList<>()).add(f);
    }
    if (byDevice.isEmpty()) {
      return new RdmaDevices(List.of(), noDevicesReason(new File(SYSFS_DIR)));
    }

    List<RdmaDevice> devices = new ArrayList<>();
    for (Map.Entry<String, List<String[]>> entry : byDevice.entrySet()) {
      String name = entry.getKey();
      List<RdmaPort> ports = new ArrayList<>();
      NativeIoException deviceProblem = null;
      String[] first = entry.getValue().get(0);
      for (String[] f : entry.getValue()) {
        int portNumber = Integer.parseInt(f[1]);
        NativeIoException problem = problem(f, name);
        if (portNumber == 0) {
          deviceProblem = problem;
          continue;
        }
        ports.add(new RdmaPort(portNumber, RdmaPort.LinkLayer.fromText(f[2]),
            RdmaPort.State.fromText(f[3]), Integer.parseInt(f[4]), Integer.parseInt(f[5]),
            Integer.parseInt(f[6]), problem));
      }
      // Every port 1..phys_port_cnt gets a record, so the port count is the record count.
      devices.add(new RdmaDevice(name, Long.parseUnsignedLong(first[7], 16), first[8],
          ports.size(), ports, deviceProblem));
    }
    return new RdmaDevices(devices, null);
  }

  private static NativeIoException problem(String[] f, String device) {
    int errno = Integer.parseInt(f[9]);
    if (errno == 0) {
      return null;
    }
    String call = f[10] + "(" + device + ("ibv_query_port".equals(f[10]) ? ", " + f[1] : "")
        + ")";
    return new NativeIoException(call, errno, f[11]);
  }

  static String noDevicesReason(File sysfsDir) {
    String[] entries = sysfsDir.list();
    return entries != null && entries.length > 0 ? NO_PROVIDER_REASON : NO_DEVICES_REASON;
  }

  @Override
  public String toString() {
    return devices.isEmpty() ? reason : devices.toString();
  }
}
