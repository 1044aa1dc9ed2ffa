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
import queue
import resource
import threading
from collections.abc import Callable

log = logging.getLogger("kafkamock.server")
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3


def _libc() -> ctypes.CDLL | None:
    """The C library, or None where ctypes cannot find or load it."""
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


def keep_freed_memory(trim_threshold: int = 512 << 20, mmap_threshold: int = 32 << 20) -> bool:
    """Ask glibc to keep freed memory (up to ``trim_threshold``) and serve big blocks from the heap; False where
    the C library is not glibc."""
    libc = _libc()
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    ok = bool(mallopt(M_MMAP_THRESHOLD, mmap_threshold)) and bool(mallopt(M_TRIM_THRESHOLD, trim_threshold))
    log.debug("malloc thresholds %s", "raised" if ok else "left alone")
    return ok


class WarmHeap:
    """C heap memory faulted in ahead of the large request frames that will take it, on a helper thread.

    In memory, a produced batch is kept as (a view of) its request frame, so every megabyte produced is memory the
    process has never touched; faulting it in cost the broker's thread 0.5-0.6 ms a megabyte on the benchmark
    machine, more than the rest of a 1 MB produce. Here the broker's thread reserves a block of the heap
    (``malloc``: no page is touched yet) whenever less than ``low`` bytes are warm, and the helper thread, without
    the GIL, writes the block (the kernel faults its pages in) and frees it: glibc keeps freed memory
    (``keep_freed_memory``), so the next frames' ``malloc`` finds pages already there. Measured with 1 MB frames:
    0.57 ms a megabyte on the broker's thread before, 0.16 ms after. The count of warm bytes is an estimate (malloc
    decides where a frame goes); less than ``low`` + ``block`` bytes are held warm and unused, and none before
    ``start_after`` bytes of such frames came: a one-off large request (a ListOffsets of 10,000 partitions) is freed
    and its memory reused, and must not cost the process 32 MB. Nor is any warmed while the heap already holds
    ``low`` free bytes (``free_bytes``): memory freed by retention or by earlier requests is faulted in already, and
    the next frames reuse it."""

    def __init__(self, malloc: Callable[[int], int | None], free: Callable[[int], None],
                 fill: Callable[[int, int], object], *, free_bytes: Callable[[], int] = lambda: 0,
                 block: int = 16 << 20, low: int = 16 << 20, start_after: int = 32 << 20):
        self.malloc, self.free, self.fill, self.block, self.low = malloc, free, fill, block, low
        self.free_bytes = free_bytes
        self.start_after = start_after   # bytes of frames still to come before any memory is warmed
        self.warm = 0            # bytes faulted in (or being faulted in) and not yet taken by a frame
        self.blocks: queue.SimpleQueue[int] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._fault_in, name="kafkamock-warm-heap", daemon=True)

    def start(self) -> WarmHeap:
        self.thread.start()
        return self

    def taking(self, size: int) -> None:
        """A frame of ``size`` bytes is about to be allocated: reserve the next block when too little is warm."""
        if self.start_after > 0:
            self.start_after -= size
            return
        self.warm = max(self.warm - size, 0)      # a frame larger than what was warm faulted the rest in itself
        if self.warm < self.low and self.free_bytes() >= self.low:
            return
        while self.warm < self.low:
            address = self.malloc(self.block)
            if not address:
                return
            self.blocks.put(address)
            self.warm += self.block

    def _fault_in(self) -> None:
        while True:
            address = self.blocks.get()
            self.fill(address, self.block)
            self.free(address)


def warm_heap() -> WarmHeap | None:
    """A started ``WarmHeap`` on glibc (call ``keep_freed_memory`` first: without it freed blocks go back to the OS);
    None elsewhere."""
    libc = _libc()
    malloc, free = getattr(libc, "malloc", None), getattr(libc, "free", None)
    if malloc is None or free is None:
        return None
    malloc.restype, malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    free.restype, free.argtypes = None, [ctypes.c_void_p]
    mallinfo2 = getattr(libc, "mallinfo2", None)          # glibc 2.33+ (before it: always warm)
    if mallinfo2 is not None:
        mallinfo2.restype, mallinfo2.argtypes = _MallInfo2, []

    def free_bytes() -> int:
        return int(mallinfo2().fordblks) if mallinfo2 is not None else 0

    return WarmHeap(malloc, free, lambda address, size: ctypes.memset(address, 0, size),
                    free_bytes=free_bytes).start()


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2``: ``fordblks`` is the heap's free bytes."""

    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]


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
