"""The I/O shell (trio): sockets, framing, waiting and timers around the sans-IO broker core."""

from kafkamock.server.server import Server, run_broker

__all__ = ["Server", "run_broker"]
