"""Consumer groups, judged by Kafka's behaviour: the shared fixture and helpers of the group tests, and the
group coordinator spoken to with raw frames (kafkamock's codec over a plain socket): error codes for stale
generations, unknown members, mismatched protocols, oversized commit metadata, KIP-848 heartbeats, and requests
sent to a node that is not the coordinator.

The client tests live in test_groups_confluent.py (librdkafka), test_groups_python_clients.py (kafka-python and
aiokafka in one group) and test_groups_kcat.py; their ``group_cluster`` fixtures come from ``cluster_for`` here.

Every test here runs twice, against a fresh kafkamock and against Apache Kafka 4.3.1 (``group_cluster`` is the
``kafka_target`` of tests/support/targets.py, with ``group.initial.rebalance.delay.ms=0`` on both), so each
expectation is Kafka's. Steps only kafkamock can take (several nodes, its control API) skip the Kafka run, saying
why.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from client_support import RawClient, wait_until
from support.targets import TARGETS, BrokerTarget, target_for

from kafkamock import codec

GROUP_DEADLINE_S = 30.0          # the longest any test waits for one group event (a join, a rebalance, a count)

# Group APIs: key -> name (for diagnostics when a broker does not serve them).
GROUP_APIS = {8: "OffsetCommit", 9: "OffsetFetch", 10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat",
              13: "LeaveGroup", 14: "SyncGroup", 15: "DescribeGroups", 16: "ListGroups", 42: "DeleteGroups",
              47: "OffsetDelete", 68: "ConsumerGroupHeartbeat", 69: "ConsumerGroupDescribe"}

# Error codes (Kafka's Errors enum).
NONE, UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE = 0, 3, 12
NOT_COORDINATOR, ILLEGAL_GENERATION, INCONSISTENT_GROUP_PROTOCOL, UNKNOWN_MEMBER_ID = 16, 22, 23, 25
REBALANCE_IN_PROGRESS, NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, MEMBER_ID_REQUIRED = 27, 68, 69, 79
GROUP_SUBSCRIBED_TO_TOPIC, FENCED_MEMBER_EPOCH, STALE_MEMBER_EPOCH = 86, 110, 113

# Request versions every broker under test serves: Kafka 3.8 (JoinGroup 0-9, OffsetCommit 0-9, OffsetFetch 0-9,
# FindCoordinator 0-5, ConsumerGroupHeartbeat/Describe 0) and Kafka 4.3 (which dropped JoinGroup v0-1,
# OffsetCommit v0-1 and OffsetFetch v0, and added OffsetCommit/OffsetFetch v10, ConsumerGroupHeartbeat v1).
JOIN_V, SYNC_V, HEARTBEAT_V, LEAVE_V = 9, 5, 4, 5
COMMIT_V, FETCH_OFFSETS_V, FIND_V, DESCRIBE_V, LIST_V, DELETE_V = 9, 8, 4, 5, 5, 2
CGH_V, CGD_V = 0, 0     # ConsumerGroupHeartbeat v0: the coordinator makes the member id (v1, KIP-1082: the client)


# -- the cluster under test --------------------------------------------------------------------------------------

GroupCluster = BrokerTarget


def cluster_for(request: pytest.FixtureRequest) -> Iterator[BrokerTarget]:
    """The ``group_cluster`` fixture's body (each group test module declares the fixture with it, parametrized by
    ``TARGETS``): kafkamock, one node unless the test's ``kafkamock`` marker says otherwise, or Kafka 4.3.1."""
    yield target_for(request, request.param)


@pytest.fixture(params=TARGETS)
def group_cluster(request: pytest.FixtureRequest) -> Iterator[BrokerTarget]:
    yield from cluster_for(request)


# -- diagnostics: say which group API a broker lacks when a group never forms -------------------------------------

def served_versions(bootstrap: str) -> dict[int, tuple[int, int]]:
    """{api key: (min, max)} of ApiVersions from the first bootstrap address."""
    with RawClient(bootstrap.split(",")[0], timeout=5) as raw:
        _, body = raw.request("ApiVersions", 3, {"client_software_name": "group-tests",
                                                 "client_software_version": "1"})
    return {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}


def group_api_gap(bootstrap: str, api: str | None = None, version: int | None = None) -> str:
    """'' when the broker lists every group API in ApiVersions (and ``api`` at ``version``), else what it lacks."""
    try:
        served = served_versions(bootstrap)
    except (OSError, ConnectionError, AssertionError) as exc:
        return f"(ApiVersions failed: {exc!r})"
    notes = []
    missing = [f"{name}({key})" for key, name in GROUP_APIS.items() if key not in served]
    if missing:
        notes.append(f"the broker's ApiVersions lacks {', '.join(missing)}")
    key = next((k for k, n in GROUP_APIS.items() if n == api), None)
    if key in served and version is not None and not served[key][0] <= version <= served[key][1]:
        notes.append(f"it lists {api} v{served[key][0]}-{served[key][1]}, not v{version}")
    return "; ".join(notes)


def wait_for(cluster: GroupCluster, condition: Callable[[], Any], what: str, timeout: float = GROUP_DEADLINE_S,
             step: Callable[[], None] | None = None, detail: Callable[[], str] | None = None) -> Any:
    """``wait_until`` whose timeout message also says what the clients saw and which group APIs are missing."""
    try:
        return wait_until(condition, timeout, what, step)
    except AssertionError as exc:
        notes = [str(exc)]
        if detail is not None:
            notes.append(detail())
        gap = group_api_gap(cluster.bootstrap_servers)
        if gap:
            notes.append(gap)
        raise AssertionError("; ".join(notes)) from None


# -- raw requests ------------------------------------------------------------------------------------------------

def subscription(*topics: str) -> bytes:
    """JoinGroup protocol metadata of the ``consumer`` protocol type: a version prefix, then
    ConsumerProtocolSubscription. (Kafka's new coordinator parses it: in 3.8, metadata that does not parse makes
    the join hang, the coordinator logging "Tried to allocate a collection of size 65537" and never answering.)"""
    body = codec.encode("ConsumerProtocolSubscription", 1, {"topics": list(topics), "user_data": None,
                                                            "owned_partitions": []})
    return struct.pack(">h", 1) + body


def assignment_bytes(topic: str, partitions: list[int]) -> bytes:
    body = codec.encode("ConsumerProtocolAssignment", 1, {"assigned_partitions": [
        {"topic": topic, "partitions": partitions}], "user_data": None})
    return struct.pack(">h", 1) + body


def decode_assignment(data: bytes) -> dict[str, list[int]]:
    if not data:
        return {}
    (version,) = struct.unpack_from(">h", data)
    body = codec.decode("ConsumerProtocolAssignment", min(version, 3), bytes(data[2:]))
    return {tp.topic: sorted(tp.partitions) for tp in body.assigned_partitions}


class Raw:
    """A raw connection to one broker; each call names the request in its failure message."""

    def __init__(self, cluster: GroupCluster, address: str | None = None):
        self.metadata = cluster
        self.address = address or cluster.bootstrap_servers.split(",")[0]
        self.client = RawClient(self.address, timeout=GROUP_DEADLINE_S)

    def close(self) -> None:
        self.client.close()

    def __call__(self, api: str, version: int, body: dict) -> Any:
        try:
            return self.client.request(api, version, body)[1]
        except (ConnectionError, TimeoutError) as exc:
            gap = group_api_gap(self.metadata.bootstrap_servers, api, version)
            raise AssertionError(f"{api} v{version} to {self.address}: {exc!r}" + (f"; {gap}" if gap else "")) \
                from None

    # classic protocol
    def join(self, group: str, member_id: str = "", protocols: list[tuple[str, bytes]] | None = None,
             protocol_type: str = "consumer", topic: str = "t", session_ms: int = 10000,
             rebalance_ms: int = 10000) -> Any:
        return self("JoinGroup", JOIN_V, {
            "group_id": group, "session_timeout_ms": session_ms, "rebalance_timeout_ms": rebalance_ms,
            "member_id": member_id, "group_instance_id": None, "protocol_type": protocol_type,
            "protocols": [{"name": n, "metadata": m}
                          for n, m in ([("range", subscription(topic))] if protocols is None else protocols)],
            "reason": None})

    def sync(self, group: str, generation: int, member_id: str, assignments: dict[str, bytes] | None = None,
             protocol_type: str | None = "consumer", protocol_name: str | None = "range") -> Any:
        return self("SyncGroup", SYNC_V, {
            "group_id": group, "generation_id": generation, "member_id": member_id, "group_instance_id": None,
            "protocol_type": protocol_type, "protocol_name": protocol_name,
            "assignments": [{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()]})

    def heartbeat(self, group: str, generation: int, member_id: str) -> int:
        return self("Heartbeat", HEARTBEAT_V, {"group_id": group, "generation_id": generation,
                                               "member_id": member_id, "group_instance_id": None}).error_code

    def leave(self, group: str, member_id: str) -> Any:
        return self("LeaveGroup", LEAVE_V, {"group_id": group, "members": [
            {"member_id": member_id, "group_instance_id": None, "reason": "test done"}]})

    def commit(self, group: str, topic: str, offsets: dict[int, tuple[int, str | None]], generation: int = -1,
               member_id: str = "") -> dict[int, int]:
        """{partition: error code} of an OffsetCommit of {partition: (offset, metadata)}."""
        body = self("OffsetCommit", COMMIT_V, {
            "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member_id,
            "group_instance_id": None, "topics": [{"name": topic, "partitions": [
                {"partition_index": p, "committed_offset": o, "committed_leader_epoch": -1, "committed_metadata": m}
                for p, (o, m) in offsets.items()]}]})
        (answer,) = body.topics
        return {p.partition_index: p.error_code for p in answer.partitions}

    def fetch_offsets(self, group: str) -> tuple[int, dict[tuple[str, int], tuple[int, str | None, int]]]:
        """(group error, {(topic, partition): (offset, metadata, error)}) of every committed offset of a group."""
        body = self("OffsetFetch", FETCH_OFFSETS_V, {"groups": [{"group_id": group, "topics": None}],
                                                     "require_stable": False})
        (answer,) = body.groups
        return answer.error_code, {(t.name, p.partition_index): (p.committed_offset, p.metadata, p.error_code)
                                   for t in answer.topics for p in t.partitions}

    def describe(self, group: str) -> Any:
        (described,) = self("DescribeGroups", DESCRIBE_V, {"groups": [group],
                                                           "include_authorized_operations": False}).groups
        return described

    def find_coordinator(self, group: str) -> Any:
        (found,) = self("FindCoordinator", FIND_V, {"key_type": 0, "coordinator_keys": [group]}).coordinators
        return found

    def join_new_member(self, group: str, **kwargs) -> Any:
        """KIP-394: the first JoinGroup (v4+) of a member without id is answered MEMBER_ID_REQUIRED with an id,
        and the member joins with it."""
        first = self.join(group, "", **kwargs)
        assert first.error_code == MEMBER_ID_REQUIRED, first
        assert first.member_id and first.generation_id == -1
        joined = self.join(group, first.member_id, **kwargs)
        assert joined.error_code == NONE, joined
        assert joined.member_id == first.member_id
        return joined

    # KIP-848 consumer protocol
    def consumer_heartbeat(self, group: str, member_id: str = "", epoch: int = 0, topics: list[str] | None = None,
                           owned: list[dict] | None = None, rebalance_ms: int = 10000) -> Any:
        return self("ConsumerGroupHeartbeat", CGH_V, {
            "group_id": group, "member_id": member_id, "member_epoch": epoch, "instance_id": None,
            "rack_id": None, "rebalance_timeout_ms": rebalance_ms, "subscribed_topic_names": topics,
            "server_assignor": None, "topic_partitions": owned})


def ensure_coordinator(cluster: GroupCluster, raw: Raw, group: str) -> str:
    """Wait until the group's coordinator serves it, as clients do by retrying: Kafka answers FindCoordinator
    with COORDINATOR_NOT_AVAILABLE while it creates __consumer_offsets on first use, and, observed on a fresh
    Kafka 3.8, a JoinGroup right after a successful FindCoordinator can still be NOT_COORDINATOR while the
    coordinator loads that __consumer_offsets partition. DescribeGroups of the (new) group answers once it is
    loaded (error NONE, state Dead)."""
    def serving() -> str | None:
        found = raw.find_coordinator(group)
        if found.error_code != NONE:
            return None
        address = f"{found.host}:{found.port}"
        if address == raw.address:
            return address if raw.describe(group).error_code == NONE else None
        coordinator = Raw(cluster, address)
        try:
            return address if coordinator.describe(group).error_code == NONE else None
        finally:
            coordinator.close()
    return wait_for(cluster, serving, f"the coordinator of {group} to serve it")


class ConsumerMember:
    """A KIP-848 member driven by raw ConsumerGroupHeartbeats that acknowledges each assignment it gets (as a real
    consumer does once it has revoked and taken partitions)."""

    def __init__(self, raw: Raw, group: str, topic: str):
        self.raw, self.group, self.topic = raw, group, topic
        self.member_id, self.epoch = "", 0
        self.owned: list[dict] = []
        self.answers: list[Any] = []

    def beat(self) -> Any:
        first = self.epoch == 0
        answer = self.raw.consumer_heartbeat(self.group, self.member_id, self.epoch,
                                             topics=[self.topic] if first else None,
                                             owned=[] if first else self.owned)
        self.answers.append(answer)
        assert answer.error_code == NONE, answer
        self.member_id, self.epoch = answer.member_id, answer.member_epoch
        if answer.assignment is not None:
            self.owned = [{"topic_id": tp.topic_id, "partitions": sorted(tp.partitions)}
                          for tp in answer.assignment.topic_partitions]
        return answer

    def partitions(self) -> list[int]:
        return sorted(p for tp in self.owned for p in tp["partitions"])

    def leave(self) -> Any:
        return self.raw.consumer_heartbeat(self.group, self.member_id, -1)


def keeps_serving(raw: Raw, group: str, generation: int, member_id: str) -> None:
    """After a refused request, the same connection still gets normal answers."""
    assert raw.heartbeat(group, generation, member_id) == NONE
    assert raw.describe(group).group_state == "Stable"


def one_member_group(cluster: GroupCluster, raw: Raw, topic: str) -> tuple[str, str, int]:
    """A Stable classic group of one raw member that assigned itself every partition: (group, member, gen)."""
    group = cluster.name("group")
    ensure_coordinator(cluster, raw, group)
    joined = raw.join_new_member(group, topic=topic)
    assert joined.leader == joined.member_id and [m.member_id for m in joined.members] == [joined.member_id]
    assert joined.protocol_type == "consumer" and joined.protocol_name == "range"
    synced = raw.sync(group, joined.generation_id, joined.member_id,
                      {joined.member_id: assignment_bytes(topic, [0, 1])})
    assert synced.error_code == NONE, synced
    assert decode_assignment(synced.assignment) == {topic: [0, 1]}
    return group, joined.member_id, joined.generation_id


@pytest.fixture
def raw_group(group_cluster) -> Iterator[tuple[GroupCluster, Raw, str]]:
    topic = group_cluster.name("topic")
    group_cluster.create_topic(topic, 2)
    raw = Raw(group_cluster)
    yield group_cluster, raw, topic
    raw.close()


# -- classic protocol: error codes -------------------------------------------------------------------------------

def test_heartbeat_with_stale_generation_or_unknown_member(raw_group):
    cluster, raw, topic = raw_group
    group, member, generation = one_member_group(cluster, raw, topic)
    assert raw.heartbeat(group, generation, member) == NONE
    assert raw.heartbeat(group, generation - 1, member) == ILLEGAL_GENERATION
    assert raw.heartbeat(group, generation + 1, member) == ILLEGAL_GENERATION
    assert raw.heartbeat(group, generation, "no-such-member") == UNKNOWN_MEMBER_ID
    # A group that does not exist: UNKNOWN_MEMBER_ID as well (Kafka 3.8's new coordinator; so does 4.3).
    assert raw.heartbeat(cluster.name("group"), 1, "no-such-member") == UNKNOWN_MEMBER_ID
    keeps_serving(raw, group, generation, member)
    left = raw.leave(group, member)
    assert left.error_code == NONE and [m.error_code for m in left.members] == [NONE]
    assert raw.describe(group).group_state == "Empty"


def test_member_id_required_then_rejoin_with_the_given_id(raw_group):
    cluster, raw, topic = raw_group
    group = cluster.name("group")
    ensure_coordinator(cluster, raw, group)
    # A rebalance timeout of 5 minutes (librdkafka's max.poll.interval.ms default): Kafka completes the join as
    # soon as every known member has joined (here at once: group.initial.rebalance.delay.ms=0), not at the
    # rebalance timeout; a broker that waits for it fails this test on the 30 s socket timeout.
    first = raw.join(group, "", topic=topic, rebalance_ms=300000)
    assert first.error_code == MEMBER_ID_REQUIRED
    assert first.member_id.startswith("raw-client-")        # Kafka: client id, '-', a random UUID
    assert (first.generation_id, first.leader, list(first.members)) == (-1, "", [])
    joined = raw.join(group, first.member_id, topic=topic, rebalance_ms=300000)
    assert (joined.error_code, joined.member_id, joined.leader) == (NONE, first.member_id, first.member_id)
    assert joined.generation_id == 1
    (listed,) = joined.members
    assert listed.member_id == first.member_id and listed.metadata == subscription(topic)
    synced = raw.sync(group, 1, first.member_id, {first.member_id: assignment_bytes(topic, [0, 1])})
    assert synced.error_code == NONE and (synced.protocol_type, synced.protocol_name) == ("consumer", "range")
    keeps_serving(raw, group, 1, first.member_id)


def test_join_with_protocols_the_group_does_not_share(raw_group):
    cluster, raw, topic = raw_group
    group, member, generation = one_member_group(cluster, raw, topic)
    other = Raw(cluster)
    try:
        # The group runs "range": a member offering only "roundrobin", or another protocol type, is refused at
        # once (before any member id is handed out: the answer's member id is empty).
        refused = other.join(group, "", protocols=[("roundrobin", subscription(topic))])
        assert (refused.error_code, refused.member_id, refused.generation_id) == (INCONSISTENT_GROUP_PROTOCOL, "", -1)
        refused = other.join(group, "", protocol_type="connect", protocols=[("range", subscription(topic))])
        assert refused.error_code == INCONSISTENT_GROUP_PROTOCOL
        # An empty protocol list is refused too.
        refused = other.join(group, "", protocols=[])
        assert refused.error_code == INCONSISTENT_GROUP_PROTOCOL
    finally:
        other.close()
    keeps_serving(raw, group, generation, member)


def test_sync_with_wrong_protocol_type_or_name_or_generation(raw_group):
    cluster, raw, topic = raw_group
    group, member, generation = one_member_group(cluster, raw, topic)
    wrong_type = raw.sync(group, generation, member, protocol_type="connect")
    assert wrong_type.error_code == INCONSISTENT_GROUP_PROTOCOL
    wrong_name = raw.sync(group, generation, member, protocol_name="roundrobin")
    assert wrong_name.error_code == INCONSISTENT_GROUP_PROTOCOL
    stale = raw.sync(group, generation - 1, member)
    assert stale.error_code == ILLEGAL_GENERATION
    unknown = raw.sync(group, generation, "no-such-member")
    assert unknown.error_code == UNKNOWN_MEMBER_ID
    # From v5 both are mandatory (SyncGroupRequest.areMandatoryProtocolTypeAndNamePresent, in 3.8 and 4.x):
    # null is refused as inconsistent.
    assert raw.sync(group, generation, member, protocol_type=None).error_code == INCONSISTENT_GROUP_PROTOCOL
    assert raw.sync(group, generation, member, protocol_name=None).error_code == INCONSISTENT_GROUP_PROTOCOL
    # The right ones again: the member gets its assignment again.
    again = raw.sync(group, generation, member)
    assert again.error_code == NONE and decode_assignment(again.assignment) == {topic: [0, 1]}
    keeps_serving(raw, group, generation, member)


def test_offset_commit_with_too_large_metadata_fails_that_partition_only(raw_group):
    cluster, raw, topic = raw_group
    group, member, generation = one_member_group(cluster, raw, topic)
    limit = 4096                                  # offset.metadata.max.bytes, Kafka's default
    answer = raw.commit(group, topic, {0: (5, "m" * (limit + 1)), 1: (7, "m" * limit)}, generation, member)
    assert answer == {0: OFFSET_METADATA_TOO_LARGE, 1: NONE}
    error, committed = raw.fetch_offsets(group)
    assert error == NONE
    assert committed == {(topic, 1): (7, "m" * limit, NONE)}
    # A stale generation and an unknown member are refused for every partition; nothing changes.
    assert raw.commit(group, topic, {0: (1, ""), 1: (1, "")}, generation - 1, member) == \
        {0: ILLEGAL_GENERATION, 1: ILLEGAL_GENERATION}
    assert raw.commit(group, topic, {0: (1, "")}, generation, "no-such-member") == {0: UNKNOWN_MEMBER_ID}
    # An admin-style commit (generation -1, no member) to a group with members is refused.
    assert raw.commit(group, topic, {0: (1, "")}) == {0: UNKNOWN_MEMBER_ID}
    # A partition the topic does not have.
    assert raw.commit(group, topic, {9: (1, "")}, generation, member) == {9: UNKNOWN_TOPIC_OR_PARTITION}
    assert raw.fetch_offsets(group)[1] == {(topic, 1): (7, "m" * limit, NONE)}
    keeps_serving(raw, group, generation, member)


def test_delete_groups_and_offsets_refusals(raw_group):
    cluster, raw, topic = raw_group
    group, member, generation = one_member_group(cluster, raw, topic)
    assert raw.commit(group, topic, {0: (3, "a"), 1: (4, None)}, generation, member) == {0: NONE, 1: NONE}
    missing = cluster.name("group")
    answer = raw("DeleteGroups", DELETE_V, {"groups_names": [group, missing]})
    assert {r.group_id: r.error_code for r in answer.results} == {group: NON_EMPTY_GROUP,
                                                                  missing: GROUP_ID_NOT_FOUND}
    # OffsetDelete of a topic the live group subscribes to (its members' subscription names it).
    answer = raw("OffsetDelete", 0, {"group_id": group, "topics": [{"name": topic, "partitions": [
        {"partition_index": 0}]}]})
    assert answer.error_code == NONE
    assert [(p.partition_index, p.error_code) for t in answer.topics for p in t.partitions] == \
        [(0, GROUP_SUBSCRIBED_TO_TOPIC)]
    keeps_serving(raw, group, generation, member)
    assert raw.leave(group, member).error_code == NONE
    answer = raw("OffsetDelete", 0, {"group_id": group, "topics": [{"name": topic, "partitions": [
        {"partition_index": 0}]}]})
    assert answer.error_code == NONE
    assert [(p.partition_index, p.error_code) for t in answer.topics for p in t.partitions] == [(0, NONE)]
    assert raw.fetch_offsets(group)[1] == {(topic, 1): (4, "", NONE)}     # null metadata is stored as ""
    answer = raw("DeleteGroups", DELETE_V, {"groups_names": [group]})
    assert [(r.group_id, r.error_code) for r in answer.results] == [(group, NONE)]
    assert raw.fetch_offsets(group) == (NONE, {})
    assert raw.describe(group).group_state == "Dead"      # DescribeGroups v5: an unknown group is Dead, no error


# -- KIP-848 -----------------------------------------------------------------------------------------------------

def test_consumer_protocol_heartbeats_share_partitions(group_cluster):
    """Two KIP-848 members over raw ConsumerGroupHeartbeat v0 converge on disjoint assignments covering the topic;
    ConsumerGroupDescribe shows it; stale epochs are fenced.

    Kafka 3.8 serves ConsumerGroupHeartbeat v0 only (and only with group.coordinator.rebalance.protocols including
    consumer); 4.x adds v1, where the client makes its member id (KIP-1082). librdkafka 2.12+ needs v1, so
    test_groups_confluent's KIP-848 test cannot run against 3.8: this test is that protocol's proof against 3.8.
    """
    cluster = group_cluster
    topic, group = cluster.name("topic"), cluster.name("group")
    cluster.create_topic(topic, 4)
    raw = Raw(cluster)
    try:
        ensure_coordinator(cluster, raw, group)
        first, second = ConsumerMember(raw, group, topic), ConsumerMember(raw, group, topic)
        joined = first.beat()
        assert joined.member_id and joined.member_epoch >= 1 and joined.heartbeat_interval_ms > 0
        # Alone, it gets every partition: in the first answer or, when the coordinator has not yet seen the new
        # topic in its metadata image (observed on Kafka 3.8 right after CreateTopics), a few heartbeats later.
        wait_for(cluster, lambda: first.partitions() == [0, 1, 2, 3], "the first member to own all four",
                 step=first.beat, detail=lambda: f"answers {first.answers[-3:]}")
        second.beat()
        # The group epoch moved on; Kafka 4.3 computes the new target at most once per
        # group.consumer.assignment.interval.ms, so the second member may first join at the previous epoch.
        (described,) = raw("ConsumerGroupDescribe", CGD_V, {"group_ids": [group],
                                                            "include_authorized_operations": False}).groups
        assert described.group_epoch > first.epoch and second.epoch >= first.epoch

        def converged() -> bool:
            a, b = set(first.partitions()), set(second.partitions())
            return a | b == {0, 1, 2, 3} and not a & b and len(a) == len(b) == 2 and first.epoch == second.epoch

        def step() -> None:
            first.beat()
            second.beat()
        wait_for(cluster, converged, "both members to own two partitions each", step=step,
                 detail=lambda: f"first {first.partitions()} @{first.epoch}, second {second.partitions()} "
                                f"@{second.epoch}")
        # Kafka 3.8 observed: the first member was told to keep [0, 1] (revoking 2, 3) while at its old epoch;
        # once it acknowledged that, it moved to the new epoch and the second member received [2, 3].

        (described,) = raw("ConsumerGroupDescribe", CGD_V, {"group_ids": [group],
                                                            "include_authorized_operations": False}).groups
        assert described.error_code == NONE and described.group_state == "Stable"
        assert described.group_epoch == described.assignment_epoch == first.epoch
        assert described.assignor_name in ("uniform", "range")
        members = {m.member_id: m for m in described.members}
        assert set(members) == {first.member_id, second.member_id}
        for member in (first, second):
            m = members[member.member_id]
            assert m.subscribed_topic_names == [topic] and m.member_epoch == member.epoch
            assert [(tp.topic_name, sorted(tp.partitions)) for tp in m.assignment.topic_partitions] == \
                [(topic, member.partitions())]

        # Listed with its type (ListGroups v5 types filter).
        listed = raw("ListGroups", LIST_V, {"states_filter": [], "types_filter": ["consumer"]}).groups
        assert [(g.protocol_type, g.group_state, g.group_type) for g in listed if g.group_id == group] == \
            [("consumer", "Stable", "consumer")]

        # A heartbeat from the future is fenced; an unknown member is refused; the group carries on.
        fenced = raw.consumer_heartbeat(group, first.member_id, first.epoch + 5)
        assert fenced.error_code == FENCED_MEMBER_EPOCH
        unknown = raw.consumer_heartbeat(group, "no-such-member", 1)
        assert unknown.error_code == UNKNOWN_MEMBER_ID
        # OffsetCommit v9 carries the member epoch: one older than the partition's assignment epoch (KIP-1251:
        # 4.3 accepts an older member epoch for partitions assigned at or before it) is STALE_MEMBER_EPOCH; the
        # current one commits.
        stale = raw.commit(group, topic, {first.partitions()[0]: (1, "")}, 0, first.member_id)
        assert stale == {first.partitions()[0]: STALE_MEMBER_EPOCH}
        ok = raw.commit(group, topic, {first.partitions()[0]: (1, "")}, first.epoch, first.member_id)
        assert ok == {first.partitions()[0]: NONE}
        # Non-empty: DeleteGroups refuses it.
        answer = raw("DeleteGroups", DELETE_V, {"groups_names": [group]})
        assert [r.error_code for r in answer.results] == [NON_EMPTY_GROUP]
        second.beat()
        assert second.partitions() and second.epoch == first.epoch

        # Leaving (epoch -1) is answered with epoch -1; the other member takes every partition.
        gone = first.leave()
        assert (gone.error_code, gone.member_epoch) == (NONE, -1)
        wait_for(cluster, lambda: second.partitions() == [0, 1, 2, 3], "the remaining member to own all four",
                 step=second.beat, detail=lambda: f"second {second.partitions()}")
        assert second.leave().error_code == NONE
        answer = raw("DeleteGroups", DELETE_V, {"groups_names": [group]})
        assert [r.error_code for r in answer.results] == [NONE]
    finally:
        raw.close()


def test_classic_join_to_a_consumer_protocol_group(group_cluster):
    """A classic JoinGroup to a KIP-848 group that has members. Kafka 3.8 (new coordinator) and 4.x both let a
    member of protocol type ``consumer`` join it as a "classic member" of the consumer group (the online-migration
    path; no group.consumer.migration.policy needed for a member): MEMBER_ID_REQUIRED first, then the join succeeds
    with the member epoch as generation, no member list (the coordinator assigns) and no leader. Any other protocol
    type is INCONSISTENT_GROUP_PROTOCOL (GROUP_ID_NOT_FOUND is what Kafka 3.7's old coordinator answered)."""
    cluster = group_cluster
    topic, group = cluster.name("topic"), cluster.name("group")
    cluster.create_topic(topic, 2)
    raw, classic = Raw(cluster), Raw(cluster)
    try:
        ensure_coordinator(cluster, raw, group)
        member = ConsumerMember(raw, group, topic)
        member.beat()
        wait_for(cluster, lambda: member.partitions() == [0, 1], "the member to own both partitions",
                 step=member.beat, detail=lambda: f"answers {member.answers[-3:]}")

        refused = classic.join(group, "", protocol_type="connect", protocols=[("range", subscription(topic))])
        assert refused.error_code == INCONSISTENT_GROUP_PROTOCOL
        first = classic.join(group, "", topic=topic)
        assert first.error_code == MEMBER_ID_REQUIRED and first.member_id
        joined = classic.join(group, first.member_id, topic=topic)
        assert joined.error_code == NONE, joined
        assert joined.member_id == first.member_id and joined.generation_id >= 1
        assert (joined.protocol_type, joined.protocol_name) == ("consumer", "range")
        assert list(joined.members) == [] and joined.leader == ""
        synced = classic.sync(group, joined.generation_id, joined.member_id)
        assert synced.error_code in (NONE, REBALANCE_IN_PROGRESS), synced
        (described,) = raw("ConsumerGroupDescribe", CGD_V, {"group_ids": [group],
                                                            "include_authorized_operations": False}).groups
        assert {m.member_id for m in described.members} == {member.member_id, joined.member_id}
        assert classic.leave(group, joined.member_id).error_code == NONE
        member.beat()
        assert member.leave().error_code == NONE
    finally:
        raw.close()
        classic.close()


# -- several nodes: the coordinator is one of them ---------------------------------------------------------------

@pytest.mark.kafkamock(brokers=3)
def test_group_requests_to_a_node_that_is_not_the_coordinator(group_cluster):
    """Every group request sent to a node that does not lead the group's __consumer_offsets partition is answered
    NOT_COORDINATOR (three nodes, so that one is not the coordinator; on Kafka, a three-node cluster)."""
    from confluent_kafka.admin import AdminClient

    topic, group = group_cluster.name("topic"), group_cluster.name("group")
    group_cluster.create_topic(topic, 2)
    raw = Raw(group_cluster)
    try:
        ensure_coordinator(group_cluster, raw, group)
        coordinator = raw.find_coordinator(group)
        brokers = AdminClient({"bootstrap.servers": group_cluster.bootstrap_servers}).list_topics(timeout=10).brokers
        nodes = {b.id: {"host": b.host, "port": b.port} for b in brokers.values()}
        (other_id, *_) = sorted(set(nodes) - {coordinator.node_id})
        other_address = f"{nodes[other_id]['host']}:{nodes[other_id]['port']}"
        wrong = Raw(group_cluster, other_address)
        right = Raw(group_cluster, f"{coordinator.host}:{coordinator.port}")
        try:
            assert wrong.join(group, "", topic=topic).error_code == NOT_COORDINATOR
            assert wrong.heartbeat(group, 1, "m") == NOT_COORDINATOR
            assert wrong.sync(group, 1, "m").error_code == NOT_COORDINATOR
            assert wrong.leave(group, "m").error_code == NOT_COORDINATOR
            assert wrong.commit(group, topic, {0: (1, "")}) == {0: NOT_COORDINATOR}
            assert wrong.fetch_offsets(group)[0] == NOT_COORDINATOR
            assert wrong.describe(group).error_code == NOT_COORDINATOR
            assert wrong.consumer_heartbeat(group, topics=[topic], owned=[]).error_code == NOT_COORDINATOR
            # The coordinator itself serves the group.
            joined = right.join_new_member(group, topic=topic)
            synced = right.sync(group, joined.generation_id, joined.member_id,
                                {joined.member_id: assignment_bytes(topic, [0, 1])})
            assert synced.error_code == NONE
            keeps_serving(right, group, joined.generation_id, joined.member_id)
        finally:
            wrong.close()
            right.close()
    finally:
        raw.close()
