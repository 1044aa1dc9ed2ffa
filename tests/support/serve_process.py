"""``kafkamock serve`` as a real process for tests that kill it, restart it, or drive it from outside.

    with ServeProcess(["--data-dir", str(tmp_path), "--brokers", "3", "--control-port", "0"]) as broker:
        broker.bootstrap, broker.control_url
        broker.kill()                   # SIGKILL: no clean shutdown
        broker.start()                  # the same ports and arguments again

The ready line (``kafkamock broker ready: bootstrap.servers=... [control=...]``) is waited for with a deadline; the
broker's log goes to a file whose text ``log()`` returns (for recovery lines and failure reports).
"""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

READY = re.compile(r"kafkamock broker ready: bootstrap\.servers=(\S+).*?(?: control=(\S+))?$")
REPO = Path(__file__).resolve().parents[2]


def free_port(count: int = 1) -> int:
    """A port p with p..p+count-1 free on 127.0.0.1 right now (the broker binds them a moment later)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + count > 65535:
            continue
        held = []
        try:
            for k in range(count):
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", base + k))
                held.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise RuntimeError("no run of free ports found")


def wait_accepting(port: int, timeout: float, gone: Callable[[], bool] = lambda: False) -> bool:
    """Whether 127.0.0.1:``port`` accepts a connection within ``timeout`` seconds (tried every 50 ms); False at once
    when ``gone()`` says the process that should listen there has exited."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            if gone() or time.monotonic() > deadline:
                return False
            time.sleep(0.05)


class ServeProcess:
    def __init__(self, args: list[str], *, brokers: int = 1, port: int | None = None, control: bool = False,
                 ready_timeout: float = 60.0):
        self.brokers = brokers
        self.port = port or free_port(brokers)
        self.control_port = free_port() if control else None
        self.args = args
        self.ready_timeout = ready_timeout
        self.log_file = tempfile.NamedTemporaryFile("w+", prefix="kafkamock-serve-", suffix=".log", delete=False)
        self.proc: subprocess.Popen | None = None
        self.bootstrap = ""
        self.control_url: str | None = None
        self.ready_line = ""
        self.starts = 0
        self.held: list[socket.socket] = []

    def hold(self, ports: list[int], host: str = "127.0.0.1") -> ServeProcess:
        """Own these listening ports, as a supervisor with socket activation does (kafkamock/server/activation.py):
        each start hands them over, so while the broker is down a client waits in the accept queue instead of
        being refused."""
        for port in ports:
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.listen(128)
            self.held.append(sock)
        return self

    def _popen_handover(self) -> dict:
        """Popen arguments that pass the held sockets as file descriptors 3, 4, ... with LISTEN_FDS and, set by the
        shell that then execs the broker (same pid), LISTEN_PID."""
        if not self.held:
            return {}
        sources = [s.fileno() for s in self.held]
        targets = list(range(3, 3 + len(sources)))

        def place() -> None:       # in the child, before exec: move the sockets to 3, 4, ... without clobbering
            import fcntl

            parked = [fcntl.fcntl(fd, fcntl.F_DUPFD, 1000) for fd in sources]
            for fd, target in zip(parked, targets, strict=True):
                os.dup2(fd, target)
        return {"pass_fds": targets, "preexec_fn": place}

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "kafkamock.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port),
               "--brokers", str(self.brokers), *self.args]
        if self.control_port is not None:
            cmd += ["--control-port", str(self.control_port)]
        return cmd

    def start(self) -> ServeProcess:
        self.log_file.write(f"\n--- start {self.starts + 1}: {' '.join(self.command())}\n")
        self.log_file.flush()
        command, env = self.command(), {**os.environ, "PYTHONUNBUFFERED": "1"}
        if self.held:
            command = ["/bin/sh", "-c", 'LISTEN_PID=$$ exec "$0" "$@"', *command]
            env["LISTEN_FDS"] = str(len(self.held))
        self.proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=self.log_file,
                                     text=True, env=env, **self._popen_handover())
        self.starts += 1
        lines: queue.Queue[str | None] = queue.Queue()
        proc = self.proc

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)
        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + self.ready_timeout
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.kill()
                raise RuntimeError(f"kafkamock printed no ready line in {self.ready_timeout} s:\n{self.log()}") from None
            if line is None:
                raise RuntimeError(f"kafkamock exited before it was ready (exit {proc.wait()}):\n{self.log()}")
            if m := READY.search(line.strip()):
                self.bootstrap, self.control_url = m.group(1), m.group(2)
                self.ready_line = line.strip()
                return self

    def kill(self, sig: int = signal.SIGKILL) -> int | None:
        """Send ``sig`` (SIGKILL: no flush, no clean-shutdown marker) and wait for the process to end."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        os.kill(self.proc.pid, sig)
        return self.proc.wait(timeout=30)

    def stop(self) -> int | None:
        """A clean stop (SIGTERM)."""
        return self.kill(signal.SIGTERM)

    def log(self) -> str:
        self.log_file.flush()
        return Path(self.log_file.name).read_text(encoding="utf-8", errors="replace")

    def __enter__(self) -> ServeProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.kill()
        for sock in self.held:
            sock.close()
        self.log_file.close()
        os.unlink(self.log_file.name)
