"""Steps of the differential suite's group scenarios (tests/differential/test_groups_*.py, test_offsets.py): raw
JoinGroup/SyncGroup/Heartbeat/LeaveGroup/ConsumerGroupHeartbeat requests with Kafka's defaults filled in, the
consumer protocol's embedded subscription and assignment bytes, and views that make what both brokers answer
comparable (Kafka keeps members in hash maps, so member lists are put in the scenario's own order first).
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kafkamock import codec

NO_TOPIC_ID = uuid.UUID(int=0)


# -- the consumer protocol's bytes -----------------------------------------------------------------------------

def subscription(*topics: str, version: int = 0, owned: Mapping[str, Sequence[int]] | None = None,
                 user_data: bytes | None = None, generation: int = -1) -> bytes:
    """A ConsumerProtocolSubscription (the JoinGroup metadata of a Java consumer), with its version prefix."""
    body: dict[str, Any] = {"topics": list(topics), "user_data": user_data}
    if version >= 1:
        body["owned_partitions"] = [{"topic": t, "partitions": list(ps)} for t, ps in (owned or {}).items()]
    if version >= 2:
        body["generation_id"] = generation
    return struct.pack(">h", version) + codec.encode("ConsumerProtocolSubscription", version, body)


def assignment(partitions: Mapping[str, Sequence[int]], version: int = 0) -> bytes:
    return struct.pack(">h", version) + codec.encode("ConsumerProtocolAssignment", version, {
        "assigned_partitions": [{"topic": t, "partitions": list(ps)} for t, ps in partitions.items()],
        "user_data": None})


def read_assignment(data: bytes) -> Any:
    """A SyncGroup assignment as the consumer reads it (or the raw bytes when it is not one)."""
    data = bytes(data)
    if len(data) < 2:
        return data.hex()
    version = struct.unpack(">h", data[:2])[0]
    try:
        decoded = codec.decode("ConsumerProtocolAssignment", min(max(version, 0), 3), data[2:])
    except Exception:  # noqa: BLE001 - not a consumer assignment: shown as it is
        return "0x" + data.hex()
    return {"version": version, "partitions": {a.topic: sorted(a.partitions) for a in decoded.assigned_partitions}}


# -- coordinator -----------------------------------------------------------------------------------------------

def coordinator_ready(run, group: str, timeout: float = 30.0) -> None:
    """Until FindCoordinator answers for ``group`` (Kafka creates ``__consumer_offsets`` on first use and answers
    COORDINATOR_NOT_AVAILABLE meanwhile) and the coordinator has loaded its partition (DescribeGroups no longer
    answers NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS). Not observed."""
    def probe():
        r = run.call("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": [group]}, see=False)
        if r.coordinators[0].error_code != 0:
            return False
        return describe_group(run, group).error_code not in (14, 15, 16)
    run.until(f"a coordinator for {group}", probe, timeout=timeout)


# -- classic requests ------------------------------------------------------------------------------------------

def topic_and_group(run, partitions: int) -> tuple[str, str]:
    """A new topic with ``partitions`` partitions and a new group name whose coordinator answers."""
    topic, group = run.name("t"), run.name("g")
    run.create_topic(topic, partitions=partitions)
    coordinator_ready(run, group)
    return topic, group


def share_state_ready(run) -> None:
    """Kafka creates ``__share_group_state`` on the first share-coordinator lookup, and initializes a share group's
    partitions (which gates their assignment) only once it exists. Set-up only: kafkamock keeps share state in the
    partitions themselves."""
    if run.target.cache.get("share-warm"):
        return
    run.call("FindCoordinator", 6, {"key_type": 2, "coordinator_keys": ["warm-up:AAAAAAAAAAAAAAAAAAAAAA:0"]},
             see=False)
    if run.target.name == "kafka":
        def probe():
            md = run.call("Metadata", 12, {"topics": [{"name": "__share_group_state", "topic_id": uuid.UUID(int=0)}],
                                           "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": False}, see=False)
            return md.topics[0].error_code == 0 and all(p.leader_id >= 0 for p in md.topics[0].partitions)
        run.until("__share_group_state", probe, timeout=30, interval=0.2)
    run.target.cache["share-warm"] = True


def join_body(group: str, member_id: str = "", *, instance: str | None = None,
              protocols: Iterable[tuple[str, bytes]] | None = None, protocol_type: str = "consumer",
              session: int = 10_000, rebalance: int = 30_000, reason: str | None = None, topics=("t",)) -> dict:
    protocols = list(protocols) if protocols is not None else [("range", subscription(*topics))]
    return {"group_id": group, "session_timeout_ms": session, "rebalance_timeout_ms": rebalance,
            "member_id": member_id, "group_instance_id": instance, "protocol_type": protocol_type,
            "protocols": [{"name": n, "metadata": m} for n, m in protocols], "reason": reason}


def sync_body(group: str, generation: int, member_id: str, assignments: Mapping[str, bytes] | None = None, *,
              instance: str | None = None, protocol_type: str | None = "consumer",
              protocol_name: str | None = "range") -> dict:
    return {"group_id": group, "generation_id": generation, "member_id": member_id, "group_instance_id": instance,
            "protocol_type": protocol_type, "protocol_name": protocol_name,
            "assignments": [{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()]}


def heartbeat_body(group: str, generation: int, member_id: str, instance: str | None = None) -> dict:
    return {"group_id": group, "generation_id": generation, "member_id": member_id, "group_instance_id": instance}


def join_new(run, conn, group: str, *, version: int = 9, label: str = "join", see: bool = True, **kw):
    """A new dynamic member: v4+ first gets MEMBER_ID_REQUIRED and its id, then joins (the answer may wait for
    the round: ``send_join`` parks it instead). Returns the final JoinGroup answer."""
    first = conn.call("JoinGroup", version, join_body(group, **kw))
    if see:
        run.see(f"{label} (no id)", first)
    if version >= 4 and first.error_code == 79:       # MEMBER_ID_REQUIRED
        kw["member_id"] = first.member_id
        answer = conn.call("JoinGroup", version, join_body(group, **kw))
        if see:
            run.see(label, answer)
        return answer
    return first


def park(run, conn, group: str, api: str, version: int, body: Mapping[str, Any], *,
         state: str | None = "PreparingRebalance", members: int | None = None) -> None:
    """Send a request that waits for the group's round (a JoinGroup, a follower's SyncGroup) and poll until the
    coordinator has taken it: the group is in ``state`` (and has ``members`` members when given). Without this a
    request on another connection could overtake it."""
    conn.send(api, version, body)

    def taken():
        g = describe_group(run, group)
        return (state is None or g.group_state == state) and (members is None or len(g.members) == members)
    run.until(f"{api} of {group} taken", taken, timeout=15)


def member_id_for(run, conn, group: str, *, version: int = 9, **kw) -> str:
    """KIP-394's first step only: the id a new member must join with."""
    first = conn.call("JoinGroup", version, join_body(group, **kw))
    assert first.error_code == 79, first
    return first.member_id


def members_in(order: Sequence[str], members: Iterable[Any], key: str = "member_id") -> list:
    """A member list in the scenario's order (``order``: member ids as the scenario met them), unknown ids last."""
    members = list(members)
    rank = {m: i for i, m in enumerate(order)}
    return sorted(members, key=lambda m: rank.get(getattr(m, key) if not isinstance(m, dict) else m[key],
                                                  len(rank)))


def join_view(answer: Any, order: Sequence[str]) -> dict:
    """A JoinGroup answer with its member list in the scenario's order."""
    view = codec_dict(answer)
    view["members"] = members_in(order, view.get("members", []))
    return view


def describe_view(answer: Any, order: Sequence[str]) -> dict:
    """A DescribeGroups group with members in the scenario's order and assignments read."""
    view = codec_dict(answer)
    members = []
    for m in members_in(order, view.get("members", [])):
        m = dict(m)
        if m.get("member_assignment"):
            m["member_assignment"] = read_assignment(m["member_assignment"])
        members.append(m)
    view["members"] = members
    return view


def codec_dict(message: Any) -> Any:
    """A decoded message as plain dicts and lists (keeps bytes)."""
    if hasattr(message, "_asdict"):
        return {k: codec_dict(v) for k, v in message._asdict().items()}
    if isinstance(message, Mapping):
        return {k: codec_dict(v) for k, v in message.items()}
    if isinstance(message, list | tuple):
        return [codec_dict(v) for v in message]
    return message


def describe_group(run, group: str, *, version: int = 5, conn=None):
    r = (conn or run.conn()).call("DescribeGroups", version, {"groups": [group],
                                                               "include_authorized_operations": False})
    return r.groups[0]


def state_trace(run, group: str, final: str = "Empty", timeout: float = 20.0, interval: float = 0.1) -> list:
    """The group's states (with their member counts) as DescribeGroups shows them, polled until ``final``, each
    distinct step once: what a broker-side timer does, seen without a request that concerns the members."""
    trace: list = []

    def step():
        g = describe_group(run, group)
        seen = [g.group_state, len(g.members)]
        if not trace or trace[-1] != seen:
            trace.append(seen)
        return g.group_state == final
    run.until(f"{group} reaches {final}", step, timeout=timeout, interval=interval)
    return trace


def state_of(run, group: str) -> str:
    return describe_group(run, group).group_state


def list_groups(run, groups: Iterable[str], *, version: int = 5, states: Sequence[str] = (),
                types: Sequence[str] = ()) -> list:
    """ListGroups, only the scenario's groups, sorted by id."""
    wanted = set(groups)
    r = run.call("ListGroups", version, {"states_filter": list(states), "types_filter": list(types)}, see=False)
    return {"error_code": r.error_code,
            "groups": sorted((codec_dict(g) for g in r.groups if g.group_id in wanted), key=lambda g: g["group_id"])}


# -- KIP-848 -----------------------------------------------------------------------------------------------------

def cgh_body(group: str, member_id: str = "", epoch: int = 0, *, instance: str | None = None,
             rack: str | None = None, rebalance: int = -1, topics: Sequence[str] | None = None,
             regex: str | None = None, assignor: str | None = None,
             owned: Sequence[tuple[uuid.UUID, Sequence[int]]] | None = None) -> dict:
    return {"group_id": group, "member_id": member_id, "member_epoch": epoch, "instance_id": instance,
            "rack_id": rack, "rebalance_timeout_ms": rebalance,
            "subscribed_topic_names": list(topics) if topics is not None else None,
            "subscribed_topic_regex": regex, "server_assignor": assignor,
            "topic_partitions": [{"topic_id": t, "partitions": list(ps)} for t, ps in owned]
            if owned is not None else None}


def coordinator_sees(run, probe: str, topics) -> None:
    """Until the group coordinator assigns the new topics (Kafka's coordinator reads topics from a metadata image
    that can lag the CreateTopics answer): a throwaway member joins and leaves. Not observed."""
    def assigned():
        body = cgh_body(probe, "probe", 0, rebalance=30_000, topics=list(topics), owned=[])
        r = run.call("ConsumerGroupHeartbeat", 1, body, see=False)
        run.call("ConsumerGroupHeartbeat", 1, cgh_body(probe, "probe", -1), see=False)
        return r.error_code == 0 and r.assignment is not None and \
            len({tp.topic_id for tp in r.assignment.topic_partitions}) == len(topics)
    run.until("the coordinator sees the topics", assigned, timeout=20, interval=0.1)


def topic_id(run, topic: str) -> uuid.UUID:
    md = run.call("Metadata", 12, {"topics": [{"name": topic, "topic_id": NO_TOPIC_ID}],
                                   "allow_auto_topic_creation": False,
                                   "include_topic_authorized_operations": False}, see=False)
    return md.topics[0].topic_id


def named_assignment(assignment: Any, names: Mapping[uuid.UUID, str]) -> Any:
    """A KIP-848 assignment ({topic_id, partitions} lists) as {topic name: sorted partitions}."""
    if assignment is None:
        return None
    parts = assignment.topic_partitions if hasattr(assignment, "topic_partitions") else assignment
    return {names.get(tp.topic_id, str(tp.topic_id)): sorted(tp.partitions) for tp in parts}


def owned_of(assignment: Any) -> list[tuple[uuid.UUID, list[int]]]:
    """What a member owns after taking ``assignment`` (a heartbeat answer's), for its next heartbeat."""
    if assignment is None:
        return []
    return [(tp.topic_id, list(tp.partitions)) for tp in assignment.topic_partitions]
