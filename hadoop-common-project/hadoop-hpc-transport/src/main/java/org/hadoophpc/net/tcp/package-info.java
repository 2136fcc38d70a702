/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */

/**
 * The {@code tcp} implementation of {@link org.hadoophpc.net.Transport}: NIO event loops
 * ({@link org.hadoophpc.net.tcp.TcpTransport}), a small framing protocol
 * ({@code TcpFrame}) and one-sided reads and writes emulated by the peer transport.
 */
package org.hadoophpc.net.tcp;
