"""The I/O shell (trio): listeners, framing, the timer task and the control API's HTTP face around the sans-IO
broker core."""

from kafkamock.server.clock import TrioClock
from kafkamock.server.server import Server, run_broker

__all__ = ["Server", "TrioClock", "run_broker"]
