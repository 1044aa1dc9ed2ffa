"""Cluster state: the nodes, topics and partitions (replicas, ISR, leader, leader epoch) and their logs.

The cluster has N nodes (N = 1 by default). Every partition has replicas on some of them, one of which leads;
replication itself is emulated (all replicas share one log and are always caught up), so what varies is who
leads and who is in sync: a node that stops leaves the ISR of its partitions and hands their leadership to the
next in-sync replica that is up, with a leader-epoch bump, as KRaft's controller does when a broker is fenced.

``ClusterMetadata.lead`` is the one place that looks a partition up for a request and checks that the node it arrived on
leads it, at the leader epoch the client believes in; every partition handler goes through it.

The controller's partition changes follow KRaft's (ReplicationControlManager, PartitionChangeBuilder): a
reassignment adds its new replicas, which catch up at once when their node is up (Kafka's expanded ISR is sorted),
then completes, dropping the removed replicas; a preferred or unclean election moves leadership. A change that
drops a replica or moves the leader bumps the leader epoch.
"""

from __future__ import annotations

import base64
import functools
import logging
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.java_hash_order import java_hash_order, java_string_hash, topic_partition_hash
from kafkamock.broker.node import Node
from kafkamock.broker.producers import ProducerStates
from kafkamock.storage import PartitionLog

log = logging.getLogger("kafkamock.broker")
LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_LENGTH = 249
NO_LEADER = -1
GROUP_METADATA_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
SHARE_GROUP_STATE_TOPIC = "__share_group_state"
INTERNAL_TOPICS = frozenset({GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC, SHARE_GROUP_STATE_TOPIC})


@dataclass(slots=True)
class Partition:
    topic: str
    index: int
    leader_id: int
    # ``replicas``, ``isr``, ``adding`` and ``removing`` are replaced, never changed in place, so partitions share
    # them: one list for every partition on the same replicas, not two on each of 10,000 partitions.
    replicas: list[int]
    leader_epoch: int = 0
    isr: list[int] = field(default_factory=list)
    log: PartitionLog = field(default_factory=PartitionLog)
    producers: ProducerStates = field(default_factory=ProducerStates)
    # A reassignment in progress (KIP-455): ``replicas`` then holds the target followed by the replicas it removes.
    adding: Sequence[int] = ()
    removing: Sequence[int] = ()

    def __post_init__(self) -> None:
        if not self.isr:
            self.isr = self.replicas

    @property
    def reassigning(self) -> bool:
        return bool(self.adding or self.removing)


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: list[Partition]
    configs: dict[str, Any] = field(default_factory=dict)
    internal: bool = False

    def partition_at(self, index: int) -> Partition | None:
        """The partition a client named by index, or None: the one lookup for a client's index, so that a
        negative one is never read from the end of the list as Python would."""
        return self.partitions[index] if 0 <= index < len(self.partitions) else None


class NotLeader(KafkaError):
    """NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH, with the leader the client should go to (KIP-951)."""

    def __init__(self, code: ErrorCode, partition: Partition, message: str | None = None):
        super().__init__(code, message)
        self.leader_id, self.leader_epoch = partition.leader_id, partition.leader_epoch


def kafka_uuid_string(value: uuid.UUID) -> str:
    """Kafka's Uuid.toString(): URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def parse_kafka_uuid(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


@functools.lru_cache(maxsize=65536)
def partition_for_key(key: str, partitions: int) -> int:
    """Kafka's coordinator partitioning: ``Utils.abs(key.hashCode()) % partitions`` (abs(MIN_VALUE) is 0).
    Cached: every group and transaction request asks it again for the same few ids, and Java's string hash is a
    loop over the id's characters in Python."""
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def coordinator_batches(group_ids: Iterable[str], partitions: int) -> list[list[str]]:
    """Group ids batched by ``__consumer_offsets`` partition in the order Kafka's GroupCoordinatorService walks its
    ``HashMap<TopicPartition, List<String>>`` (describe and delete calls answer in that order)."""
    by_partition: dict[int, list[str]] = {}
    for group_id in group_ids:
        by_partition.setdefault(partition_for_key(group_id, partitions), []).append(group_id)
    order = java_hash_order(by_partition, lambda p: topic_partition_hash((GROUP_METADATA_TOPIC, p)), head_insert=True)
    return [by_partition[p] for p in order]


def invalid_topic_reason(name: str | None) -> str | None:
    """Why a topic name is invalid, in Kafka 4.3's words (Topic.detectInvalidTopic), or None."""
    if not name:
        return "the empty string is not allowed"
    if name in (".", ".."):
        return f"'{name}' is not allowed"
    if len(name) > MAX_TOPIC_LENGTH:
        return f"the length of '{name}' is longer than the max allowed length {MAX_TOPIC_LENGTH}"
    if not LEGAL_TOPIC.match(name):
        return f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    return None


def validate_topic_name(name: str | None) -> None:
    """INVALID_TOPIC_EXCEPTION with Kafka's ``Topic.validate`` message for an invalid name."""
    reason = invalid_topic_reason(name)
    if reason is not None:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic name is invalid: {reason}")


LogOpener = Callable[[Topic, int], PartitionLog]


class ClusterMetadata:
    """Nodes, topics and partitions. ``open_log`` makes a partition's log (the broker wires in its storage);
    ``changed`` is called after every change that must survive a restart (topics, partitions, leaders)."""

    def __init__(self, nodes: list[Node], cluster_id: str | None = None, *, open_log: LogOpener | None = None,
                 changed: Callable[[], None] | None = None):
        self.nodes: dict[int, Node] = {n.node_id: n for n in nodes}
        self.cluster_id = cluster_id or kafka_uuid_string(uuid.uuid4())
        self.topics: dict[str, Topic] = {}
        self.topics_by_id: dict[uuid.UUID, Topic] = {}
        self.open_log: LogOpener = open_log or (lambda topic, index: PartitionLog())
        self.changed: Callable[[], None] = changed or (lambda: None)
        self._next_leader = 0
        self._node_lists: dict[tuple[int, ...], list[int]] = {}

    # -- nodes ---------------------------------------------------------------------------------------------------

    def node(self, node_id: int) -> Node | None:
        return self.nodes.get(node_id)

    def live_nodes(self) -> list[Node]:
        """Nodes that are up and registered: those that may lead, host new replicas, and that Metadata lists."""
        return [n for n in self.nodes.values() if n.up and n.registered]

    def acceptable_leader(self, node_id: int) -> bool:
        """Kafka's LeaderAcceptor: a registered broker that is not fenced (here: a node that is up)."""
        node = self.nodes.get(node_id)
        return node is not None and node.up and node.registered

    @property
    def controller_id(self) -> int:
        """The active controller: the first node that is up (KRaft elects one; every node here can be it, and
        remains a controller when unregistered as a broker)."""
        return next((n.node_id for n in self.nodes.values() if n.up), -1)

    def partitions(self) -> Iterator[Partition]:
        for topic in self.topics.values():
            yield from topic.partitions

    def stop_node(self, node_id: int) -> list[Partition]:
        """The node goes down: it leaves every ISR it is not the last member of, and the partitions it led move
        to their next in-sync replica that is up (or have no leader). Returns the partitions whose leader changed."""
        node = self._known(node_id)
        node.up = False
        moved = []
        for p in self.partitions():
            if node_id not in p.replicas:
                continue
            if node_id in p.isr and len(p.isr) > 1:
                p.isr = [r for r in p.isr if r != node_id]
            if p.leader_id == node_id:
                self._elect(p, [r for r in p.isr if r != node_id and self.acceptable_leader(r)])
                moved.append(p)
        self.changed()
        return moved

    def unregister(self, node_id: int) -> list[Partition]:
        """UnregisterBroker: the node's registration goes (a running node stays up, unregistered, as Kafka's broker
        does until it restarts); it leaves the ISRs and leaderships it had, as when it stops. Returns the
        partitions whose leader changed."""
        node = self.nodes.get(node_id)
        if node is None or not node.registered:
            raise KafkaError(ErrorCode.BROKER_ID_NOT_REGISTERED, f"Broker ID {node_id} is not currently registered")
        up = node.up
        moved = self.stop_node(node_id) if up else []
        node.up, node.registered = up, False
        self.changed()
        return moved

    def start_node(self, node_id: int, *, rebalance: bool = True) -> list[Partition]:
        """The node comes back: it rejoins the ISR of its partitions (caught up at once), leads those that had no
        leader, and, with ``rebalance`` (``auto.leader.rebalance.enable``), takes back those it is the preferred
        (first) replica of. Returns the partitions whose leader changed."""
        node = self._known(node_id)
        node.up = node.registered = True
        moved = []
        for p in self.partitions():
            if node_id not in p.replicas:
                continue
            before = (p.leader_id, p.leader_epoch)
            if node_id not in p.adding:
                if node_id not in p.isr:
                    p.isr = [r for r in p.replicas if r in p.isr or r == node_id]
                if p.leader_id == NO_LEADER or (rebalance and p.replicas[0] == node_id and p.leader_id != node_id):
                    self.set_leader(p, node_id)
            if p.reassigning:
                # The replicas a reassignment adds catch up once they and a leader are up; it may then complete.
                self._catch_up(p)
            if (p.leader_id, p.leader_epoch) != before:
                moved.append(p)
        self.changed()
        return moved

    def move_leader(self, partition: Partition, node_id: int) -> None:
        """Make ``node_id`` the leader (a reassignment first, when it holds no replica of the partition)."""
        node = self._known(node_id)
        if not node.up:
            raise ValueError(f"node {node_id} is stopped")
        if node_id not in partition.replicas:
            old = partition.leader_id if partition.leader_id in partition.replicas else partition.replicas[0]
            partition.replicas = [node_id if r == old else r for r in partition.replicas]
            partition.isr = [node_id if r == old else r for r in partition.isr if r != node_id] or [node_id]
        elif node_id not in partition.isr:
            partition.isr = [*partition.isr, node_id]
        if partition.leader_id != node_id:
            self.set_leader(partition, node_id)
        self.changed()

    def set_leader(self, partition: Partition, node_id: int) -> None:
        partition.leader_id = node_id
        partition.leader_epoch += 1
        partition.log.assign_epoch(partition.leader_epoch, partition.log.log_end_offset)

    def _elect(self, partition: Partition, candidates: list[int]) -> None:
        if candidates:
            self.set_leader(partition, candidates[0])
        else:
            partition.leader_id = NO_LEADER
            partition.leader_epoch += 1

    def _known(self, node_id: int) -> Node:
        node = self.nodes.get(node_id)
        if node is None:
            raise ValueError(f"no node {node_id} (nodes: {sorted(self.nodes)})")
        return node

    # -- topics --------------------------------------------------------------------------------------------------

    def create_topic(self, name: str, num_partitions: int, replication_factor: int,
                     configs: dict[str, Any] | None = None, *, validate_only: bool = False,
                     assignments: list[list[int]] | None = None, internal: bool = False,
                     topic_id: uuid.UUID | None = None) -> Topic:
        """A new topic: ``assignments`` (already validated) gives each partition's replicas, the first leading;
        without them replicas are placed round-robin over the nodes that are up."""
        validate_topic_name(name)
        if name in self.topics:
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        # Names equal but for '.' and '_' collide in metric names; Kafka's controller refuses the second one.
        collides = name.replace(".", "_")
        clash = next((t for t in self.topics if t.replace(".", "_") == collides), None)
        if clash is not None:
            raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic '{name}' collides with existing topic: {clash}")
        if assignments is None:
            if num_partitions < 1:
                raise KafkaError(ErrorCode.INVALID_PARTITIONS, "Number of partitions must be larger than 0.")
            if replication_factor < 1:
                raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0.")
            live = len(self.live_nodes())
            if replication_factor > live:
                raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
                                 f"Unable to replicate the partition {replication_factor} time(s): The target "
                                 f"replication factor of {replication_factor} cannot be reached because only "
                                 f"{live} broker(s) are registered or some brokers have all their log directories "
                                 "cordoned.")
        topic = Topic(name, topic_id or uuid.uuid4(), [], dict(configs or {}), internal)
        if validate_only:
            return topic
        if assignments is None:
            assignments = [self._place(replication_factor) for _ in range(num_partitions)]
        topic.partitions.extend(self._new_partitions(topic, 0, assignments))
        self.topics[name] = topic
        self.topics_by_id[topic.topic_id] = topic
        self.changed()
        return topic

    def _place(self, replication_factor: int) -> list[int]:
        ids = [n.node_id for n in self.live_nodes()]
        start = self._next_leader % len(ids)
        self._next_leader += 1
        return [ids[(start + k) % len(ids)] for k in range(replication_factor)]

    def check_assignment(self, replicas: list[int], replication_factor: int | None, *,
                         require_live: bool = True) -> None:
        """A manual replica assignment, as Kafka's ReplicationControlManager.validateManualPartitionAssignment
        checks it (plus, for new partitions: at least one of its nodes must be up)."""
        if not replicas:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             "The manual partition assignment includes an empty replica list.")
        previous = None
        for broker_id in sorted(replicas):
            if broker_id not in self.nodes or not self.nodes[broker_id].registered:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"The manual partition assignment includes broker {broker_id}, but no such broker "
                                 "is registered.")
            if broker_id == previous:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"The manual partition assignment includes the broker {broker_id} more than once.")
            previous = broker_id
        if replication_factor is not None and len(replicas) != replication_factor:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             f"The manual partition assignment includes a partition with {len(replicas)} "
                             "replica(s), but this is not consistent with previous partitions, which have "
                             f"{replication_factor} replica(s).")
        if require_live and not any(self.acceptable_leader(r) for r in replicas):
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             "All brokers specified in the manual partition assignment are fenced or in "
                             "controlled shutdown.")

    def _shared_nodes(self, nodes: list[int]) -> list[int]:
        """The one list of these node ids that new partitions share (a partition replaces its lists, never changes
        them)."""
        key = tuple(nodes)
        shared = self._node_lists.get(key)
        if shared is None:
            shared = self._node_lists[key] = list(nodes)
        return shared

    def _new_partition(self, topic: Topic, index: int, replicas: list[int]) -> Partition:
        up = self._shared_nodes([r for r in replicas if self.acceptable_leader(r)])
        replicas = self._shared_nodes(replicas)
        partition = Partition(topic.name, index, up[0] if up else NO_LEADER, replicas, isr=up or replicas,
                              log=self.open_log(topic, index))
        partition.log.assign_epoch(0, partition.log.log_end_offset)
        return partition

    def add_partitions(self, topic: Topic, total: int, *, validate_only: bool = False,
                       assignments: list[list[int]] | None = None) -> None:
        """Grow ``topic`` to ``total`` partitions; ``assignments`` (already validated) gives the replicas of each
        new partition, the first being its leader; without it they are placed round-robin."""
        if total <= len(topic.partitions):
            raise KafkaError(ErrorCode.INVALID_PARTITIONS,
                             f"Topic currently has {len(topic.partitions)} partitions, which is higher than or "
                             f"equal to the requested {total}.")
        rf = len(topic.partitions[0].replicas) if topic.partitions else 1
        if assignments is None and rf > len(self.live_nodes()):
            raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
                             f"Unable to replicate the partition {rf} time(s): The target replication factor of "
                             f"{rf} cannot be reached because only {len(self.live_nodes())} broker(s) are "
                             "registered.")
        if validate_only:
            return
        count = total - len(topic.partitions)
        replicas = [list(a) for a in assignments] if assignments is not None else \
            [self._place(rf) for _ in range(count)]
        topic.partitions.extend(self._new_partitions(topic, len(topic.partitions), replicas))
        self.changed()

    def _new_partitions(self, topic: Topic, first: int, assignments: list[list[int]]) -> list[Partition]:
        """The partitions ``first``, ``first + 1``, ... with their logs, all or none: a log that cannot be made
        (the disk, the process's limits) removes those made before it and refuses the request whole."""
        made: list[Partition] = []
        try:
            for k, replicas in enumerate(assignments):
                made.append(self._new_partition(topic, first + k, replicas))
        except OSError as exc:
            for partition in made:
                partition.log.delete()
            log.warning("the logs of %s-%d..%d cannot be made (%s): the request is refused whole", topic.name,
                        first, first + len(assignments) - 1, exc)
            raise KafkaError(ErrorCode.KAFKA_STORAGE_ERROR,
                             f"Cannot create the logs of {topic.name}: {exc.strerror or exc}") from None
        return made

    def delete_topic(self, topic: Topic) -> None:
        del self.topics[topic.name]
        del self.topics_by_id[topic.topic_id]
        for partition in topic.partitions:
            partition.log.delete()
        self.changed()

    def topic(self, name: str) -> Topic:
        topic = self.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unknown topic {name}")
        return topic

    def partition(self, name: str, index: int) -> Partition:
        topic = self.topics.get(name)
        partition = None if topic is None else topic.partition_at(index)
        if partition is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        return partition

    # -- the controller's partition changes -----------------------------------------------------------------------

    def reassign(self, partition: Partition, target: list[int]) -> bool:
        """Start reassigning ``partition`` to ``target`` (already validated), as the controller's
        changePartitionReassignment does: the replicas become the target followed by those it removes; the new ones
        whose node is up catch up at once (from the leader) and join the ISR, and then the reassignment completes. A
        new replica on a stopped node, or a partition with no leader, keeps it in progress until the node starts
        (or the reassignment is cancelled or replaced). Returns True when the leader changed."""
        current = list(partition.replicas)
        removing = sorted(set(current) - set(target))
        adding = sorted(set(target) - set(current))
        partition.replicas = list(target) + removing
        partition.adding, partition.removing = adding, removing
        before = (partition.leader_id, partition.leader_epoch)
        if not self._catch_up(partition, current):
            self._elect_online(partition, current)
        self.changed()
        return (partition.leader_id, partition.leader_epoch) != before

    def _catch_up(self, partition: Partition, previous: list[int] | None = None) -> bool:
        """The replicas a reassignment adds that are up copy the leader's log at once and join the ISR (sorted, as
        Kafka's leader sends an expanded ISR); then the reassignment completes if it can. Without a leader there
        is nothing to copy from. True when it completed."""
        if partition.leader_id != NO_LEADER:
            caught_up = [r for r in partition.adding if self.acceptable_leader(r)]
            if caught_up and not set(caught_up) <= set(partition.isr):
                partition.isr = sorted(set(partition.isr) | set(caught_up))
        return self._complete_reassignment(partition, previous)

    def cancel_reassignment(self, partition: Partition, unclean_allowed: bool) -> bool:
        """Revert a reassignment in progress (PartitionReassignmentRevert): the replicas it was adding go, those
        it was removing stay. When only added replicas were in sync, reverting is an unclean election, allowed by
        the topic's ``unclean.leader.election.enable``. Returns True when the leader changed."""
        if not partition.reassigning:
            raise KafkaError(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS)
        current = list(partition.replicas)
        replicas = [r for r in current if r not in partition.adding]
        isr = [r for r in partition.isr if r not in partition.adding]
        if not isr:
            if not unclean_allowed:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 f"Unable to revert partition assignment for {partition.topic}:{partition.index} "
                                 "because it would require an unclean leader election.")
            isr = replicas[:1]
        before = (partition.leader_id, partition.leader_epoch)
        partition.replicas, partition.isr, partition.adding, partition.removing = replicas, isr, [], []
        self._elect_online(partition, current)
        self.changed()
        return (partition.leader_id, partition.leader_epoch) != before

    def _complete_reassignment(self, partition: Partition, previous: list[int] | None = None) -> bool:
        """Finish a reassignment whose added replicas are all in sync (PartitionReassignmentReplicas
        .maybeCompleteReassignment): the removed replicas leave the replicas and the ISR, and a leader that was
        removed hands over to the first target replica in sync. False while it cannot complete."""
        if not partition.reassigning:
            return False
        previous = previous if previous is not None else list(partition.replicas)
        removing = set(partition.removing)
        isr = [r for r in partition.isr if r not in removing]
        replicas = [r for r in partition.replicas if r not in removing]
        if not isr or not replicas or not set(partition.adding) <= set(isr):
            return False
        if len(partition.adding) < len(removing) and not set(replicas) <= set(isr):
            return False
        partition.replicas, partition.isr, partition.adding, partition.removing = replicas, isr, [], []
        self._elect_online(partition, previous)
        return True

    def _elect_online(self, partition: Partition, previous_replicas: list[int]) -> None:
        """Keep the leader while it is in sync and up, else elect the first replica that is (Kafka's ONLINE
        election); a change that drops any of ``previous_replicas`` bumps the leader epoch even when the leader
        stays."""
        leader = partition.leader_id
        elected = leader
        if not (leader in partition.isr and self.acceptable_leader(leader)):
            elected = next((r for r in partition.replicas if r in partition.isr and self.acceptable_leader(r)),
                           NO_LEADER)
        if elected != leader or not set(previous_replicas) <= set(partition.replicas):
            self._elect(partition, [elected] if elected != NO_LEADER else [])

    def preferred_election(self, partition: Partition) -> tuple[ErrorCode, int]:
        """What a preferred-replica election would do (nothing is changed): ELECTION_NOT_NEEDED when the preferred
        replica leads; else the preferred replica if it is in sync and up, or another one when the partition has
        no valid leader; PREFERRED_LEADER_NOT_AVAILABLE when the leader would stay."""
        preferred = partition.replicas[0]
        if partition.leader_id == preferred:
            return ErrorCode.ELECTION_NOT_NEEDED, NO_LEADER
        valid = [r for r in partition.replicas if r in partition.isr and self.acceptable_leader(r)]
        if preferred in valid:
            return ErrorCode.NONE, preferred
        if partition.leader_id in valid or not valid:
            return ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, NO_LEADER
        return ErrorCode.NONE, valid[0]

    def unclean_election(self, partition: Partition) -> tuple[ErrorCode, int]:
        """What an unclean election would do (nothing is changed): ELECTION_NOT_NEEDED while the partition has a
        leader; else an in-sync replica that is up, or any replica that is up; ELIGIBLE_LEADERS_NOT_AVAILABLE
        when none is."""
        if partition.leader_id != NO_LEADER:
            return ErrorCode.ELECTION_NOT_NEEDED, NO_LEADER
        valid = [r for r in partition.replicas if r in partition.isr and self.acceptable_leader(r)]
        live = valid or [r for r in partition.replicas if self.acceptable_leader(r)]
        if not live:
            return ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, NO_LEADER
        return ErrorCode.NONE, live[0]

    def elect(self, partition: Partition, node_id: int) -> None:
        """Make ``node_id`` (a replica chosen by ``preferred_election`` or ``unclean_election``) the leader, with an
        epoch bump; a leader from outside the ISR (unclean) becomes the whole ISR."""
        if node_id not in partition.isr:
            partition.isr = [node_id]
        self.set_leader(partition, node_id)
        self.changed()

    # -- requests ------------------------------------------------------------------------------------------------

    def lead(self, node_id: int, topic: Topic | None, index: int, current_leader_epoch: int = -1, *,
             missing: ErrorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) -> Partition:
        """The partition a request for ``topic``-``index`` on node ``node_id`` may act on, as Kafka's
        ReplicaManager.getPartitionOrException and Partition.getLocalLog decide:

        - no such topic or partition: ``missing`` (UNKNOWN_TOPIC_OR_PARTITION, or UNKNOWN_TOPIC_ID by id);
        - the node holds no replica: NOT_LEADER_OR_FOLLOWER;
        - ``current_leader_epoch`` (-1: not given) older than the partition's: FENCED_LEADER_EPOCH, newer:
          UNKNOWN_LEADER_EPOCH;
        - the node is a follower, or the partition has no leader: NOT_LEADER_OR_FOLLOWER.
        """
        partition = None if topic is None else topic.partition_at(index)
        if topic is None or partition is None:
            raise KafkaError(missing)
        if node_id not in partition.replicas:
            raise NotLeader(ErrorCode.NOT_LEADER_OR_FOLLOWER, partition,
                            f"node {node_id} holds no replica of {topic.name}-{index}")
        if current_leader_epoch >= 0:
            if current_leader_epoch < partition.leader_epoch:
                raise NotLeader(ErrorCode.FENCED_LEADER_EPOCH, partition)
            if current_leader_epoch > partition.leader_epoch:
                raise KafkaError(ErrorCode.UNKNOWN_LEADER_EPOCH)
        if partition.leader_id != node_id:
            raise NotLeader(ErrorCode.NOT_LEADER_OR_FOLLOWER, partition,
                            f"node {node_id} is not the leader of {topic.name}-{index}")
        return partition

    def leader_endpoints(self, leader_ids: Iterable[int], listener: str | None = None) -> list[dict]:
        """NodeEndpoints (KIP-951) for the leaders a response names, on the listener the request came in on."""
        out = []
        for node_id in sorted(set(leader_ids)):
            node = self.nodes.get(node_id)
            if node is not None and node.up:
                out.append(node.endpoint(listener))
        return out

    # -- persistence ---------------------------------------------------------------------------------------------

    def snapshot(self) -> dict:
        """The metadata that must survive a restart (what KRaft's metadata log holds for a real cluster)."""
        return {
            "cluster_id": self.cluster_id,
            "node_ids": sorted(self.nodes),
            "topics": [{
                "name": t.name, "topic_id": kafka_uuid_string(t.topic_id), "internal": t.internal,
                "configs": {k: v for k, v in t.configs.items()},
                "partitions": [{"replicas": p.replicas, "isr": p.isr, "leader": p.leader_id,
                                "leader_epoch": p.leader_epoch,
                                **({"adding": p.adding, "removing": p.removing} if p.reassigning else {})}
                               for p in t.partitions],
            } for t in self.topics.values()],
        }

    def restore(self, snapshot: dict) -> None:
        """Topics and partitions from a snapshot, their logs reopened (recovered) through ``open_log``. Replicas on
        nodes this cluster does not have are kept (reported offline); a leader that is not here is replaced."""
        self.cluster_id = snapshot["cluster_id"]
        for t in snapshot.get("topics", []):
            topic = Topic(t["name"], parse_kafka_uuid(t["topic_id"]), [], dict(t.get("configs", {})),
                          t.get("internal", False))
            for i, p in enumerate(t["partitions"]):
                partition = Partition(topic.name, i, p["leader"], list(p["replicas"]), p["leader_epoch"],
                                      list(p.get("isr") or p["replicas"]), log=self.open_log(topic, i),
                                      adding=list(p.get("adding", [])), removing=list(p.get("removing", [])))
                if partition.leader_id not in self.nodes:
                    self._elect(partition, [r for r in partition.isr if r in self.nodes])
                partition.isr = [r for r in partition.isr if r in self.nodes] or partition.isr
                topic.partitions.append(partition)
            self.topics[topic.name] = topic
            self.topics_by_id[topic.topic_id] = topic
