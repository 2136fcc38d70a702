/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.util.function.Supplier;

import org.hadoophpc.nativeio.NativeIoException;
import org.hadoophpc.nativeio.RdmaDevice;
import org.hadoophpc.nativeio.RdmaDevices;
import org.hadoophpc.nativeio.RdmaPort;

/**
 * Decides between verbs and tcp from the configuration and what the node offers. Pure: the
 * device probe is passed in, so every branch is testable without hardware.
 */
public final class TransportSelector {
  private TransportSelector() {
  }

  /**
   * The decision. For verbs, {@code device} and {@code port} say where; for tcp, {@code reason}
   * says why verbs was not used (empty when tcp was asked for).
   */
  public record Selection(boolean verbs, RdmaDevice device, int port, String reason) {
    static Selection tcp(String reason) {
      return new Selection(false, null, 0, reason);
    }
  }

  /**
   * @throws TransportException when verbs was required ({@code hadoop.hpc.transport=verbs} with
   *     {@code hadoop.hpc.transport.open.fails.without.verbs=true}) but cannot be used; the
   *     message says why
   */
  public static Selection select(TransportConf conf, Supplier<RdmaDevices> probe)
      throws TransportException {
    if (conf.kind() == TransportConf.Kind.TCP) {
      return Selection.tcp("");
    }
    String why;
    try {
      Selection s = findVerbs(conf, probe.get());
      if (s.verbs()) {
        return s;
      }
      why = s.reason();
    } catch (NativeIoException e) {
      why = e.getMessage();
    }
    if (conf.kind() == TransportConf.Kind.VERBS && conf.openFailsWithoutVerbs()) {
      throw new TransportException("verbs transport required ("
          + TransportConfigKeys.OPEN_FAILS_WITHOUT_VERBS_KEY + "=true) but unusable: " + why);
    }
    return Selection.tcp(why);
  }

  private static Selection findVerbs(TransportConf conf, RdmaDevices devices)
      throws NativeIoException {
    if (devices.isEmpty()) {
      return Selection.tcp(devices.reason().orElse("no RDMA devices"));
    }
    if (!conf.device().isEmpty()) {
      RdmaDevice d = devices.device(conf.device());
      return onDevice(conf, d, true);
    }
    String last = null;
    for (RdmaDevice d : devices.devices()) {
      Selection s = onDevice(conf, d, false);
      if (s.verbs()) {
        return s;
      }
      last = s.reason();
    }
    return Selection.tcp(last);
  }

  private static Selection onDevice(TransportConf conf, RdmaDevice d, boolean named) {
    if (d.problem().isPresent()) {
      return Selection.tcp("RDMA device " + d.name() + " unusable: "
          + d.problem().get().getMessage());
    }
    String wanted = switch (conf.linkLayer()) {
      case INFINIBAND -> " InfiniBand (" + TransportConfigKeys.HIBD_IB_ENABLED_KEY + ")";
      case ROCE -> " RoCE (" + TransportConfigKeys.HIBD_ROCE_ENABLED_KEY + ")";
      default -> "";
    };
    for (RdmaPort p : d.ports()) {
      if (conf.port() != 0 && p.number() != conf.port()) {
        continue;
      }
      if (!linkMatches(conf.linkLayer(), p.linkLayer())) {
        continue;
      }
      if (p.isActive()) {
        return new Selection(true, d, p.number(), "");
      }
    }
    String portText = conf.port() == 0 ? "no active" + wanted + " port"
        : "port " + conf.port() + " (" + TransportConfigKeys.VERBS_PORT_KEY + ") is not an"
            + " active" + wanted + " port";
    return Selection.tcp("RDMA device " + d.name() + (named ? " (configured)" : "") + " has "
        + portText + ": " + d.ports());
  }

  private static boolean linkMatches(TransportConf.LinkLayer wanted, RdmaPort.LinkLayer actual) {
    return switch (wanted) {
      case INFINIBAND -> actual == RdmaPort.LinkLayer.INFINIBAND;
      case ROCE -> actual == RdmaPort.LinkLayer.ROCE;
      default -> true;
    };
  }
}
