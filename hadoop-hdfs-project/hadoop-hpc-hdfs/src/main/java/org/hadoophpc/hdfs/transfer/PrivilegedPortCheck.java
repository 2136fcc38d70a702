/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.util.Arrays;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.security.UserGroupInformation.AuthenticationMethod;

/**
 * The one rule that keeps a secure DataNode which trusts its privileged transfer port off the
 * transport. In Hadoop 3.5.0 {@code SaslDataTransferServer.receive} (and the client's
 * {@code SaslDataTransferClient.send}) decide in this order: {@code dfs.encrypt.data.transfer}
 * → encrypted handshake; security off → no handshake; transfer port below 1024 → no handshake,
 * <em>whatever {@code dfs.data.transfer.protection} says</em> (the port is the proof that root
 * started the DataNode); else protection → SASL. A stream over the transport does not come
 * from a privileged port, so with that set-up nothing would authenticate it.
 * {@code ignore.secure.ports.for.testing} (secure, unprivileged port, no protection) skips
 * SASL on TCP as well, trusting no port: the transport weakens nothing there, so it is not
 * refused. Stateless.
 */
public final class PrivilegedPortCheck {
  static final String PLUGIN = RdmaDataTransferPlugin.class.getName();

  private PrivilegedPortCheck() {
  }

  /**
   * Why a DataNode with transfer port {@code xferPort} must not serve HDFS DataTransfer over
   * the transport, or null when HDFS's handshake does not rely on that port.
   */
  public static String problem(Configuration conf, int xferPort) {
    if (!trustsPrivilegedPorts(conf) || !privileged(xferPort)) {
      return null;
    }
    return "secure DataNode on privileged transfer port " + xferPort + " ("
        + DFSConfigKeys.DFS_DATANODE_ADDRESS_KEY + "): HDFS skips the SASL handshake on it and "
        + "trusts the port, which streams over the transport do not come from. Set "
        + DFSConfigKeys.DFS_ENCRYPT_DATA_TRANSFER_KEY + "=true, or an unprivileged "
        + DFSConfigKeys.DFS_DATANODE_ADDRESS_KEY + " port with "
        + DFSConfigKeys.DFS_DATA_TRANSFER_PROTECTION_KEY + " (SASL), or "
        + TransferConfigKeys.ENABLED_KEY + "=false, or remove " + PLUGIN + " from "
        + DFSConfigKeys.DFS_DATANODE_PLUGINS_KEY;
  }

  /**
   * True when, with {@code conf}, HDFS skips the SASL handshake towards (a client) or from (a
   * DataNode) a privileged transfer port: security on and data transfer not encrypted. A client
   * that does not know the cluster encrypts (the NameNode says so, the client's own key may be
   * unset) counts as skipping: it then uses stock TCP where it need not, never the reverse.
   */
  static boolean trustsPrivilegedPorts(Configuration conf) {
    return SecurityUtil.getAuthenticationMethod(conf) != AuthenticationMethod.SIMPLE
        && !conf.getBoolean(DFSConfigKeys.DFS_ENCRYPT_DATA_TRANSFER_KEY,
            DFSConfigKeys.DFS_ENCRYPT_DATA_TRANSFER_DEFAULT);
  }

  /** A transfer port HDFS's handshake trusts as proof of a root-started DataNode. */
  static boolean privileged(int xferPort) {
    return xferPort > 0 && SecurityUtil.isPrivilegedPort(xferPort);
  }

  /**
   * The client's side of the rule: why a stream to the DataNode at {@code xferPort} must go
   * over stock TCP, or null. HDFS's client skips SASL towards a privileged port, trusting that
   * only root could listen there; the transport endpoint (that port plus an offset, or another
   * port space) carries no such proof, so whoever listens there would get the stream unchecked.
   */
  static String clientProblem(boolean trustsPrivilegedPorts, int xferPort) {
    if (!trustsPrivilegedPorts || !privileged(xferPort)) {
      return null;
    }
    return "DataNode on privileged transfer port " + xferPort + " in a secure cluster without "
        + DFSConfigKeys.DFS_ENCRYPT_DATA_TRANSFER_KEY + ": HDFS's client skips the SASL handshake"
        + " towards that port, and the transport endpoint carries no proof of a root-started"
        + " DataNode (set " + DFSConfigKeys.DFS_ENCRYPT_DATA_TRANSFER_KEY + "=true, or an"
        + " unprivileged " + DFSConfigKeys.DFS_DATANODE_ADDRESS_KEY + " port with "
        + DFSConfigKeys.DFS_DATA_TRANSFER_PROTECTION_KEY + ")";
  }

  /**
   * Refuses a DataNode configuration that runs the plugin (listed in {@code
   * dfs.datanode.plugins}, not turned off) on a privileged port without SASL; called before the
   * DataNode starts (its configured transfer port; 0 = ephemeral, never privileged).
   *
   * @throws IllegalArgumentException naming the keys to set
   */
  public static void checkDataNode(Configuration conf) {
    if (!Arrays.asList(conf.getTrimmedStrings(DFSConfigKeys.DFS_DATANODE_PLUGINS_KEY))
        .contains(PLUGIN) || TransferConf.enabled(conf) == TransferConf.Enabled.FALSE) {
      return;
    }
    int port = NetUtils.createSocketAddr(conf.getTrimmed(DFSConfigKeys.DFS_DATANODE_ADDRESS_KEY,
        DFSConfigKeys.DFS_DATANODE_ADDRESS_DEFAULT)).getPort();
    String problem = problem(conf, port);
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
  }
}
