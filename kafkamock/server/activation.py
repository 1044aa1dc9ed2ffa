"""Listening sockets handed over by a supervisor (systemd's socket activation protocol, ``sd_listen_fds``).

A supervisor that owns a broker's ports (systemd with a ``.socket`` unit, ``systemd-socket-activate``, or a test
driver) opens the listening sockets itself and passes them to ``kafkamock serve`` as file descriptors 3, 4, ...
with ``LISTEN_FDS`` (how many) and ``LISTEN_PID`` (the pid they are meant for). kafkamock serves each listener of
each node on the inherited socket bound to that listener's address and port, and opens the others itself. Because
the supervisor keeps its copy, the ports stay open while kafkamock restarts: a client connecting meanwhile waits in
the accept queue instead of being refused, and the restarted broker answers it.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import MutableMapping

log = logging.getLogger("kafkamock.server")
FIRST_FD = 3        # SD_LISTEN_FDS_START


def inherited_sockets(environ: MutableMapping[str, str] = os.environ) -> dict[tuple[str, int], socket.socket]:
    """The listening TCP sockets passed to this process, by their bound (host, port); the variables are removed
    so that child processes do not take them for theirs (``sd_listen_fds(1)``)."""
    pid, count = environ.pop("LISTEN_PID", None), environ.pop("LISTEN_FDS", None)
    environ.pop("LISTEN_FDNAMES", None)
    if pid is None or count is None:
        return {}
    if not pid.isdigit() or int(pid) != os.getpid():
        return {}
    if not count.isdigit():
        log.warning("ignoring LISTEN_FDS=%r: not a count of file descriptors", count)
        return {}
    found: dict[tuple[str, int], socket.socket] = {}
    for fd in range(FIRST_FD, FIRST_FD + int(count)):
        try:
            sock = socket.socket(fileno=fd)
        except OSError as exc:
            log.warning("ignoring inherited file descriptor %d: %s", fd, exc)
            continue
        if sock.type != socket.SOCK_STREAM or sock.family not in (socket.AF_INET, socket.AF_INET6) \
                or not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
            log.warning("ignoring inherited file descriptor %d: not a listening TCP socket", fd)
            sock.detach()
            continue
        os.set_inheritable(fd, False)
        host, port = sock.getsockname()[:2]
        found[(host, port)] = sock
        log.info("serving the inherited listening socket %s:%d (file descriptor %d)", host, port, fd)
    return found
