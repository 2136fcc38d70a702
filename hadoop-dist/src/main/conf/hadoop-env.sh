# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Sourced by bin/ and sbin/ on every host before a command runs. Remote workers are reached over
# ssh with a bare environment, so set JAVA_HOME here for a multi-host cluster.

# Java 17 or newer.
# export JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64

# Where logs and pid files go (default: logs/ and pids/ under the unpacked tarball).
# export HADOOP_LOG_DIR=
# export HADOOP_PID_DIR=

# Maximum heap of every daemon, e.g. 1g (default: the JVM's own).
# export HADOOP_HEAPSIZE_MAX=

# Extra JVM options for every command, and per daemon: HDFS_NAMENODE_OPTS, HDFS_DATANODE_OPTS,
# YARN_RESOURCEMANAGER_OPTS, YARN_NODEMANAGER_OPTS, MAPRED_HISTORYSERVER_OPTS, ...
# export HADOOP_OPTS=
# Extra JVM options for commands only (hdfs dfs, hadoop jar, yarn application, ...), not daemons.
# export HADOOP_CLIENT_OPTS=

# Seconds sbin/start-*.sh wait for the cluster to be ready, and stop waits before KILL.
# export HADOOP_HPC_START_TIMEOUT=180
# export HADOOP_STOP_TIMEOUT=20

# ssh options for reaching workers.
# export HADOOP_SSH_OPTS="-o BatchMode=yes -o StrictHostKeyChecking=no -o ConnectTimeout=10"
