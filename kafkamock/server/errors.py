"""Errors at the server's edge, and finding the one that matters inside trio's exception groups.

trio reports a task's failure wrapped in an ``ExceptionGroup`` per nursery it crosses; a user who started a broker
on a busy port should read one line naming the address and the cause, not the groups.

An ``InternalError`` is a bug the broker survived: a handler or a timer task raised something that is not Kafka's
answer to bad input. The server logs it and keeps serving (the request's connection closes, the timer is dropped);
tests want it loud (``kafkamock.testing.BrokerHandle`` fails the test)."""

from __future__ import annotations

import traceback
from dataclasses import dataclass


@dataclass(frozen=True, eq=False)
class InternalError:
    """An exception the broker caught to keep serving, and ``where``: the request and connection, or the timer."""

    where: str
    error: BaseException

    def summary(self) -> str:
        """Where, then the traceback, as Python prints it."""
        return f"in {self.where}:\n" + "".join(traceback.format_exception(self.error)).rstrip()


class ListenError(OSError):
    """A listener could not be opened: the address, what it serves, and the operating system's reason (an
    ``OSError`` with the system's errno, so ``except OSError`` still catches it)."""

    def __init__(self, message: str, cause: OSError | None = None):
        super().__init__(cause.errno if cause is not None else None, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def leaf(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> BaseException | None:
    """``exc``, or depth first the first exception the groups in it wrap, if it is one of ``kinds``."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = leaf(inner, kinds)
            if found is not None:
                return found
        return None
    return exc if isinstance(exc, kinds) else None


def reason(exc: OSError) -> str:
    """The operating system's words for ``exc`` (``Address already in use``), without the errno prefix."""
    return exc.strerror or str(exc)
