# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
"""A co-tenant's relay for the multi-host lane: listens on a port before our service does and
forwards every connection to another port, as a user who squats a port of the hpc shuffle's range
and relays to the real service would. Prints one line per connection and its bytes each way, so
the lane can show the attack was tried. Every socket wait is bounded (TIMEOUT seconds).

Usage: python3 - LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT < tcp-relay.py
"""
import socket
import sys
import threading

TIMEOUT = 120


def pump(src, dst, counts, key):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
            counts[key] += len(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(number, client, peer, target):
    counts = {"in": 0, "out": 0}
    try:
        upstream = socket.create_connection(target, timeout=TIMEOUT)
    except OSError as e:
        print(f"connection {number} from {peer}: target {target[1]} not reachable ({e})", flush=True)
        client.close()
        return
    client.settimeout(TIMEOUT)
    upstream.settimeout(TIMEOUT)
    back = threading.Thread(target=pump, args=(upstream, client, counts, "out"), daemon=True)
    back.start()
    pump(client, upstream, counts, "in")
    back.join(TIMEOUT)
    client.close()
    upstream.close()
    print(f"connection {number} from {peer}: relayed {counts['in']} bytes in, "
          f"{counts['out']} bytes out", flush=True)


def main():
    listen_host, listen_port, target_host, target_port = sys.argv[1:5]
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((listen_host, int(listen_port)))
    server.listen(64)
    print(f"relaying {listen_host}:{listen_port} -> {target_host}:{target_port}", flush=True)
    number = 0
    while True:
        client, peer = server.accept()
        number += 1
        threading.Thread(target=serve, args=(number, client, peer[0],
                                             (target_host, int(target_port))), daemon=True).start()


if __name__ == "__main__":
    main()
