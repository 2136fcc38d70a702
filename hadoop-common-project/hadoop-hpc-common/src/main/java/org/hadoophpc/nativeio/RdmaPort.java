/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import java.util.Objects;
import java.util.Optional;

/**
 * One port of an {@link RdmaDevice} as {@code ibv_query_port} reported it at probe time.
 * Immutable value; the values are a snapshot, so a port that goes down later is not noticed.
 */
public final class RdmaPort {
  /** How the port is attached; spelled the way {@code hpcn_link_layer_name} spells it. */
  public enum LinkLayer {
    INFINIBAND("InfiniBand"), ROCE("RoCE"), UNKNOWN("unknown");

    private final String text;

    LinkLayer(String text) {
      this.text = text;
    }

    /** Parses the native spelling; anything unrecognised is {@link #UNKNOWN}. */
    static LinkLayer fromText(String text) {
      for (LinkLayer value : values()) {
        if (value.text.equals(text)) {
          return value;
        }
      }
      return UNKNOWN;
    }

    @Override
    public String toString() {
      return text;
    }
  }

  /** Logical port state, named as in {@code hpcn_port_state_name} (not IBV_* numbers). */
  public enum State {
    NOP, DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER, UNKNOWN;

    static State fromText(String text) {
      for (State value : values()) {
        if (value.name().equals(text)) {
          return value;
        }
      }
      return UNKNOWN;
    }
  }

  private final int number;
  private final LinkLayer linkLayer;
  private final State state;
  private final int activeMtu;
  private final int lid;
  private final int gidCount;
  private final NativeIoException problem;

  RdmaPort(int number, LinkLayer linkLayer, State state, int activeMtu, int lid, int gidCount,
      NativeIoException problem) {
    this.number = number;
    this.linkLayer = Objects.requireNonNull(linkLayer, "linkLayer");
    this.state = Objects.requireNonNull(state, "state");
    this.activeMtu = activeMtu;
    this.lid = lid;
    this.gidCount = gidCount;
    this.problem = problem;
  }

  /** 1-based port number. */
  public int number() {
    return number;
  }

  public LinkLayer linkLayer() {
    return linkLayer;
  }

  public State state() {
    return state;
  }

  /** True when the port is ACTIVE and was queried without error. */
  public boolean isActive() {
    return problem == null && state == State.ACTIVE;
  }

  /** Active MTU in bytes (256 .. 4096), 0 if unknown. */
  public int activeMtu() {
    return activeMtu;
  }

  /** InfiniBand local identifier; 0 on RoCE. */
  public int lid() {
    return lid;
  }

  /** Number of non-zero GID table entries (scan capped at 256). */
  public int gidCount() {
    return gidCount;
  }

  /** Set when {@code ibv_query_port} failed; the other values are then meaningless. */
  public Optional<NativeIoException> problem() {
    return Optional.ofNullable(problem);
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof RdmaPort)) {
      return false;
    }
    RdmaPort other = (RdmaPort) o;
    return number == other.number && linkLayer == other.linkLayer && state == other.state
        && activeMtu == other.activeMtu && lid == other.lid && gidCount == other.gidCount
        && Objects.equals(problemText(), other.problemText());
  }

  @Override
  public int hashCode() {
    return Objects.hash(number, linkLayer, state, activeMtu, lid, gidCount);
  }

  private String problemText() {
    return problem == null ? null : problem.getMessage();
  }

  /** E.g. {@code "port 1 InfiniBand ACTIVE mtu 4096 lid 7 gids 1"}. */
  @Override
  public String toString() {
    if (problem != null) {
      return "port " + number + " " + problem.getMessage();
    }
    return "port " + number + " " + linkLayer + " " + state + " mtu " + activeMtu + " lid " + lid
        + " gids " + gidCount;
  }
}
