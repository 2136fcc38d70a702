#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# A per-job cluster that authenticates its callers (sbin/hpc-cluster.sh configure --secure):
# a Kerberos realm of the job's own, served by a KDC on the master (org.hadoophpc.tools.kdc.
# JobKdc, started first and stopped last with the master's daemons), Hadoop's Kerberos
# security with every principal of the realm mapped to the owner's Unix name, SASL-protected
# block transfer and HTTPS for HDFS's web ports (what a DataNode that is not root needs), SPNEGO
# on every web port. Keytabs, key stores and the KDC's state live in <conf dir>/security (the
# owner's, mode 700; files 600). Sourced by hpc-functions.sh, never run.

# Service principals of the workers: one name for every worker, not <service>/_HOST. The
# masters check a DataNode's or NodeManager's principal against the reverse look-up of the
# address it connects from (ServiceAuthorizationManager), which on IB names, loopback or
# multi-homed nodes is often not the name the worker logged in with; the job's realm holds
# only this job's principals, so a shared worker name loses nothing.
HPC_SEC_WORKER_INSTANCE=cluster
# The master's HTTPS ports (Hadoop's defaults): NameNode and DataNode under dfs.http.policy
# HTTPS_ONLY.
HPC_SEC_NN_HTTPS_PORT=9871
HPC_SEC_DN_HTTPS_PORT=9865
# How long start waits for the KDC's ready file (seconds).
HPC_SEC_KDC_START_TIMEOUT=${HADOOP_HPC_KDC_START_TIMEOUT:-60}

## hpc_secure_dir CONF_DIR: the private directory of a secure configuration.
hpc_secure_dir() {
  printf '%s/security' "$1"
}

## hpc_secure_realm JOBID: the realm of a job: HPC-<job id>, or HPC-<seconds>-<pid> outside a
## batch job; upper case, letters, digits and '-' only (auth_to_local rules use it as a regex).
hpc_secure_realm() {
  local id=${1:-}
  [[ -n "${id}" ]] || id="$(date +%s)-$$"
  id=${id^^}
  printf 'HPC-%s' "${id//[^A-Z0-9-]/-}"
}

## hpc_secure_names MASTER_HOST SUFFIX HOST...: the host names web servers may substitute for
## _HOST (lower case, each once): the master's, each host's and its IB name; for a loopback
## entry also this host's names, which its daemons see.
hpc_secure_names() {
  local master_host=$1 suffix=$2 h
  shift 2
  {
    echo "${master_host}"
    for h in "$@"; do
      echo "${h}"
      [[ -n "${suffix}" ]] && echo "${h}${suffix}"
      if hpc_is_loopback "${h}"; then
        echo localhost
        hostname 2>/dev/null
        hostname -f 2>/dev/null
      fi
    done
  } | awk 'NF { $1 = tolower($1); if (!seen[$1]++) print $1 }'
}

## hpc_secure_keystore SECDIR NAMES...: a key pair for every web port (one certificate naming
## every host, valid 30 days) in SECDIR/keystore.p12, its certificate in SECDIR/truststore.p12;
## passwords in SECDIR/keystore.pass and truststore.pass. Made by the JDK's keytool.
hpc_secure_keystore() {
  local sec=$1 keytool="${JAVA_HOME:+${JAVA_HOME}/bin/}keytool" san="" n out
  shift
  for n in "$@"; do
    san+="${san:+,}dns:${n}"
  done
  san+=",ip:127.0.0.1"
  (umask 077
    head -c 24 /dev/urandom | base64 | tr -d '/+=' >"${sec}/keystore.pass"
    head -c 24 /dev/urandom | base64 | tr -d '/+=' >"${sec}/truststore.pass"
    head -c 48 /dev/urandom | base64 >"${sec}/http-signature-secret") || return 1
  rm -f "${sec}/keystore.p12" "${sec}/truststore.p12" "${sec}/cluster.crt"
  if ! out=$(umask 077 && "${keytool}" -genkeypair -alias hpc -keyalg RSA -keysize 2048 \
      -validity 30 -dname "CN=$1" -ext "SAN=${san}" -storetype pkcs12 \
      -keystore "${sec}/keystore.p12" -storepass:file "${sec}/keystore.pass" 2>&1 &&
      "${keytool}" -exportcert -rfc -alias hpc -keystore "${sec}/keystore.p12" \
        -storepass:file "${sec}/keystore.pass" -file "${sec}/cluster.crt" 2>&1 &&
      "${keytool}" -importcert -noprompt -alias hpc -file "${sec}/cluster.crt" -storetype pkcs12 \
        -keystore "${sec}/truststore.p12" -storepass:file "${sec}/truststore.pass" 2>&1); then
    hpc_error "keytool could not make the cluster's key store in ${sec}:"
    hpc_quote <<<"${out}" >&2
    return 1
  fi
}

## hpc_secure_ssl_files CONF_DIR: ssl-server.xml and ssl-client.xml (mode 600) naming the key
## and trust stores of CONF_DIR/security.
hpc_secure_ssl_files() {
  local conf=$1 sec kp tp
  sec=$(hpc_secure_dir "${conf}")
  kp=$(<"${sec}/keystore.pass")
  tp=$(<"${sec}/truststore.pass")
  (umask 077
    {
      printf '<?xml version="1.0" encoding="UTF-8"?>\n<!-- %s -->\n<configuration>\n' \
        "the key of the web ports of a secure cluster; readable by the owner only"
      hpc_secure_xml ssl.server.keystore.location "${sec}/keystore.p12"
      hpc_secure_xml ssl.server.keystore.type pkcs12
      hpc_secure_xml ssl.server.keystore.password "${kp}"
      hpc_secure_xml ssl.server.keystore.keypassword "${kp}"
      hpc_secure_xml ssl.server.truststore.location "${sec}/truststore.p12"
      hpc_secure_xml ssl.server.truststore.type pkcs12
      hpc_secure_xml ssl.server.truststore.password "${tp}"
      echo '</configuration>'
    } >"${conf}/ssl-server.xml"
    {
      printf '<?xml version="1.0" encoding="UTF-8"?>\n<configuration>\n'
      hpc_secure_xml ssl.client.truststore.location "${sec}/truststore.p12"
      hpc_secure_xml ssl.client.truststore.type pkcs12
      hpc_secure_xml ssl.client.truststore.password "${tp}"
      echo '</configuration>'
    } >"${conf}/ssl-client.xml") || return 1
  chmod 600 "${conf}/ssl-server.xml" "${conf}/ssl-client.xml"
}

## hpc_secure_xml NAME VALUE: one property element.
hpc_secure_xml() {
  printf '  <property>\n    <name>%s</name>\n    <value>%s</value>\n  </property>\n' \
    "$1" "$(hpc_xml_escape "$2")"
}

## hpc_secure_site FILE NAME VALUE [NAME VALUE]...: a configuration file of these properties.
hpc_secure_site() {
  local file=$1
  shift
  {
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<configuration>\n'
    while [[ $# -ge 2 ]]; do
      hpc_secure_xml "$1" "$2"
      shift 2
    done
    echo '</configuration>'
  } >"${file}"
}

## hpc_secure_overlays DIR CONF_DIR REALM OWNER MASTER_HOST NODE_HOST_EXPR: the security
## properties, one overlay file per site file (core, hdfs, yarn, mapred) in DIR.
hpc_secure_overlays() {
  local dir=$1 conf=$2 realm=$3 owner=$4 master_host=$5 node_host=$6 sec keytab krb5
  sec=$(hpc_secure_dir "${conf}")
  keytab="${sec}/service.keytab"
  krb5="-Djava.security.krb5.conf=${sec}/krb5.conf"
  local worker=${HPC_SEC_WORKER_INSTANCE} http="HTTP/_HOST@${realm}"
  local stock_task_opts="-Djava.net.preferIPv4Stack=true -Dhadoop.metrics.log.level=WARN"
  # Every principal of the job's realm is the owner: the daemons, the HDFS superuser (the
  # NameNode's user) and the owner's own principal all map to one Unix name.
  local rules
  # shellcheck disable=SC2016  # $0 and $1 are auth_to_local's, not the shell's
  rules=$(printf '%s\n' "RULE:[1:\$1@\$0](.*@${realm})s/.*/${owner}/" \
    "RULE:[2:\$1@\$0](.*@${realm})s/.*/${owner}/" DEFAULT)
  hpc_secure_site "${dir}/core-site.xml" \
    hadoop.security.authentication kerberos \
    hadoop.security.authorization true \
    hadoop.security.auth_to_local "${rules}" \
    hadoop.kerberos.keytab.login.autorenewal.enabled true \
    hadoop.http.filter.initializers org.apache.hadoop.security.AuthenticationFilterInitializer \
    hadoop.http.authentication.type kerberos \
    hadoop.http.authentication.simple.anonymous.allowed false \
    hadoop.http.authentication.kerberos.principal "${http}" \
    hadoop.http.authentication.kerberos.keytab "${keytab}" \
    hadoop.http.authentication.signature.secret.file "${sec}/http-signature-secret"
  # A DataNode that is not root needs SASL on the transfer port and HTTPS only, else it refuses
  # to start under Kerberos (DataNode#checkSecureConfig); block tokens are required too.
  hpc_secure_site "${dir}/hdfs-site.xml" \
    dfs.block.access.token.enable true \
    dfs.namenode.kerberos.principal "nn/_HOST@${realm}" \
    dfs.namenode.keytab.file "${keytab}" \
    dfs.namenode.kerberos.principal.pattern "nn/*@${realm}" \
    dfs.secondary.namenode.kerberos.principal "nn/_HOST@${realm}" \
    dfs.secondary.namenode.keytab.file "${keytab}" \
    dfs.datanode.kerberos.principal "dn/${worker}@${realm}" \
    dfs.datanode.keytab.file "${keytab}" \
    dfs.web.authentication.kerberos.principal "${http}" \
    dfs.web.authentication.kerberos.keytab "${keytab}" \
    dfs.data.transfer.protection authentication \
    dfs.http.policy HTTPS_ONLY \
    dfs.namenode.https-address "${master_host}:${HPC_SEC_NN_HTTPS_PORT}" \
    dfs.datanode.https.address "${node_host}:${HPC_SEC_DN_HTTPS_PORT}"
  hpc_secure_site "${dir}/yarn-site.xml" \
    yarn.resourcemanager.principal "rm/_HOST@${realm}" \
    yarn.resourcemanager.keytab "${keytab}" \
    yarn.resourcemanager.principal.pattern "rm/*@${realm}" \
    yarn.nodemanager.principal "nm/${worker}@${realm}" \
    yarn.nodemanager.keytab "${keytab}" \
    yarn.resourcemanager.webapp.spnego-principal "${http}" \
    yarn.resourcemanager.webapp.spnego-keytab-file "${keytab}" \
    yarn.nodemanager.webapp.spnego-principal "${http}" \
    yarn.nodemanager.webapp.spnego-keytab-file "${keytab}" \
    yarn.acl.enable true \
    yarn.admin.acl "${owner}"
  # Task JVMs are started by the NodeManager, not by bin/: they need the realm too (the map and
  # reduce values keep Hadoop's defaults of these keys).
  hpc_secure_site "${dir}/mapred-site.xml" \
    mapreduce.jobhistory.principal "jhs/_HOST@${realm}" \
    mapreduce.jobhistory.keytab "${keytab}" \
    mapreduce.jobhistory.principal.pattern "jhs/*@${realm}" \
    mapreduce.jobhistory.webapp.spnego-principal "${http}" \
    mapreduce.jobhistory.webapp.spnego-keytab-file "${keytab}" \
    yarn.app.mapreduce.am.admin-command-opts "${krb5}" \
    mapreduce.admin.map.child.java.opts "${stock_task_opts} ${krb5}" \
    mapreduce.admin.reduce.child.java.opts "${stock_task_opts} ${krb5}"
}

## hpc_secure_configure CONF_DIR OVERLAY_DIR REALM OWNER MASTER_HOST NODE_HOST_EXPR SUFFIX
## HOST...: the private directory, key stores, ssl-*.xml and overlays of a secure cluster;
## prints the hadoop-env.sh lines (HADOOP_HPC_SECURE*, the JVMs' krb5.conf, the owner's keytab
## login for every command run with this configuration).
hpc_secure_configure() {
  local conf=$1 overlays=$2 realm=$3 owner=$4 master_host=$5 node_host=$6 suffix=$7 sec
  shift 7
  sec=$(hpc_secure_dir "${conf}")
  chmod 700 "${conf}" || return 1
  hpc_private_dir "${sec}" || return 1
  local names=()
  mapfile -t names < <(hpc_secure_names "${master_host}" "${suffix}" "$@")
  hpc_secure_keystore "${sec}" "${names[@]}" || return 1
  hpc_secure_ssl_files "${conf}" || return 1
  hpc_secure_overlays "${overlays}" "${conf}" "${realm}" "${owner}" "${master_host}" "${node_host}"
  printf 'export %s=%q\n' HADOOP_HPC_SECURE true HADOOP_HPC_KRB_REALM "${realm}" \
    HADOOP_HPC_KRB_NAMES "${names[*]}" KRB5PRINCIPAL "${owner}@${realm}" \
    KRB5KEYTAB "${sec}/user.keytab"
  echo "# Every JVM of this cluster (daemons and commands) uses the job's realm."
  # shellcheck disable=SC2016  # expanded when hadoop-env.sh is sourced
  printf 'case " ${HADOOP_OPTS:-} " in *" -Djava.security.krb5.conf="*) ;; *) export HADOOP_OPTS="${HADOOP_OPTS:-} -Djava.security.krb5.conf=%s/krb5.conf" ;; esac\n' "${sec}"
}

## hpc_secure_open_banner: the one line a cluster without --secure prints.
hpc_secure_open_banner() {
  echo "NOTE: this cluster is open to every user of its nodes (they can use HDFS and run jobs as you); 'hpc-cluster.sh configure --secure' makes it require the job's Kerberos keys (docs/user-guide.md, \"Security on a shared cluster\")"
}

## hpc_kdc_start: starts this host's JobKdc for the cluster of HADOOP_CONF_DIR (principals for
## every service and the owner, keytabs in CONF/security) and waits for its ready file; a
## daemon like the others (pid file, marker, hpc_daemon_stop stops it).
hpc_kdc_start() {
  local sec pid pidfile out i
  sec=$(hpc_secure_dir "${HADOOP_CONF_DIR}")
  hpc_private_dir "${sec}" || return 1
  local realm=${HADOOP_HPC_KRB_REALM:?} master=${HADOOP_HPC_CLUSTER_MASTER_HOST:?} n services=""
  master=${master,,}
  for n in ${HADOOP_HPC_KRB_NAMES:-}; do
    services+=",HTTP/${n}"
  done
  services="nn/${master},rm/${master},jhs/${master},dn/${HPC_SEC_WORKER_INSTANCE},nm/${HPC_SEC_WORKER_INSTANCE}${services}"
  pidfile=$(hpc_pid_file kdc)
  out=$(hpc_out_file kdc)
  rm -f "${sec}/kdc.addr"
  [[ -f "${out}" ]] && mv -f "${out}" "${out}.prev"
  hpc_find_java
  nohup "${JAVA}" "-Dhadoop.hpc.daemon=kdc@${HADOOP_PID_DIR}" -Djava.net.preferIPv4Stack=true \
    -cp "${HADOOP_HOME}/share/hadoop-hpc/kdc/*:${HADOOP_HOME}/share/hadoop-hpc/*:${HADOOP_HOME}/share/hadoop/lib/*" \
    org.hadoophpc.tools.kdc.JobKdc --realm "${realm}" --bind "${master}" --dir "${sec}" \
    --keytab "service.keytab=${services}" \
    --keytab "user.keytab=${KRB5PRINCIPAL%@*}" >"${out}" 2>&1 </dev/null &
  pid=$!
  echo "${pid}" >"${pidfile}"
  for ((i = 0; i < HPC_SEC_KDC_START_TIMEOUT * 5; i++)); do
    [[ -s "${sec}/kdc.addr" ]] && return 0
    if ! kill -0 "${pid}" 2>/dev/null; then
      rm -f "${pidfile}"
      hpc_error "kdc exited during start-up; last lines of ${out}:"
      tail -n 15 "${out}" >&2
      return 1
    fi
    sleep 0.2
  done
  hpc_error "kdc not ready after ${HPC_SEC_KDC_START_TIMEOUT}s (log: ${out}); stopping it"
  hpc_daemon_stop kdc >/dev/null
  return 1
}

## hpc_secure_master_view: HPC_LIVE_DN, HPC_LIVE_NM and HPC_SAFEMODE of a secure cluster, asked
## over RPC with the owner's keytab (its web ports need SPNEGO, which bash cannot speak).
# shellcheck disable=SC2034  # read by the caller
hpc_secure_master_view() {
  local report
  HPC_LIVE_DN=0
  HPC_LIVE_NM=0
  HPC_SAFEMODE=off
  if [[ "${HADOOP_HPC_CLUSTER_HDFS}" == "true" ]]; then
    report=$(HADOOP_ROOT_LOGGER=WARN,console timeout -k 5 60 \
      "${HADOOP_HOME}/bin/hdfs" --config "${HADOOP_CONF_DIR}" dfsadmin -report -live 2>/dev/null)
    HPC_LIVE_DN=$(sed -n 's/^Live datanodes (\([0-9]*\)):.*/\1/p' <<<"${report}" | head -n 1)
    grep -q '^Safe mode is ON' <<<"${report}" && HPC_SAFEMODE=on
    [[ -n "${report}" ]] || HPC_SAFEMODE=on
  fi
  HPC_LIVE_NM=$(HADOOP_ROOT_LOGGER=WARN,console timeout -k 5 60 \
    "${HADOOP_HOME}/bin/yarn" --config "${HADOOP_CONF_DIR}" node -list 2>/dev/null |
    sed -n 's/.*Total Nodes:\([0-9]*\).*/\1/p' | head -n 1)
  HPC_LIVE_DN=${HPC_LIVE_DN:-0}
  HPC_LIVE_NM=${HPC_LIVE_NM:-0}
}

## hpc_secure_client_env CONF_DIR: for a secure configuration, the owner's keytab login as two
## lines KRB5PRINCIPAL=... and KRB5KEYTAB=... (for a command that does not read hadoop-env.sh);
## nothing for an open one.
hpc_secure_client_env() {
  # shellcheck source=/dev/null  # set +u: it names per-node variables this shell need not have
  (set +u
    . "$1/hadoop-env.sh" >/dev/null 2>&1
    [[ "${HADOOP_HPC_SECURE:-false}" == "true" ]] || exit 0
    printf 'KRB5PRINCIPAL=%s\nKRB5KEYTAB=%s\n' "${KRB5PRINCIPAL}" "${KRB5KEYTAB}")
}
