"""Process-level tuning for the broker process (never done on library import): memory, descriptors.

glibc returns freed blocks above its trim/mmap thresholds to the OS at once, so every megabyte-sized request
or response buffer is faulted in again on the next request; measured here, that doubled the cost of handling
a 1 MB batch. Raising the thresholds keeps that memory in the process, as a JVM keeps its heap.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import resource

log = logging.getLogger("kafkamock.server")
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3


def keep_freed_memory(trim_threshold: int = 512 << 20, mmap_threshold: int = 32 << 20) -> bool:
    """Ask glibc to keep freed memory (up to ``trim_threshold``) and serve big blocks from the heap; False where
    the C library is not glibc."""
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    ok = bool(mallopt(M_MMAP_THRESHOLD, mmap_threshold)) and bool(mallopt(M_TRIM_THRESHOLD, trim_threshold))
    log.debug("malloc thresholds %s", "raised" if ok else "left alone")
    return ok


def raise_open_files_limit(wanted: int = 1 << 16) -> int:
    """Raise the soft limit on open descriptors towards the hard one (Kafka asks for a high ulimit too): sockets
    and segment files share it, and at the soft limit accept() fails. Returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            log.debug("open files limit left at %d: %s", soft, exc)
    return soft


def settle_garbage_collector(young_threshold: int = 50_000) -> None:
    """The broker's start-up objects (schemas, compiled codecs, configs) leave the collector's view (``gc.freeze``),
    and a young-generation collection runs every ``young_threshold`` allocations instead of every 700: making
    10,000 partitions spent a third of its time in collections that walked every partition made so far, and each
    full collection walked the start-up objects again. Cycles are still collected, less often."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(young_threshold, middle, old)
