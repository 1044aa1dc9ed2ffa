"""Process-level memory tuning of ``kafkamock serve``: the C heap warmed ahead of large request frames."""

from __future__ import annotations

import threading

from kafkamock.server.memory import WarmHeap, keep_freed_memory, warm_heap


class FakeHeap:
    """malloc, fill and free as calls recorded, the helper thread's side (fill, free) announced by an event."""

    def __init__(self) -> None:
        self.next, self.calls, self.freed = 0x1000, [], threading.Semaphore(0)

    def malloc(self, size: int) -> int:
        self.next += size
        self.calls.append(("malloc", self.next, size))
        return self.next

    def fill(self, address: int, size: int) -> None:
        self.calls.append(("fill", address, size))

    def free(self, address: int) -> None:
        self.calls.append(("free", address))
        self.freed.release()


def test_the_heap_is_warmed_a_block_ahead_of_the_frames_that_take_it():
    fake = FakeHeap()
    heap = WarmHeap(fake.malloc, fake.free, fake.fill, block=4 << 20, low=8 << 20, start_after=3 << 20).start()
    heap.taking(2 << 20)
    heap.taking(1 << 20)                     # 3 MB of frames so far: none warmed (a one-off large request)
    assert fake.calls == [] and heap.warm == 0
    heap.taking(1 << 20)                     # frames keep coming, nothing warm yet: blocks until 8 MB are
    for _ in range(2):
        assert fake.freed.acquire(timeout=10)
    blocks = [address for kind, address, *_ in fake.calls if kind == "malloc"]
    assert len(blocks) == 2 and heap.warm == 8 << 20
    for address in blocks:                   # each block written (its pages faulted in), then given back to the heap
        assert fake.calls.index(("fill", address, 4 << 20)) < fake.calls.index(("free", address))
    heap.taking(3 << 20)                     # 5 MB still warm: one more block
    assert fake.freed.acquire(timeout=10) and heap.warm == 9 << 20 and len(fake.calls) == 9
    heap.taking(1 << 20)                     # 8 MB: nothing more
    assert heap.warm == 8 << 20 and len(fake.calls) == 9
    heap.taking(100 << 20)                   # a frame larger than all that was warm: warmed again up to 8 MB only
    for _ in range(2):
        assert fake.freed.acquire(timeout=10)
    assert heap.warm == 8 << 20 and len(fake.calls) == 15


def test_kafkamock_serve_warms_the_c_heap_on_glibc():
    """The real heap (this is Linux with glibc, as CI is): a block is allocated, written and freed off the broker's
    thread."""
    assert keep_freed_memory()
    heap = warm_heap()
    assert heap is not None and heap.thread.is_alive()
    free_now = heap.free_bytes()
    assert free_now > 0                       # mallinfo2 reads the heap's free bytes
    heap.block = heap.low = free_now + (1 << 20)    # more than is free: one block warmed
    heap.start_after = 0
    freed, free = threading.Semaphore(0), heap.free
    heap.free = lambda address: (free(address), freed.release())[0]
    heap.taking(1)
    assert heap.warm == heap.block
    assert freed.acquire(timeout=10)


def test_no_memory_is_warmed_while_the_heap_has_enough_free():
    """Memory freed by retention or earlier requests is faulted in already: the frames reuse it first."""
    fake, free = FakeHeap(), [64 << 20]
    heap = WarmHeap(fake.malloc, fake.free, fake.fill, free_bytes=lambda: free[0], block=4 << 20, low=8 << 20,
                    start_after=0).start()
    heap.taking(1 << 20)
    assert fake.calls == [] and heap.warm == 0
    free[0] = 7 << 20                        # less than 8 MB free: warmed up to 8 MB
    heap.taking(1 << 20)
    for _ in range(2):
        assert fake.freed.acquire(timeout=10)
    assert heap.warm == 8 << 20 and len(fake.calls) == 6
