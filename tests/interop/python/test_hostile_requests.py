"""Hostile but well-formed requests against ``kafkamock serve`` in its own process, over real sockets: each is
answered with Kafka's error code (or carried out as Kafka does), no other client waits on it, and the broker's log
holds no ERROR line or traceback. The differential suite (tests/differential/test_hostile.py) holds the answers
against Kafka 4.3.1 itself.
"""

from __future__ import annotations

import re
import threading
import time
import uuid

import pytest
from client_support import RawClient
from support.serve_process import ServeProcess

from kafkamock.broker.errors import ErrorCode as E

LONG = "x" * 32767
TS = 1_700_000_000_000
NO_ID = uuid.UUID(int=0)
ANSWER_WITHIN_S = 2.0       # another connection's ApiVersions, while the hostile request is in the broker


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("hostile")
    with ServeProcess(["--data-dir", str(data_dir)]) as broker:
        broker.data_dir = data_dir
        yield broker


@pytest.fixture
def broker(served):
    """The shared broker; after the test, its log since the test began must hold no ERROR line or traceback."""
    start = len(served.log())
    yield served
    written = served.log()[start:]
    bad = [line for line in written.splitlines() if re.search(r" (ERROR|CRITICAL) |Traceback", line)]
    assert not bad, "the broker logged:\n" + "\n".join(bad[:10])


def create_topic(client: RawClient, name: str, partitions: int = 1) -> uuid.UUID:
    _, r = client.request("CreateTopics", 7, {"topics": [{"name": name, "num_partitions": partitions,
                                                          "replication_factor": 1, "assignments": [],
                                                          "configs": []}],
                                              "timeout_ms": 10000, "validate_only": False})
    assert r.topics[0].error_code in (E.NONE, E.TOPIC_ALREADY_EXISTS), r.topics[0]
    _, m = client.request("Metadata", 12, {"topics": [{"name": name, "topic_id": NO_ID}],
                                           "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": False})
    return m.topics[0].topic_id


def produce(client: RawClient, topic: str, partition: int, version: int = 11):
    from kafkamock.records import encode_batch

    data = encode_batch([{"key": b"k", "value": b"v", "timestamp": TS}])
    _, r = client.request("Produce", version, {"transactional_id": None, "acks": -1, "timeout_ms": 10000,
                                               "topic_data": [{"name": topic, "partition_data": [
                                                   {"index": partition, "records": data}]}]})
    return r.responses[0].partition_responses[0]


def answered_meanwhile(broker, send) -> float:
    """Send a request with ``send`` (its answer not awaited) and time another connection's ApiVersions meanwhile."""
    with RawClient(broker.bootstrap) as other:
        other.request("ApiVersions", 3, {"client_software_name": "probe", "client_software_version": "1"})
        send()
        started = time.monotonic()
        other.request("ApiVersions", 3, {"client_software_name": "probe", "client_software_version": "1"})
        return time.monotonic() - started


# -- 1. a regular expression that would backtrack for ever -----------------------------------------------------------

def test_a_catastrophic_topic_regex_holds_no_other_client(broker):
    """``(a+)+b`` against a topic named 'a' x 249 took a backtracking engine minutes; RE2 takes microseconds, and the
    regex is still evaluated: ``(a+)+`` (another group: Kafka resolves a group's new regexes at most every 10 s)
    matches the topic and the member is assigned it."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "a" * 249)

        def heartbeat(group: str, regex: str, member_id: str, epoch: int = 0) -> None:
            client.send("ConsumerGroupHeartbeat", 1, {
                "group_id": group, "member_id": member_id, "member_epoch": epoch, "instance_id": None,
                "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": None,
                "subscribed_topic_regex": regex, "server_assignor": None, "topic_partitions": []})

        for group in ("redos", "redos-match"):
            client.request("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": [group]})
        assert answered_meanwhile(broker, lambda: heartbeat("redos", "(a+)+b", uuid.uuid4().hex[:22])) \
            < ANSWER_WITHIN_S
        first = client.receive("ConsumerGroupHeartbeat", 1)[1]
        assert first.error_code == E.NONE and first.member_epoch >= 1
        member, epoch, assigned = uuid.uuid4().hex[:22], 0, []
        deadline = time.monotonic() + 20
        while not assigned and time.monotonic() < deadline:
            heartbeat("redos-match", "(a+)+", member, epoch)
            answer = client.receive("ConsumerGroupHeartbeat", 1)[1]
            assert answer.error_code == E.NONE, answer
            epoch = answer.member_epoch
            assigned = answer.assignment.topic_partitions if answer.assignment else []
        assert [p.partitions for p in assigned] == [[0]]


def test_a_catastrophic_transactional_id_pattern_holds_no_other_client(broker):
    with RawClient(broker.bootstrap) as client:
        tid = "a" * 249
        client.request("FindCoordinator", 4, {"key_type": 1, "coordinator_keys": [tid]})
        _, init = client.request("InitProducerId", 5, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                                       "producer_id": -1, "producer_epoch": -1})
        assert init.error_code == E.NONE

        def listing(pattern: str):
            return {"state_filters": [], "producer_id_filters": [], "duration_filter": -1,
                    "transactional_id_pattern": pattern}
        took = answered_meanwhile(broker, lambda: client.send("ListTransactions", 2, listing("(a+)+b")))
        assert took < ANSWER_WITHIN_S
        assert client.receive("ListTransactions", 2)[1].transaction_states == []
        _, matched = client.request("ListTransactions", 2, listing("(a+)+"))
        assert [t.transactional_id for t in matched.transaction_states] == [tid]
        _, refused = client.request("ListTransactions", 2, listing("(a)\\1"))
        assert refused.error_code == E.INVALID_REGULAR_EXPRESSION


# -- 2. a client string quoted back in an error message --------------------------------------------------------------

@pytest.mark.parametrize("version", [4, 7])
def test_a_32767_character_config_name_is_answered(broker, version):
    """CreateTopics quotes an unknown config name in its message; at 32767 characters (Kafka's limit) plus the
    message's words the response cannot be serialized. Kafka then answers the request's error response,
    UNKNOWN_SERVER_ERROR (tests/differential/test_hostile.py); so does kafkamock, with a WARNING, and the
    connection stays open."""
    with RawClient(broker.bootstrap) as client:
        _, r = client.request("CreateTopics", version, {"topics": [
            {"name": "long-config", "num_partitions": 1, "replication_factor": 1, "assignments": [],
             "configs": [{"name": LONG, "value": "1"}]}], "timeout_ms": 10000, "validate_only": False})
        assert (r.topics[0].name, r.topics[0].error_code, r.topics[0].error_message) == (
            "long-config", E.UNKNOWN_SERVER_ERROR, None)
        _, again = client.request("CreateTopics", version, {"topics": [
            {"name": "long-config", "num_partitions": 1, "replication_factor": 1, "assignments": [],
             "configs": [{"name": "x" * 40, "value": "1"}]}], "timeout_ms": 10000, "validate_only": False})
        assert again.topics[0].error_code == E.INVALID_CONFIG
    assert "cannot be encoded" in broker.log()


def test_every_api_answers_32767_character_names(broker):
    """The other places a client string is quoted: each answers with an error code, none closes the connection
    (DescribeClientQuotas included, which Kafka 4.3.1 leaves unanswered)."""
    with RawClient(broker.bootstrap) as client:
        client.request("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": ["long-strings"]})
        _, r = client.request("DescribeGroups", 5, {"groups": [LONG], "include_authorized_operations": False})
        assert r.groups[0].group_id == LONG
        _, r = client.request("ConsumerGroupHeartbeat", 1, {
            "group_id": "long-strings", "member_id": uuid.uuid4().hex[:22], "member_epoch": 0, "instance_id": None,
            "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"],
            "subscribed_topic_regex": None, "server_assignor": LONG, "topic_partitions": []})
        assert (r.error_code, r.error_message) == (E.UNKNOWN_SERVER_ERROR, None)
        _, r = client.request("ShareGroupHeartbeat", 1, {"group_id": LONG, "member_id": LONG, "member_epoch": 5,
                                                         "rack_id": None, "subscribed_topic_names": None})
        assert r.error_code != E.NONE
        _, r = client.request("DescribeClientQuotas", 1, {"components": [
            {"entity_type": LONG, "match_type": 1, "match": None}], "strict": False})
        assert r.error_code == E.UNKNOWN_SERVER_ERROR
        _, r = client.request("IncrementalAlterConfigs", 1, {"resources": [
            {"resource_type": 2, "resource_name": LONG, "configs": [{"name": LONG, "config_operation": 0,
                                                                   "value": "1"}]}], "validate_only": False})
        assert r.responses[0].error_code != E.NONE


# -- 3. a partition index below zero ------------------------------------------------------------------------------

@pytest.mark.parametrize("partition", [-1, -2, -(2 ** 31)])
@pytest.mark.parametrize("version", [4, 12, 17])
def test_fetch_of_a_negative_partition_is_unknown(broker, version, partition):
    """Not an IndexError, and -1 is not the last partition (Python's negative index)."""
    with RawClient(broker.bootstrap) as client:
        topic_id = create_topic(client, "negative", 2)
        assert produce(client, "negative", 1).error_code == E.NONE
        by_id = version >= 13
        _, r = client.request("Fetch", version, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic": "" if by_id else "negative", "topic_id": topic_id if by_id else NO_ID,
                        "partitions": [{"partition": partition, "current_leader_epoch": -1, "fetch_offset": 0,
                                        "last_fetched_epoch": -1, "log_start_offset": -1,
                                        "partition_max_bytes": 1 << 20}]}]})
        p = r.responses[0].partitions[0]
        assert (p.partition_index, p.error_code, p.records or b"") == (partition, E.UNKNOWN_TOPIC_OR_PARTITION, b"")
        assert produce(client, "negative", partition).error_code == E.UNKNOWN_TOPIC_OR_PARTITION


# -- 4. writes to internal topics -------------------------------------------------------------------------------------

@pytest.mark.parametrize("internal", ["__consumer_offsets", "__transaction_state"])
def test_produce_to_an_internal_topic_is_invalid_topic(broker, internal):
    with RawClient(broker.bootstrap) as client:
        client.request("FindCoordinator", 4, {"key_type": 0 if internal == "__consumer_offsets" else 1,
                                              "coordinator_keys": ["internal-writes"]})
        answer = produce(client, internal, 0)
        assert (answer.error_code, answer.base_offset, answer.error_message) == (E.INVALID_TOPIC_EXCEPTION, -1, None)


# -- 7. share-group offset APIs on a classic group ------------------------------------------------------------------

def test_share_group_offset_apis_on_a_classic_group_are_group_id_not_found(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "classic-offsets")
        client.request("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": ["classic-g"]})
        _, c = client.request("OffsetCommit", 9, {
            "group_id": "classic-g", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": "classic-offsets", "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                                   "committed_leader_epoch": -1,
                                                                   "committed_metadata": ""}]}]})
        assert c.topics[0].partitions[0].error_code == E.NONE
        _, alter = client.request("AlterShareGroupOffsets", 0, {"group_id": "classic-g", "topics": [
            {"topic_name": "classic-offsets", "partitions": [{"partition_index": 0, "start_offset": 0}]}]})
        _, delete = client.request("DeleteShareGroupOffsets", 0, {"group_id": "classic-g", "topics": [
            {"topic_name": "classic-offsets"}]})
        assert (alter.error_code, delete.error_code) == (E.GROUP_ID_NOT_FOUND, E.GROUP_ID_NOT_FOUND)
        assert "not a share group" in alter.error_message


# -- 6. deleting __consumer_offsets -------------------------------------------------------------------------------

def test_deleting_consumer_offsets_forgets_the_offsets_now_and_after_a_restart(broker):
    """The offsets go with the log that held them: OffsetFetch finds none at once, and none after a restart (the
    memory and the disk agree); the group coordinator works on the topic created again."""
    def fetched(client) -> int:
        client.request("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": ["doomed"]})
        _, r = client.request("OffsetFetch", 7, {"group_id": "doomed", "topics": None, "require_stable": False})
        assert r.error_code == E.NONE
        return {p.partition_index: p.committed_offset for t in r.topics for p in t.partitions}.get(0, -1)

    def commit(client, offset: int) -> None:
        _, c = client.request("OffsetCommit", 9, {
            "group_id": "doomed", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": "kept", "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                        "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
        assert c.topics[0].partitions[0].error_code == E.NONE

    with RawClient(broker.bootstrap) as client:
        create_topic(client, "kept")
        client.request("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": ["doomed"]})
        commit(client, 7)
        assert fetched(client) == 7
        _, d = client.request("DeleteTopics", 6, {"topics": [{"name": "__consumer_offsets", "topic_id": NO_ID}],
                                                  "timeout_ms": 10000})
        assert d.responses[0].error_code == E.NONE
        assert fetched(client) == -1
        commit(client, 3)                   # on the topic created again
    broker.stop()
    broker.start()
    with RawClient(broker.bootstrap) as client:
        assert fetched(client) == 3


def test_the_broker_restarts_clean_after_the_hostile_round(broker):
    """Everything above was refused or carried out whole: a restart on the same data replays without a warning
    about junk in an internal topic. A partition directory the metadata does not name (a crash between making it
    and writing the metadata) is a stray log, removed: the partition made later under that name starts empty."""
    broker.stop()
    stray = broker.data_dir / "negative-2"
    stray.mkdir()
    (stray / "partition.metadata").write_text((broker.data_dir / "negative-0" / "partition.metadata").read_text())
    (stray / f"{0:020d}.log").write_bytes((broker.data_dir / "negative-0" / f"{0:020d}.log").read_bytes())
    start = len(broker.log())
    broker.start()
    replay = broker.log()[start:]
    assert "record skipped" not in replay and "unreadable batch" not in replay, replay[-2000:]
    assert "negative-2 is in no topic's metadata: a stray log, removed" in replay
    assert not stray.exists()
    with RawClient(broker.bootstrap) as client:
        assert produce(client, "negative", 0).error_code == E.NONE
        _, grown = client.request("CreatePartitions", 3, {"topics": [{"name": "negative", "count": 3,
                                                                      "assignments": None}],
                                                          "timeout_ms": 10000, "validate_only": False})
        assert grown.results[0].error_code == E.NONE
        _, listed = client.request("ListOffsets", 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": "negative", "partitions": [{"partition_index": 2, "current_leader_epoch": -1,
                                                 "timestamp": -1}]}]})
        assert listed.topics[0].partitions[0].offset == 0


def test_another_connection_is_answered_while_one_waits(broker):
    """The yardstick of the tests above: a long poll parked in the broker does not hold other connections."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "idle")
        sent = threading.Event()

        def long_poll() -> None:
            client.send("Fetch", 12, {
                "replica_id": -1, "max_wait_ms": 3000, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
                "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
                "topics": [{"topic": "idle", "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                                             "fetch_offset": 0, "last_fetched_epoch": -1,
                                                             "log_start_offset": -1,
                                                             "partition_max_bytes": 1 << 20}]}]})
            sent.set()
        assert answered_meanwhile(broker, long_poll) < ANSWER_WITHIN_S
        assert sent.is_set()
        assert client.receive("Fetch", 12)[1].responses[0].partitions[0].error_code == E.NONE
