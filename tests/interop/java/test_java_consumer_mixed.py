"""kafkamock's own Consumer and Apache Kafka's Java 4.3 KafkaConsumer as members of one group: a classic group (the
two assignors a Java consumer offers by default, and cooperative-sticky, where either side may lead) and a KIP-848
group. Between them every record is read once, the partitions split, and when the kafkamock member leaves the Java
member takes everything and resumes at the offsets the kafkamock member committed."""

from __future__ import annotations

import pytest
import test_java_groups as groups

from kafkamock.client import blocking

pytestmark = [pytest.mark.java, pytest.mark.kafkamock(config={
    "group.initial.rebalance.delay.ms": 0, "group.consumer.heartbeat.interval.ms": 1000,
    "group.consumer.min.heartbeat.interval.ms": 500})]


class KafkamockMember:
    """A blocking kafkamock Consumer stepped by the test's thread; commits after every poll that returned records."""

    def __init__(self, bootstrap: str, group: str, topic: str, protocol: str, assignor: str | None):
        settings = {"bootstrap.servers": bootstrap, "group.id": group, "client.id": "km-member",
                    "enable.auto.commit": False, "auto.offset.reset": "earliest", "group.protocol": protocol,
                    "fetch.max.wait.ms": 100}
        if protocol == "classic":
            settings.update({"heartbeat.interval.ms": 500, "session.timeout.ms": 10000})
            if assignor:
                settings["partition.assignment.strategy"] = assignor
        self.consumer = blocking.Consumer(settings)
        self.consumer.subscribe([topic])
        self.records: list[tuple[int, int, str]] = []

    @property
    def assignment(self) -> set[str]:
        return {f"{tp.topic}:{tp.partition}" for tp in self.consumer.assignment()}

    def step(self) -> None:
        got = self.consumer.poll(0.05)
        for r in got:
            self.records.append((r.partition, r.offset, r.key.decode()))
            assert r.value.decode() == "v" + r.key.decode()[1:]
        if got:
            self.consumer.commit()

    def close(self) -> None:
        self.consumer.close()


@pytest.mark.parametrize("protocol, assignor", [("classic", None), ("classic", "cooperative-sticky"),
                                                ("consumer", None)])
def test_a_kafkamock_and_a_java_member_share_a_group(kafka_target, java_clients, protocol, assignor):
    bootstrap = kafka_target.bootstrap_servers
    topic, group = kafka_target.unique("mixed"), kafka_target.unique(f"mixed-{protocol}")
    kafka_target.create_topic(topic, groups.PARTITIONS)
    produced = groups.produce(java_clients, bootstrap, topic, 10)
    everything = groups.tps(topic, range(groups.PARTITIONS))
    java_extra = {"assignor": assignor} if assignor else {}
    java = java_clients.start_group(bootstrap, group, [topic], protocol=protocol, client_id="java-member",
                                    progress_every=1, **java_extra)
    km = KafkamockMember(bootstrap, group, topic, protocol, assignor)
    closed = False
    try:
        def shared() -> bool:
            sj = groups.assigned(java)
            return bool(sj and km.assignment and not sj & km.assignment and sj | km.assignment == everything
                        and groups.consumed(java) + len(km.records) >= 40)
        groups.wait_members({"java-member": java}, shared, groups.JOIN_S + groups.SETTLE_S,
                     f"the Java and kafkamock members to share the partitions (kafkamock: {km.assignment})",
                     step=km.step)
        assert len(groups.assigned(java)) == len(km.assignment) == 2, (groups.assigned(java), km.assignment)
        split = {"java-member": groups.assigned(java), "km-member": km.assignment}
        (described,) = groups.admin_results(java_clients, bootstrap, [
            {"op": "describeConsumerGroups", "groups": [group], "until_state": "Stable", "timeout_ms": 20_000}])
        d = described[group]
        assert d["state"] == "Stable" and d["type"] == ("Classic" if protocol == "classic" else "Consumer"), d
        assert {m["client_id"]: set(m["assignment"]) for m in d["members"]} == split, d

        km.close()
        closed = True
        groups.wait_members({"java-member": java}, lambda: groups.assigned(java) == everything, groups.SETTLE_S,
                     "the Java member to take every partition after the kafkamock member left")
        java.stop()
        result = java.result(timeout=60)
    finally:
        java.kill()
        if not closed:
            km.close()
    consumed_records = groups.records_of(result) + km.records
    assert len(consumed_records) == len(set(consumed_records)), "a record was read twice"
    assert set(consumed_records) == produced
    assert result["committed"] == {topic: {str(p): 10 for p in range(groups.PARTITIONS)}}, result["committed"]
