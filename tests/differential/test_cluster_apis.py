"""The cluster-operations APIs side by side: DescribeLogDirs, AlterReplicaLogDirs, ElectLeaders,
Alter/ListPartitionReassignments, DescribeQuorum, UpdateFeatures, UnregisterBroker, ListConfigResources and
Add/RemoveRaftVoter, and what their changes do to Metadata afterwards.

The brokers are shared, so a scenario only looks at its own topics and groups; what it changes cluster-wide it
changes only where nothing else can notice (validate-only feature updates, unknown brokers), or on a pair of its
own (``OWN_PAIR``: feature levels that change for real, a running broker unregistered). Kafka applies a change on
its controller and the brokers learn it a moment later, so a scenario waits until Metadata shows it.
"""

from __future__ import annotations

import uuid

import pytest

NO_ID = uuid.UUID(int=0)
PREFERRED, UNCLEAN = 0, 1
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
METADATA_PARTITION = [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]
# Pairs of their own (a setting that differs from the shared pairs' only in name): one whose feature levels
# change, one whose only broker is unregistered.
FEATURES_PAIR = {"log.retention.check.interval.ms": 300001}
UNREGISTER_PAIR = {"log.retention.check.interval.ms": 300002}


# -- helpers --------------------------------------------------------------------------------------------------

def metadata(run, topic: str, node: int = 0) -> list[list]:
    """[leader, leader epoch, replicas, ISR] of each partition, as node ``node`` knows them."""
    md = run.call("Metadata", 12, {"topics": [{"name": topic, "topic_id": NO_ID}], "allow_auto_topic_creation": False,
                                   "include_topic_authorized_operations": False}, node=node, see=False)
    return [[p.leader_id, p.leader_epoch, list(p.replica_nodes), list(p.isr_nodes)] for p in md.topics[0].partitions]


def settled(run, topic: str, check) -> list[list]:
    """Metadata once every node shows what ``check`` (a function of one node's view) waits for."""
    def probe():
        views = [metadata(run, topic, node) for node in range(len(run.target.addresses))]
        return views[0] if all(v == views[0] for v in views) and check(views[0]) else None

    return run.until(f"{topic}'s metadata", probe)


def ongoing(run) -> list:
    """The reassignments in progress (all of them)."""
    return run.call("ListPartitionReassignments", 0, {"timeout_ms": 10000, "topics": None}, see=False).topics


def create(run, topic: str, assignments: list[list[int]]) -> None:
    r = run.call("CreateTopics", 7, {"topics": [{
        "name": topic, "num_partitions": -1, "replication_factor": -1, "configs": [],
        "assignments": [{"partition_index": i, "broker_ids": a} for i, a in enumerate(assignments)]}],
        "timeout_ms": 30000, "validate_only": False}, see=False)
    assert r.topics[0].error_code == 0, r.topics[0]
    run.wait_for_leaders(topic, len(assignments))


def reassign(run, topic: str, parts, *, version: int = 0, allow: bool = True, label: str = "reassign"):
    body = {"timeout_ms": 30000, "topics": [{"name": topic, "partitions": [
        {"partition_index": i, "replicas": r} for i, r in parts]}]}
    if version >= 1:
        body["allow_replication_factor_change"] = allow
    return run.call("AlterPartitionReassignments", version, body, label=label)


def reassigned(run, topic: str, targets: list[list[int]]) -> list[list]:
    """Metadata once the reassignments ended: each partition on its target replicas, all of them in sync."""
    def done(view):
        return all(p[2] == t and sorted(p[3]) == sorted(t) for p, t in zip(view, targets, strict=True))

    run.until("the reassignments to end", lambda: not ongoing(run))
    return settled(run, topic, done)


def elect(run, topics, election_type: int = PREFERRED, version: int = 2, label: str = "elect"):
    body = {"topic_partitions": topics, "timeout_ms": 30000}
    if version >= 1:
        body["election_type"] = election_type
    return run.call("ElectLeaders", version, body, label=label)


def produce(run, topic: str, partition: int, values: list[bytes]) -> None:
    leader = metadata(run, topic)[partition][0]
    r = run.produce(topic, partition, [{"key": None, "value": v, "timestamp": 1_700_000_000_000} for v in values],
                    see=False, node=leader - 1)
    assert r.responses[0].partition_responses[0].error_code == 0


def api_versions(run, node: int = 0):
    return run.call("ApiVersions", 4, {"client_software_name": "differential", "client_software_version": "1"},
                    node=node, see=False)


def finalized(run) -> dict:
    return {f.name: f.max_version_level for f in api_versions(run).finalized_features}


def update_features(run, version: int, updates, *, validate_only: bool = False, label: str = "UpdateFeatures"):
    body = {"timeout_ms": 30000, "feature_updates": [
        {"feature": f, "max_version_level": level, **({"upgrade_type": t} if version >= 1 else {})}
        for f, level, t in updates]}
    if version >= 1:
        body["validate_only"] = validate_only
    return run.call("UpdateFeatures", version, body, label=label)


def cluster_id(run) -> str:
    return run.call("DescribeCluster", 1, {"include_cluster_authorized_operations": False, "endpoint_type": 1},
                    see=False).cluster_id


def log_dir_config(run, node: int = 0) -> str:
    """The node's log directory from its own configs: ``log.dirs``, else ``log.dir``."""
    r = run.call("DescribeConfigs", 4, {"resources": [{"resource_type": 4, "resource_name": str(node + 1),
                                                        "configuration_keys": ["log.dirs", "log.dir"]}],
                                        "include_synonyms": False, "include_documentation": False},
                 node=node, see=False)
    values = {c.name: c.value for c in r.results[0].configs}
    return (values.get("log.dirs") or values.get("log.dir") or "").split(",")[0]


def log_dirs_view(run, answer, topics: set[str], node: int = 0) -> dict:
    """A DescribeLogDirs answer: the scenario's own topics (sorted; Kafka's order is its hash maps'), whether the
    directory is the node's configured one, and whether the volume's space is known."""
    view = {"error_code": answer.error_code, "dirs": len(answer.results)}
    for i, d in enumerate(answer.results):
        view[f"dir{i}"] = {
            "error_code": d.error_code, "is the configured log dir": d.log_dir == log_dir_config(run, node),
            "topics": sorted([t.name, sorted([[p.partition_index, p.partition_size, p.offset_lag, p.is_future_key]
                                              for p in t.partitions])] for t in d.topics if t.name in topics),
            "space known": [d.total_bytes > 0, d.usable_bytes >= 0], "is_cordoned": d.is_cordoned}
    return view


# -- DescribeLogDirs -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_describe_log_dirs(differ, request, version):
    """The node's one directory with the scenario's replicas: sizes of what was produced, no lag; partitions that
    do not exist are simply absent."""
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, 2)
        produce(run, topic, 0, [b"a" * 100, b"b"])
        produce(run, topic, 0, [b"c"])
        answer = run.call("DescribeLogDirs", version, {"topics": [
            {"topic": topic, "partitions": [0, 1, 9]}, {"topic": run.name("missing"), "partitions": [0]}]}, see=False)
        run.see("answer", log_dirs_view(run, answer, {topic, run.name("missing")}))

    differ.check(request.node.name, scenario)


def test_describe_log_dirs_all_replicas(differ, request):
    """``topics`` null: every replica the node holds, the scenario's among them."""
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, 3)
        produce(run, topic, 2, [b"x" * 10])
        answer = run.call("DescribeLogDirs", 4, {"topics": None}, see=False)
        run.see("answer", log_dirs_view(run, answer, {topic}))
        run.see("empty request", log_dirs_view(run, run.call("DescribeLogDirs", 4, {"topics": []}, see=False), {topic}))

    differ.check(request.node.name, scenario)


def test_describe_log_dirs_per_node(differ, request):
    """Each node of three reports the replicas it holds, leader or follower, with the same sizes."""
    def scenario(run):
        topic = run.name()
        create(run, topic, [[1, 2], [2, 3], [3, 1]])
        produce(run, topic, 0, [b"one", b"two"])
        produce(run, topic, 1, [b"three"])
        for node in range(3):
            answer = run.call("DescribeLogDirs", 4, {"topics": [{"topic": topic, "partitions": [0, 1, 2]}]},
                              node=node, see=False)
            run.see(f"node {node + 1}", log_dirs_view(run, answer, {topic}, node))

    differ.check(request.node.name, scenario, nodes=3)


# -- AlterReplicaLogDirs -------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [1, 2])
def test_alter_replica_log_dirs(differ, request, version):
    """Each partition judged: hosted here (NONE, nothing to move: one directory), hosted elsewhere, unknown,
    a name too long for the future log's directory, a directory that is not this node's, a relative path; the
    answer in Kafka's hash-map order."""
    def scenario(run):
        topic, other = run.name("a"), run.name("b")
        create(run, topic, [[1, 2], [2, 3], [3, 1]])
        create(run, other, [[2]])
        path = run.call("DescribeLogDirs", 4, {"topics": []}, see=False).results[0].log_dir
        run.call("AlterReplicaLogDirs", version, {"dirs": [
            {"path": path, "topics": [{"name": topic, "partitions": [0, 1, 2, 7]}, {"name": other, "partitions": [0]},
                                      {"name": run.name("missing"), "partitions": [0]},
                                      {"name": "x" * 230, "partitions": [0]}]},
            {"path": "/no/such/dir", "topics": [{"name": topic, "partitions": [3]}]},
            {"path": "relative/dir", "topics": [{"name": topic, "partitions": [4]}]},
            {"path": path + "/", "topics": [{"name": topic, "partitions": [5]}]}]})
        run.see("replicas unchanged", metadata(run, topic))

    differ.check(request.node.name, scenario, nodes=3)


def test_alter_replica_log_dirs_last_directory_wins(differ, request):
    """A partition named under two directories is judged against the last one."""
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, 1)
        path = run.call("DescribeLogDirs", 4, {"topics": []}, see=False).results[0].log_dir
        run.call("AlterReplicaLogDirs", 2, {"dirs": [
            {"path": path, "topics": [{"name": topic, "partitions": [0]}]},
            {"path": "/no/such/dir", "topics": [{"name": topic, "partitions": [0]}]}]}, label="elsewhere last")
        run.call("AlterReplicaLogDirs", 2, {"dirs": [
            {"path": "/no/such/dir", "topics": [{"name": topic, "partitions": [0]}]},
            {"path": path, "topics": [{"name": topic, "partitions": [0]}]}]}, label="here last")
        run.call("AlterReplicaLogDirs", 2, {"dirs": []}, label="nothing")

    differ.check(request.node.name, scenario)


# -- ElectLeaders --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [0, 1, 2])
def test_elect_leaders_not_needed_and_unknown(differ, request, version):
    def scenario(run):
        topic = run.name()
        create(run, topic, [[1, 2], [2, 3]])
        elect(run, [{"topic": topic, "partitions": [0, 1, 7, -1]}, {"topic": run.name("missing"), "partitions": [0]}],
              version=version)
        run.see("metadata", metadata(run, topic))

    differ.check(request.node.name, scenario, nodes=3)


def test_elect_preferred_leader(differ, request):
    """A reassignment that only reorders replicas leaves the leader where it was; a preferred election then
    hands leadership to the new first replica, with one epoch bump."""
    def scenario(run):
        topic = run.name()
        create(run, topic, [[3, 1, 2], [1, 2, 3]])
        reassign(run, topic, [(0, [1, 3, 2])])
        run.see("after reorder", reassigned(run, topic, [[1, 3, 2], [1, 2, 3]]))
        elect(run, [{"topic": topic, "partitions": [0, 1]}])
        run.see("after election", settled(run, topic, lambda view: view[0][0] == 1))
        elect(run, [{"topic": topic, "partitions": [0]}], label="again")

    differ.check(request.node.name, scenario, nodes=3)


def test_elect_the_same_partition_twice(differ, request):
    """Both entries are judged against the partition as it was: two elections, two epoch bumps."""
    def scenario(run):
        topic = run.name()
        create(run, topic, [[2, 3]])
        reassign(run, topic, [(0, [3, 2])])
        reassigned(run, topic, [[3, 2]])
        elect(run, [{"topic": topic, "partitions": [0, 0]}])
        run.see("metadata", settled(run, topic, lambda view: view[0][0] == 3 and view[0][1] == 2))

    differ.check(request.node.name, scenario, nodes=3)


def test_elect_every_partition(differ, request):
    """A null partition list: every partition of every topic; only those that needed an election are listed."""
    def scenario(run):
        topic, calm = run.name("moved"), run.name("calm")
        create(run, topic, [[1, 2], [2, 3], [3, 1]])
        create(run, calm, [[2, 1]])
        reassign(run, topic, [(0, [2, 1]), (2, [1, 3])])
        reassigned(run, topic, [[2, 1], [2, 3], [1, 3]])
        answer = run.call("ElectLeaders", 2, {"topic_partitions": None, "timeout_ms": 30000,
                                              "election_type": PREFERRED}, see=False)
        run.see("error", answer.error_code)
        run.see("own topics", sorted([r.topic, [[p.partition_id, p.error_code, p.error_message]
                                                for p in r.partition_result]]
                                     for r in answer.replica_election_results if r.topic in (topic, calm)))
        run.see("metadata", settled(run, topic, lambda view: [p[0] for p in view] == [2, 2, 1]))

    differ.check(request.node.name, scenario, nodes=3)


@pytest.mark.parametrize("case", ["unclean with a leader", "unknown election type", "empty list",
                                  "unknown type, empty list", "unknown type, all partitions"])
def test_elect_leaders_requests(differ, request, case):
    def scenario(run):
        topic = run.name()
        create(run, topic, [[1, 2]])
        if case == "unclean with a leader":
            elect(run, [{"topic": topic, "partitions": [0]}], UNCLEAN)
        elif case == "unknown election type":
            elect(run, [{"topic": topic, "partitions": [0, 1]}, {"topic": run.name("m"), "partitions": [3]}], 2)
        elif case == "empty list":
            elect(run, [], PREFERRED)
        elif case == "unknown type, empty list":
            elect(run, [], 5)
        else:
            elect(run, None, 5)

    differ.check(request.node.name, scenario, nodes=3)


# -- AlterPartitionReassignments / ListPartitionReassignments -------------------------------------------------

@pytest.mark.parametrize("case", ["reorder", "shrink away the leader", "grow", "replace every replica",
                                  "move the leader's replica"])
def test_reassign_partition(differ, request, case):
    """The reassignment ends with the target replicas all in sync; Metadata shows the leader and leader epoch
    Kafka's controller gives them (a leader that is removed hands over; removing a replica bumps the epoch)."""
    start, target = {
        "reorder": ([3, 1, 2], [1, 2, 3]), "shrink away the leader": ([1, 2, 3], [2, 3]), "grow": ([2], [2, 3, 1]),
        "replace every replica": ([1, 2], [3]), "move the leader's replica": ([1, 2], [3, 2]),
    }[case]

    def scenario(run):
        topic = run.name()
        create(run, topic, [start])
        reassign(run, topic, [(0, target)])
        run.see("metadata", reassigned(run, topic, [target]))
        run.see("listed", ongoing(run) == [])

    differ.check(request.node.name, scenario, nodes=3)


def test_reassignment_keeps_the_data(differ, request):
    """Records produced before a move are fetched from the new leader, and the new replica's log has their
    size."""
    def scenario(run):
        topic = run.name()
        create(run, topic, [[1]])
        produce(run, topic, 0, [b"before-1", b"before-2"])
        reassign(run, topic, [(0, [2])])
        view = reassigned(run, topic, [[2]])
        run.see("metadata", view)
        fetched = run.call("Fetch", 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1_000_000, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [], "topics": [
                {"topic": topic, "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                                 "last_fetched_epoch": -1, "log_start_offset": -1,
                                                 "partition_max_bytes": 1_000_000}]}]}, node=1, see=False)
        part = fetched.responses[0].partitions[0]
        run.see("fetched from the new leader", {"error_code": part.error_code, "high_watermark": part.high_watermark,
                                                "records": part.records})
        logs = run.call("DescribeLogDirs", 4, {"topics": [{"topic": topic, "partitions": [0]}]}, node=1, see=False)
        run.see("new replica's log", log_dirs_view(run, logs, {topic}, node=1))

    differ.check(request.node.name, scenario, nodes=3)


def test_reassign_several_partitions(differ, request):
    def scenario(run):
        topic = run.name()
        create(run, topic, [[1, 2], [2, 3], [3, 1]])
        reassign(run, topic, [(0, [2, 3]), (1, [1]), (2, [3, 1, 2])])
        run.see("metadata", reassigned(run, topic, [[2, 3], [1], [3, 1, 2]]))

    differ.check(request.node.name, scenario, nodes=3)


@pytest.mark.parametrize("case", ["empty replicas", "a broker twice", "unknown broker", "unknown partition",
                                  "negative partition", "unknown topic", "cancel with nothing in progress"])
def test_reassign_refused(differ, request, case):
    def scenario(run):
        topic = run.name()
        create(run, topic, [[1, 2]])
        parts = {"empty replicas": [(0, [])], "a broker twice": [(0, [1, 1])], "unknown broker": [(0, [1, 9])],
                 "unknown partition": [(5, [1])], "negative partition": [(-1, [1])], "unknown topic": [(0, [1])],
                 "cancel with nothing in progress": [(0, None)]}[case]
        reassign(run, run.name("missing") if case == "unknown topic" else topic, parts)
        run.see("metadata", metadata(run, topic))

    differ.check(request.node.name, scenario, nodes=3)


@pytest.mark.parametrize("target", [[2, 1], [1], [1, 2, 3]])
def test_reassign_without_replication_factor_change(differ, request, target):
    """v1's ``allow_replication_factor_change`` false: only a target of the same size is taken."""
    def scenario(run):
        topic = run.name()
        create(run, topic, [[1, 2]])
        reassign(run, topic, [(0, target)], version=1, allow=False)
        if len(target) == 2:
            run.see("metadata", reassigned(run, topic, [target]))

    differ.check(request.node.name, scenario, nodes=3)


@pytest.mark.parametrize("version", [0, 1])
def test_reassign_nothing(differ, request, version):
    """No topics: Kafka's empty answer; a topic with no partitions: its name and no results."""
    def scenario(run):
        topic = run.name()
        create(run, topic, [[1]])
        body = {"timeout_ms": 30000, "topics": []}
        if version >= 1:
            body["allow_replication_factor_change"] = False
        run.call("AlterPartitionReassignments", version, body, label="no topics")
        run.call("AlterPartitionReassignments", version, {**body, "topics": [{"name": topic, "partitions": []}]},
                 label="no partitions")

    differ.check(request.node.name, scenario, nodes=3)


@pytest.mark.parametrize("case", ["all", "none named", "named", "after a reassignment"])
def test_list_partition_reassignments(differ, request, case):
    def scenario(run):
        topic = run.name()
        create(run, topic, [[1, 2], [2, 3]])
        if case == "after a reassignment":
            reassign(run, topic, [(1, [3, 1])], label="reassign")
            reassigned(run, topic, [[1, 2], [3, 1]])
        topics = {"all": None, "none named": [],
                  "named": [{"name": topic, "partition_indexes": [0, 1, 9]},
                            {"name": run.name("missing"), "partition_indexes": [0]}],
                  "after a reassignment": [{"name": topic, "partition_indexes": [0, 1]}]}[case]
        answer = run.call("ListPartitionReassignments", 0, {"timeout_ms": 10000, "topics": topics}, see=False)
        run.see("error", [answer.error_code, answer.error_message])
        run.see("own topics", [t for t in answer.topics if t.name == topic])

    differ.check(request.node.name, scenario, nodes=3)


# -- DescribeQuorum ------------------------------------------------------------------------------------------

def quorum_view(run, answer) -> dict:
    """What a DescribeQuorum answer says about the quorum, without the metadata log's offsets and fetch times
    (they move with every record), the leader's id (Kafka elects one; kafkamock's is its first node) or its
    epoch's exact value (an election round more on a busy machine, even with one voter, moves Kafka's): whether a
    voter leads in some epoch, who votes and observes."""
    view = {"error": [answer.error_code, answer.error_message], "topics": len(answer.topics)}
    for t in answer.topics:
        for p in t.partitions:
            view[f"{t.topic_name}-{p.partition_index}"] = {
                "error": [p.error_code, p.error_message],
                "leader is a voter": p.leader_id in [v.replica_id for v in p.current_voters],
                "leader epoch": p.leader_epoch >= 1,
                "high watermark positive": p.high_watermark > 0,
                "voters": [[v.replica_id, str(v.replica_directory_id), v.log_end_offset > 0,
                            v.last_fetch_timestamp > 0 or v.last_fetch_timestamp,
                            v.last_caught_up_timestamp > 0 or v.last_caught_up_timestamp] for v in p.current_voters],
                "observers": p.observers}
    view["nodes"] = [[n.node_id, [[x.name, x.host] for x in n.listeners]] for n in answer.nodes]
    return view


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_quorum(differ, request, version):
    def scenario(run):
        run.see("quorum", quorum_view(run, run.call("DescribeQuorum", version, {"topics": METADATA_PARTITION},
                                                    see=False)))

    differ.check(request.node.name, scenario)


def test_describe_quorum_three_voters(differ, request):
    def scenario(run):
        for node in range(3):
            answer = run.call("DescribeQuorum", 2, {"topics": METADATA_PARTITION}, node=node, see=False)
            run.see(f"from node {node + 1}", quorum_view(run, answer))

    differ.check(request.node.name, scenario, nodes=3)


@pytest.mark.parametrize("case", ["another topic", "another partition", "no topics", "partition 0 twice",
                                  "two topics"])
def test_describe_quorum_wrong_partition(differ, request, case):
    topics = {
        "another topic": [{"topic_name": "foo", "partitions": [{"partition_index": 0}]}],
        "another partition": [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 1}]}],
        "no topics": [],
        "partition 0 twice": [{"topic_name": "__cluster_metadata",
                               "partitions": [{"partition_index": 0}, {"partition_index": 0}]}],
        "two topics": METADATA_PARTITION + [{"topic_name": "foo", "partitions": [{"partition_index": 0}]}],
    }[case]

    def scenario(run):
        run.call("DescribeQuorum", 2, {"topics": topics})

    differ.check(request.node.name, scenario)


# -- UpdateFeatures ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    "unknown feature", "unknown feature at level 0", "above the supported range", "downgrade as an upgrade",
    "negative level", "unknown upgrade type", "upgrade as a downgrade", "metadata.version safe downgrade",
    "metadata.version unsafe downgrade", "metadata.version above the range", "metadata.version below the range",
    "kraft.version upgrade", "first error in hash order", "v0 downgrade",
])
def test_update_features_refused(differ, request, case):
    """Refusals (validate-only where the version has it, so a slip would change nothing): the first invalid
    feature fails the whole update, and the finalized levels stay."""
    updates = {
        "unknown feature": [("foo.version", 1, UPGRADE)],
        "unknown feature at level 0": [("foo.version", 0, UPGRADE)],
        "above the supported range": [("transaction.version", 3, UPGRADE)],
        "downgrade as an upgrade": [("transaction.version", 1, UPGRADE)],
        "negative level": [("transaction.version", -1, SAFE_DOWNGRADE)],
        "unknown upgrade type": [("transaction.version", 1, 5)],
        "upgrade as a downgrade": [("group.version", 2, SAFE_DOWNGRADE)],
        "metadata.version safe downgrade": [("metadata.version", 29, SAFE_DOWNGRADE)],
        "metadata.version unsafe downgrade": [("metadata.version", 27, UNSAFE_DOWNGRADE)],
        "metadata.version above the range": [("metadata.version", 31, UPGRADE)],
        "metadata.version below the range": [("metadata.version", 6, SAFE_DOWNGRADE)],
        "kraft.version upgrade": [("kraft.version", 1, UPGRADE)],
        "first error in hash order": [("transaction.version", 7, UPGRADE), ("group.version", 5, UPGRADE)],
        "v0 downgrade": [("transaction.version", 1, SAFE_DOWNGRADE)],
    }[case]

    def scenario(run):
        before = finalized(run)
        if case == "v0 downgrade":
            run.call("UpdateFeatures", 0, {"timeout_ms": 30000, "feature_updates": [
                {"feature": "transaction.version", "max_version_level": 1, "allow_downgrade": True}]})
        else:
            update_features(run, 1, updates, validate_only=True)
        run.see("levels unchanged", finalized(run) == before)

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_update_features_accepted(differ, request, version):
    """Valid updates (only validated at v1+; v0 sets the levels the cluster already has): per-feature results
    at v0-1, none at v2."""
    def scenario(run):
        before = finalized(run)
        updates = [("transaction.version", 2, UPGRADE), ("group.version", 1, UPGRADE), ("kraft.version", 0, UPGRADE)]
        if version >= 1:
            updates = [("transaction.version", 1, SAFE_DOWNGRADE), ("share.version", 0, UNSAFE_DOWNGRADE),
                       ("group.version", 1, UPGRADE), ("kraft.version", 0, SAFE_DOWNGRADE)]
        update_features(run, version, updates, validate_only=True)
        update_features(run, version, [], validate_only=True, label="nothing")
        run.see("levels unchanged", finalized(run) == before)

    differ.check(request.node.name, scenario)


def test_update_features_take_effect(differ, request):
    """On a pair of its own: transaction.version, share.version and group.version go down, ApiVersions lists the
    new levels under a new epoch, share-group and consumer-group heartbeats are refused; back up, they work."""
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, 1)
        versions = api_versions(run)
        epoch = versions.finalized_features_epoch
        update_features(run, 2, [("transaction.version", 1, SAFE_DOWNGRADE), ("share.version", 0, SAFE_DOWNGRADE),
                                 ("group.version", 0, SAFE_DOWNGRADE)], label="down")
        try:
            run.until("the new levels", lambda: finalized(run).get("transaction.version") == 1)
            versions = api_versions(run)
            run.see("finalized", {f.name: f.max_version_level for f in versions.finalized_features
                                  if f.name != "streams.version"})
            run.see("new epoch", versions.finalized_features_epoch > epoch)
            run.see("share heartbeat", run.call("ShareGroupHeartbeat", 1, {
                "group_id": run.name("sg"), "member_id": uuid.uuid4().hex[:22], "member_epoch": 0, "rack_id": None,
                "subscribed_topic_names": [topic]}, see=False).error_code)
            hb = run.call("ConsumerGroupHeartbeat", 0, {
                "group_id": run.name("cg"), "member_id": "", "member_epoch": 0, "instance_id": None, "rack_id": None,
                "rebalance_timeout_ms": 10000, "subscribed_topic_names": [topic], "server_assignor": None,
                "topic_partitions": []}, see=False)
            run.see("consumer heartbeat", [hb.error_code, hb.error_message])
            run.see("still advertised", sorted(k.api_key for k in versions.api_keys if k.api_key in (68, 76)))
        finally:
            update_features(run, 2, [("transaction.version", 2, UPGRADE), ("share.version", 1, UPGRADE),
                                     ("group.version", 1, UPGRADE)], label="up")
        run.until("the levels back", lambda: finalized(run).get("share.version") == 1)
        group = run.name("sg")

        def joined():
            # FindCoordinator makes __consumer_offsets; Kafka's coordinator then loads its partition (until then
            # NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS)
            run.call("FindCoordinator", 6, {"key_type": 0, "coordinator_keys": [group]}, see=False)
            hb = run.call("ShareGroupHeartbeat", 1, {
                "group_id": group, "member_id": uuid.uuid4().hex[:22], "member_epoch": 0, "rack_id": None,
                "subscribed_topic_names": [topic]}, see=False)
            return None if hb.error_code in (14, 15, 16) else [hb.error_code]

        run.see("share heartbeat after", run.until("the share group's coordinator", joined))

    differ.check(request.node.name, scenario, config=FEATURES_PAIR)


# -- UnregisterBroker ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("broker_id", [7, -1])
def test_unregister_unknown_broker(differ, request, broker_id):
    def scenario(run):
        run.call("UnregisterBroker", 0, {"broker_id": broker_id})

    differ.check(request.node.name, scenario, nodes=3)


def test_unregister_running_broker(differ, request):
    """On a pair of its own: the only broker unregistered keeps answering, but no longer lists itself, leads
    nothing, and is not registered any more."""
    def scenario(run):
        topic = run.name()
        run.create_topic(topic, 1)
        run.call("UnregisterBroker", 0, {"broker_id": 1})
        md = run.until("the broker gone from Metadata", lambda: (lambda r: r if not r.brokers else None)(run.call(
            "Metadata", 12, {"topics": [{"name": topic, "topic_id": NO_ID}], "allow_auto_topic_creation": False,
                             "include_topic_authorized_operations": False}, see=False)))
        run.see("brokers", md.brokers)
        run.see("leader", [p.leader_id for p in md.topics[0].partitions])
        run.see("cluster", run.call("DescribeCluster", 2, {"include_cluster_authorized_operations": False,
                                                           "endpoint_type": 1, "include_fenced_brokers": True},
                                    see=False).brokers)
        run.call("UnregisterBroker", 0, {"broker_id": 1}, label="again")

    differ.check(request.node.name, scenario, config=UNREGISTER_PAIR)


# -- ListConfigResources -------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["v0", "all types", "topics", "brokers and loggers", "groups and client metrics",
                                  "a type twice", "unknown type"])
def test_list_config_resources(differ, request, case):
    """The scenario's own topic and group (with a config of its own) among the resources; brokers by id."""
    def scenario(run):
        topic, group = run.name("t"), run.name("g")
        run.create_topic(topic, 1)
        run.call("IncrementalAlterConfigs", 1, {"resources": [{"resource_type": 32, "resource_name": group, "configs": [
            {"name": "consumer.session.timeout.ms", "config_operation": 0, "value": "50000"}]}],
            "validate_only": False}, see=False)
        # Kafka's brokers learn a group's configs from the controller a moment later
        run.until("the group's configs", lambda: any(r.resource_name == group for r in run.call(
            "ListConfigResources", 1, {"resource_types": [32]}, see=False).config_resources))
        types = {"all types": [], "topics": [2], "brokers and loggers": [4, 8], "groups and client metrics": [32, 16],
                 "a type twice": [2, 2], "unknown type": [1]}.get(case)
        answer = run.call("ListConfigResources", 0 if case == "v0" else 1,
                          {} if case == "v0" else {"resource_types": types}, see=False)
        run.see("error", answer.error_code)
        mine = [[r.resource_name, r.resource_type] for r in answer.config_resources
                if r.resource_type in (4, 8) or r.resource_name in (topic, group)]
        run.see("resources", mine)

    differ.check(request.node.name, scenario)


# -- AddRaftVoter / RemoveRaftVoter --------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["a new voter", "a new voter, v0", "an existing voter", "another cluster id",
                                  "this cluster's id", "no directory id", "negative id", "no default listener",
                                  "three other listeners", "lower-case listener"])
def test_add_raft_voter(differ, request, case):
    """A static quorum (kraft.version 0) cannot change its voters; the request's own faults come first."""
    def scenario(run):
        listeners = {"no default listener": [("foo", "localhost", 9999)],
                     "three other listeners": [("foo", "localhost", 9999), ("BAR", "10.0.0.1", 1), ("baz", "h", 2)],
                     "lower-case listener": [("controller", "localhost", 9999)]}.get(
            case, [("CONTROLLER", "127.0.0.1", 9999)])
        ident = cluster_id(run)
        body = {"cluster_id": {"another cluster id": "bogus", "this cluster's id": ident}.get(case),
                "timeout_ms": 10000, "voter_id": {"an existing voter": 1, "negative id": -1}.get(case, 5),
                "voter_directory_id": NO_ID if case == "no directory id" else uuid.uuid4(),
                "listeners": [{"name": n, "host": h, "port": p} for n, h, p in listeners]}
        version = 0 if case == "a new voter, v0" else 1
        if version >= 1:
            body["ack_when_committed"] = True
        answer = run.call("AddRaftVoter", version, body, see=False)
        run.see("answer", [answer.error_code, (answer.error_message or "").replace(ident, "<cluster id>")])

    differ.check(request.node.name, scenario)


@pytest.mark.parametrize("case", ["an existing voter", "an unknown voter", "another cluster id", "no directory id",
                                  "negative id"])
def test_remove_raft_voter(differ, request, case):
    def scenario(run):
        ident = cluster_id(run)
        answer = run.call("RemoveRaftVoter", 0, {
            "cluster_id": "bogus" if case == "another cluster id" else None,
            "voter_id": {"an unknown voter": 7, "negative id": -1}.get(case, 1),
            "voter_directory_id": NO_ID if case == "no directory id" else uuid.uuid4()}, see=False)
        run.see("answer", [answer.error_code, (answer.error_message or "").replace(ident, "<cluster id>")])
        run.see("quorum unchanged", [v.replica_id for v in run.call(
            "DescribeQuorum", 2, {"topics": METADATA_PARTITION}, see=False).topics[0].partitions[0].current_voters])

    differ.check(request.node.name, scenario)
