"""The semantic fuzzer (``semantic.py``) against ``kafkamock serve`` in its own process, on a data directory.

In CI (``make test``) a seeded pass of ``SEMANTIC_CASES`` cases; ``FUZZ_SECONDS=3600 make fuzz`` draws fresh cases
for that long. Either way the broker then restarts on the same data and a real client's round must pass again; the
figures (cases per API, outcomes, the longest extra wait of the probe, the broker's peak memory) are printed at the end.
"""

from __future__ import annotations

import os
import random
import time

from fuzz.semantic import ROUND_EVERY, Fuzzer, build_world, peak_rss_mb
from support.serve_process import ServeProcess

SEMANTIC_CASES = int(os.environ.get("SEMANTIC_CASES", "1200"))
FUZZ_SECONDS = float(os.environ.get("FUZZ_SECONDS", "0"))
SEED = int(os.environ.get("SEMANTIC_SEED", "20261127"))


def test_semantic_fuzz(tmp_path):
    seed = SEED if not FUZZ_SECONDS else random.SystemRandom().randrange(2**32)
    print(f"semantic fuzz: seed {seed}", flush=True)
    started = time.monotonic()
    with ServeProcess(["--data-dir", str(tmp_path)]) as broker:
        world = build_world(broker.bootstrap)
        fuzzer = Fuzzer(broker, world, random.Random(seed))
        try:
            fuzzer.real_client_round()
            end = started + FUZZ_SECONDS
            while (fuzzer.tally.cases < SEMANTIC_CASES) if not FUZZ_SECONDS else (time.monotonic() < end):
                api, version, body = fuzzer.pick()
                fuzzer.run(api, version, body)
                if fuzzer.tally.cases % ROUND_EVERY == 0:
                    fuzzer.real_client_round()
            peak = peak_rss_mb(broker.proc.pid)
            broker.stop()
            broker.start()
            fuzzer.reconnect_probe()
            fuzzer.real_client_round()
        finally:
            fuzzer.close()
    t = fuzzer.tally
    per_api = ", ".join(f"{api} {n}" for api, n in sorted(t.by_api.items()))
    print(f"semantic fuzz: {t.cases} cases in {time.monotonic() - started:.0f}s ({dict(t.outcomes)}), "
          f"{t.rounds} real-client rounds, longest extra probe wait {t.slowest_probe_s * 1000:.0f} ms, "
          f"broker peak memory {peak:.0f} MB; per API: {per_api}", flush=True)
    assert t.outcomes["answered"] > t.cases // 2
