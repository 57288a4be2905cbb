#!/usr/bin/env python3
"""Hand one hook event to a running tma collector, so the hook needs no Node start-up.

Usage: tma-hook-send.py <agent> <event>   (payload on stdin; pane from $TMUX_PANE)

Exit status: 0 only when the collector answered ACK (it stamped the event); 1 on NAK; 2 when no
collector could be asked (no pane, no socket, no answer in time). Any non-zero status means the
caller must stamp by itself. Prints nothing.

The wake socket is found exactly as collector/fleet/wake.ts names it; keep the two in step.
"""

import os
import sys
import time

# The C module spares the `socket` wrapper's imports (enum, selectors): about 10 ms a hook.
try:
    import _socket as socket
except ImportError:
    import socket

ACK = b"\x06"
MAGIC = b"TMA1 "
WAIT_S = 0.5
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK = 0xFFFFFFFFFFFFFFFF


# JSON string escapes, applied in C by str.translate: importing `json` costs more than a whole send.
ESCAPES = {ord('"'): '\\"', ord("\\"): "\\\\"}
ESCAPES.update((i, "\\u%04x" % i) for i in range(0x20))


def json_string(text):
    return '"' + text.translate(ESCAPES) + '"'


def fnv1a64(data):
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & MASK
    return h


def tmux_socket_dir(env, uid):
    return os.path.join(env.get("TMUX_TMPDIR") or "/tmp", "tmux-%d" % uid)


def server_socket(env, uid):
    # Same precedence as the fallback `tma event` the wrapper runs, so both reach one server.
    name = env.get("TMA_HOOK_SOCKET")
    if name:
        return os.path.join(tmux_socket_dir(env, uid), name)
    path = env.get("TMA_SOCKET_PATH")
    if path:
        return path
    inside = (env.get("TMUX") or "").split(",")[0]
    return inside or os.path.join(tmux_socket_dir(env, uid), "default")


def absolute(path):
    # Like Node's path.resolve: normalised, and a leading '//' is not kept apart.
    path = os.path.normpath(os.path.join(os.getcwd(), path))
    return "/" + path.lstrip("/")


def canonical_socket_path(path):
    # tmux resolves the directory of its socket, not the socket itself; so does wake.ts.
    abs_path = absolute(path)
    head, tail = os.path.split(abs_path)
    try:
        real = os.path.realpath(head, strict=True)
    except (OSError, TypeError):
        return abs_path
    return os.path.join(real, tail)


def wake_socket_path(canonical, env, uid):
    wake_dir = os.path.join(env.get("XDG_RUNTIME_DIR") or "/tmp", "tma-%d" % uid)
    digest = "%016x" % fnv1a64(canonical.encode("utf-8", "surrogateescape"))
    return os.path.join(wake_dir, "wake-%s.sock" % digest)


def deliver(path, frame):
    deadline = time.monotonic() + WAIT_S
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(WAIT_S)
        s.connect(path)
        s.sendall(frame)
        left = deadline - time.monotonic()
        if left <= 0:
            return 2
        s.settimeout(left)
        byte = s.recv(1)
    except OSError:
        return 2
    finally:
        s.close()
    if byte == ACK:
        return 0
    return 1 if byte else 2


def main(argv, env):
    if len(argv) < 3 or not argv[1] or not argv[2]:
        return 2
    pane = env.get("TMUX_PANE")
    if not pane:
        return 2
    uid = os.getuid()
    path = wake_socket_path(canonical_socket_path(server_socket(env, uid)), env, uid)
    try:
        payload = sys.stdin.buffer.read().decode("utf-8", "replace")
    except (OSError, ValueError, AttributeError):
        payload = ""
    body = '{"agent":%s,"kind":%s,"pane":%s,"payload":%s}' % tuple(json_string(v) for v in (argv[1], argv[2], pane, payload))
    return deliver(path, MAGIC + body.encode("utf-8", "surrogateescape") + b"\n")


if __name__ == "__main__":
    if len(sys.argv) in (2, 3) and sys.argv[1] == "--wake-path":
        # For tests: the wake socket of the tmux socket given, or of the one the environment names.
        u = os.getuid()
        server = sys.argv[2] if len(sys.argv) == 3 else server_socket(os.environ, u)
        sys.stdout.write(wake_socket_path(canonical_socket_path(server), os.environ, u) + "\n")
        sys.exit(0)
    sys.exit(main(sys.argv, os.environ))
