"""The Apache Kafka releases a broker can present itself as (``kafkamock serve --kafka-version X``,
``kafkamock.kafka.version``), as franz-go's ``kfake --as-version`` does, so a client can be tested against the
broker version its production cluster runs.

``kafka_releases.json`` holds, per release line, what a broker of its newest patch release advertises in
ApiVersions: each API's version range (the release's own ApiKeys, on a ZooKeeper broker for 2.8 and a KRaft broker
from 3.9) and its feature levels (supported ranges, and the levels a freshly formatted cluster finalizes). It is
read from the releases' own jars by tools/import_kafka_releases.py and checked by a test.

An emulated release advertises and serves its own ranges, cut to what kafkamock serves: an API kafkamock does not
implement is not listed (as at 4.3), and an old version removed in Kafka 4.0 (KIP-896) that kafkamock's codec
cannot read is left out of the range (``unserved``); Produce v0-2 and Fetch v0-3, which the codec reads, are
served for the releases before 4.0. Behaviour follows from what is advertised: an API or version the release did
not have is refused as that release refuses it, and the finalized features (``transaction.version``,
``group.version``, ``share.version``) are the release's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LATEST = "4.3"


@dataclass(frozen=True)
class FeatureLevel:
    supported: tuple[int, int]
    finalized: int


@dataclass(frozen=True)
class Release:
    line: str                                   # "3.9"
    kafka_version: str                          # its newest patch release, whose jars the table was read from
    listener: str                               # BROKER (KRaft) or ZK_BROKER
    apis: dict[int, tuple[int, int]]            # api key -> (oldest, latest stable) version
    features: dict[str, FeatureLevel]

    @property
    def before_4_0(self) -> bool:
        """A release that still served the message formats and request versions KIP-896 removed in 4.0."""
        return int(self.line.split(".")[0]) < 4

    def cut(self, served: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
        """The release's ranges, limited to the APIs and versions kafkamock serves (``served``)."""
        out = {}
        for key, (low, high) in self.apis.items():
            if key in served:
                low, high = max(low, served[key][0]), min(high, served[key][1])
                if low <= high:
                    out[key] = (low, high)
        return out

    def unserved(self, served: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
        """What the release advertises that kafkamock leaves out, as (low, high) per API key (high < low: none)."""
        cut = self.cut(served)
        out = {}
        for key, (low, high) in self.apis.items():
            if key not in cut:
                out[key] = (low, high)
            elif cut[key] != (low, high):
                out[key] = (low, cut[key][0] - 1) if cut[key][0] > low else (cut[key][1] + 1, high)
        return out


def _load() -> dict[str, Release]:
    raw: dict[str, Any] = json.loads((Path(__file__).with_name("kafka_releases.json")).read_text())
    return {line: Release(line, r["kafka_version"], r["listener"],
                          {int(k): (v[0], v[1]) for k, v in r["apis"].items()},
                          {name: FeatureLevel((f["supported"][0], f["supported"][1]), f["finalized"])
                           for name, f in r["features"].items()})
            for line, r in raw.items()}


RELEASES: dict[str, Release] = _load()
