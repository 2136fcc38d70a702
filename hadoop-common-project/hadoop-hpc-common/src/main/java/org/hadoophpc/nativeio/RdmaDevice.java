/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One verbs device (an HCA or a Soft-RoCE link) and its ports, as probed by {@link
 * RdmaDevices#probe()}. A device that could not be opened or queried has no ports and a
 * {@link #problem()}. Immutable value.
 */
public final class RdmaDevice {
  private final String name;
  private final long nodeGuid;
  private final String firmwareVersion;
  private final int physicalPortCount;
  private final List<RdmaPort> ports;
  private final NativeIoException problem;

  RdmaDevice(String name, long nodeGuid, String firmwareVersion, int physicalPortCount,
      List<RdmaPort> ports, NativeIoException problem) {
    this.name = Objects.requireNonNull(name, "name");
    this.nodeGuid = nodeGuid;
    this.firmwareVersion = Objects.requireNonNull(firmwareVersion, "firmwareVersion");
    this.physicalPortCount = physicalPortCount;
    this.ports = List.copyOf(ports);
    this.problem = problem;
  }

  /** Kernel name, e.g. {@code mlx5_0} or {@code rxe0}. */
  public String name() {
    return name;
  }

  /** Node GUID in host order. */
  public long nodeGuid() {
    return nodeGuid;
  }

  /** Node GUID the way {@code ibv_devinfo} prints it, e.g. {@code 0002:c903:00a0:b1c2}. */
  public String nodeGuidText() {
    String hex = String.format("%016x", nodeGuid);
    return hex.substring(0, 4) + ":" + hex.substring(4, 8) + ":" + hex.substring(8, 12) + ":"
        + hex.substring(12);
  }

  public String firmwareVersion() {
    return firmwareVersion;
  }

  /** {@code phys_port_cnt} from {@code ibv_query_device}; 0 if the device was not queried. */
  public int physicalPortCount() {
    return physicalPortCount;
  }

  public List<RdmaPort> ports() {
    return ports;
  }

  /** Set when {@code ibv_open_device} or {@code ibv_query_device} failed. */
  public Optional<NativeIoException> problem() {
    return Optional.ofNullable(problem);
  }

  /** True when at least one port is ACTIVE. */
  public boolean hasActivePort() {
    return ports.stream().anyMatch(RdmaPort::isActive);
  }

  /**
   * The IPv4 address of the network interface behind GID 0 of {@code port} (RoCE: the Ethernet
   * netdev, IPoIB: ib0...), read from {@code /sys/class/infiniband/<dev>/ports/<port>/gid_attrs};
   * empty when the kernel does not say or the interface has no IPv4 address. rdma_cm listeners
   * and connections address the device by it.
   */
  public Optional<InetAddress> ipv4Address(int port) {
    Path ndev = Paths.get("/sys/class/infiniband", name, "ports", Integer.toString(port),
        "gid_attrs/ndevs/0");
    try {
      if (!Files.isReadable(ndev)) {
        return Optional.empty();
      }
      String netdev = new String(Files.readAllBytes(ndev), StandardCharsets.US_ASCII).trim();
      NetworkInterface nif = NetworkInterface.getByName(netdev);
      if (nif == null) {
        return Optional.empty();
      }
      return Collections.list(nif.getInetAddresses()).stream()
          .filter(a -> a instanceof Inet4Address).findFirst();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof RdmaDevice)) {
      return false;
    }
    RdmaDevice other = (RdmaDevice) o;
    return name.equals(other.name) && nodeGuid == other.nodeGuid
        && firmwareVersion.equals(other.firmwareVersion)
        && physicalPortCount == other.physicalPortCount && ports.equals(other.ports)
        && Objects.equals(problemText(), other.problemText());
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, nodeGuid, firmwareVersion, physicalPortCount, ports);
  }

  private String problemText() {
    return problem == null ? null : problem.getMessage();
  }

  @Override
  public String toString() {
    if (problem != null) {
      return name + " " + problem.getMessage();
    }
    return name + " (guid " + nodeGuidText() + ", fw " + firmwareVersion + ", " + ports + ")";
  }
}
