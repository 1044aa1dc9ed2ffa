"""The cluster's feature levels (KIP-584): what each node supports and what the cluster has finalized, as a freshly
formatted Kafka 4.3.1 cluster has them, and their changes through UpdateFeatures.

ApiVersions lists them; the finalized levels take effect where kafkamock implements the feature:
``transaction.version`` (KIP-890 part 2 at 2; its initial level is ``kafkamock.transaction.version``, which Kafka
fixes when a cluster is formatted), ``group.version`` (KIP-848 consumer groups need 1) and ``share.version``
(KIP-932 share groups need 1). ``metadata.version`` and ``eligible.leader.replicas.version`` are only recorded.
``kraft.version`` stays 0: kafkamock's nodes form a static quorum that cannot become dynamic (KIP-853).
``streams.version`` is neither supported nor finalized: kafkamock serves no streams groups.

UpdateFeatures is checked as Kafka's FeatureControlManager checks it, in the order a ``java.util.HashMap`` of the
feature names iterates; the first error fails the whole update and nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.java_hash_order import java_hash_order, java_string_hash
from kafkamock.broker.kafka_releases import Release

TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
SHARE_VERSION = "share.version"
METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
ELR_VERSION = "eligible.leader.replicas.version"

# The levels a node supports (Kafka lists them in name order).
SUPPORTED: dict[str, tuple[int, int]] = {
    ELR_VERSION: (0, 1), GROUP_VERSION: (0, 1), KRAFT_VERSION: (0, 1), METADATA_VERSION: (7, 30),
    SHARE_VERSION: (0, 1), TRANSACTION_VERSION: (0, 2)}
# The levels a new cluster finalizes (transaction.version's comes from kafkamock.transaction.version).
INITIAL: dict[str, int] = {ELR_VERSION: 1, GROUP_VERSION: 1, KRAFT_VERSION: 0, METADATA_VERSION: 30, SHARE_VERSION: 1}
# metadata.version levels that changed the metadata's format (MetadataVersion.didMetadataChange): a downgrade
# across one of them could lose metadata, so Kafka refuses it.
METADATA_CHANGED = frozenset({7, 8, 11, 13, 14, 15, 17, 23, 30})
# Other features' dependencies (FeatureVersion.dependencies): level -> {feature: minimum level}.
DEPENDENCIES: dict[str, dict[int, dict[str, int]]] = {ELR_VERSION: {1: {METADATA_VERSION: 23}}}
# Every feature Kafka 4.3.1 knows; streams.version is known but not supported (kafkamock serves no streams groups).
KNOWN = frozenset(SUPPORTED) | {"streams.version"}
MINIMUM_METADATA_VERSION = 7
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


@dataclass(frozen=True)
class FeatureUpdate:
    name: str
    level: int
    upgrade_type: int       # 1 upgrade, 2 safe downgrade, 3 unsafe downgrade (anything else: unknown)


class UpdateRefused(Exception):
    """One feature's update is invalid: INVALID_UPDATE_VERSION (the whole update fails) with Kafka's message."""

    def __init__(self, message: str, code: ErrorCode = ErrorCode.INVALID_UPDATE_VERSION):
        super().__init__(message)
        self.code, self.message = code, message


class Features:
    """Finalized levels and their epoch; ``changed`` persists them (``snapshot``/``restore``)."""

    def __init__(self, transaction_version: int, changed: Callable[[], None] = lambda: None,
                 release: Release | None = None):
        # An emulated release (kafka_releases.py) supports and finalizes its own levels, of the features kafkamock
        # knows; kraft.version stays 0 (a static quorum) whatever the release.
        self.supported: dict[str, tuple[int, int]] = dict(SUPPORTED) if release is None else {
            name: f.supported for name, f in sorted(release.features.items()) if name in SUPPORTED}
        initial = INITIAL if release is None else {
            name: f.finalized for name, f in release.features.items() if name in SUPPORTED}
        if KRAFT_VERSION in initial:
            initial = {**initial, KRAFT_VERSION: 0}
        self.levels: dict[str, int] = {**initial}
        if TRANSACTION_VERSION in self.supported:
            self.levels[TRANSACTION_VERSION] = transaction_version
        self.overrides: dict[str, int] = {}     # what UpdateFeatures changed (persisted; the rest is format-time)
        self.epoch = 1
        self.changed = changed
        self._finalized: dict[str, int] | None = None

    def level(self, name: str) -> int:
        return self.levels.get(name, 0)

    def finalized(self) -> Mapping[str, int]:
        """The finalized features ApiVersions lists: those above level 0, in Kafka's order. The same object until the
        levels change (every connection's ApiVersions asks), so it must not be changed."""
        if self._finalized is None:
            self._finalized = {name: level for name, level in self.levels.items() if level > 0}
        return self._finalized

    def update(self, updates: Iterable[FeatureUpdate], validate_only: bool, controller_id: int) -> None:
        """Apply the updates (or only check them), as Kafka's FeatureControlManager.updateFeatures: UpdateRefused
        for the first invalid one, and then nothing changes."""
        wanted: dict[str, FeatureUpdate] = {}
        for u in updates:
            wanted[u.name] = u          # a feature named twice: the last entry counts (Kafka's map puts)
        proposed = {**self.levels, **{name: u.level for name, u in wanted.items()}}
        for name in java_hash_order(wanted, java_string_hash):
            self._check(wanted[name], proposed, controller_id)
        if validate_only:
            return
        changed = False
        for name, u in wanted.items():
            if name == KRAFT_VERSION or self.levels.get(name, 0) == u.level:
                continue
            self.levels[name] = self.overrides[name] = u.level
            changed = True
        if changed:
            self._finalized = None
            self.epoch += 1
            self.changed()

    def _check(self, u: FeatureUpdate, proposed: Mapping[str, int], controller_id: int) -> None:
        name, level = u.name, u.level

        def invalid(why: str) -> UpdateRefused:
            return UpdateRefused(f"Invalid update version {level} for feature {name}. {why}")

        if u.upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            raise invalid("The controller does not support the given upgrade type.")
        current = self.levels.get(name, 0)
        if level < 0:
            raise invalid("A feature version cannot be less than 0.")
        low, high = self.supported.get(name, (0, 0))
        if not low <= level <= high:
            raise invalid(f"Local controller {controller_id} does not support this feature." if high == 0 else
                          f"Local controller {controller_id} only supports versions {low}-{high}")
        if level < current and u.upgrade_type == UPGRADE:
            raise invalid("Can't downgrade the version of this feature without setting the upgrade type to either "
                          "safe or unsafe downgrade.")
        if level > current and u.upgrade_type != UPGRADE:
            raise invalid("Can't downgrade to a newer version.")
        if name == METADATA_VERSION:
            if level < current and any(v in METADATA_CHANGED for v in range(level + 1, current + 1)):
                why = ("Unsafe metadata downgrade is not supported in this version." if u.upgrade_type == UNSAFE_DOWNGRADE
                       else "Refusing to perform the requested downgrade because it might delete metadata information.")
                raise UpdateRefused(f"Unsupported metadata.version downgrade from {current} to {level}. {why}")
            return
        if name == KRAFT_VERSION:
            if u.upgrade_type != UPGRADE and level != current:
                raise invalid("Can't downgrade the version of this feature.")
            if level > current:
                # Kafka asks its voters; kafkamock's emulated static quorum cannot take dynamic membership.
                raise UpdateRefused(f"Invalid upgrade of {KRAFT_VERSION} to KRAFT_VERSION_{level} because not all of "
                                    "the voters support it")
            return
        if name not in KNOWN:
            raise invalid(f"Feature {name} not found.")
        if level >= 1 and proposed.get(METADATA_VERSION, 0) < MINIMUM_METADATA_VERSION:
            raise invalid(f"{name} could not be set to {level} because it depends on metadata.version="
                          f"{MINIMUM_METADATA_VERSION} (3.3-IV3)")
        for feature, minimum in DEPENDENCIES.get(name, {}).get(level, {}).items():
            if proposed.get(feature, 0) < minimum:
                raise invalid(f"{name} could not be set to {level} because it depends on {feature} level {minimum}")

    def snapshot(self) -> dict:
        return {"levels": dict(self.overrides), "epoch": self.epoch}

    def restore(self, saved: Mapping | None) -> None:
        if not saved:
            return
        self.overrides = {str(k): int(v) for k, v in saved.get("levels", {}).items()}
        self.levels.update(self.overrides)
        self._finalized = None
        self.epoch = int(saved.get("epoch", self.epoch))


__all__ = ["FeatureUpdate", "Features", "SUPPORTED", "UpdateRefused"]
