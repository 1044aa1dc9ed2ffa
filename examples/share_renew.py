"""A share group with kafkamock's ShareConsumer: records are acquired under a lock; RENEW (KIP-1222) keeps a slow
record from being handed to another consumer, ACCEPT finishes it, RELEASE gives it back."""

import time

from kafkamock.client import AcknowledgeType
from kafkamock.client.admin import AlterConfigOp, ConfigResource, ResourceType
from kafkamock.client.blocking import Admin, Producer, ShareConsumer
from kafkamock.testing import start_broker

with start_broker({"group.share.min.record.lock.duration.ms": 1000}) as broker:
    bootstrap = broker.bootstrap_servers
    broker.create_topic("jobs", 1)
    with Admin({"bootstrap.servers": bootstrap}) as admin:          # the group's settings: GROUP configs
        admin.incremental_alter_configs({ConfigResource(ResourceType.GROUP, "workers"): [
            AlterConfigOp("share.auto.offset.reset", "earliest"),
            AlterConfigOp("share.record.lock.duration.ms", "2000")]})
    with Producer({"bootstrap.servers": bootstrap}) as producer:
        for i in range(5):
            producer.send("jobs", f"job-{i}".encode())
    settings = {"bootstrap.servers": bootstrap, "group.id": "workers", "share.acknowledgement.mode": "explicit",
                "max.poll.records": 1, "share.acquire.mode": "record_limit"}
    with ShareConsumer(settings) as slow, ShareConsumer(settings) as other:
        slow.subscribe(["jobs"])
        other.subscribe(["jobs"])
        held = []
        while not held:
            held = slow.poll(1.0)
        print("lock:", slow.acquisition_lock_timeout_ms(), "ms; holding", [r.value for r in held])
        seen_by_other = []
        deadline = time.monotonic() + 5                           # longer than the 2 s lock
        while time.monotonic() < deadline:
            for record in held:
                slow.acknowledge(record, AcknowledgeType.RENEW)   # still working on it
            slow.commit_sync()                                    # the renewal goes out (ShareAcknowledge v2)
            held = slow.poll(0.5) or held                         # renewed records come back, same delivery count
            for record in other.poll(0.5):
                seen_by_other.append(record.value)
                other.acknowledge(record, AcknowledgeType.ACCEPT)
            other.commit_sync()
        for record in held:
            slow.acknowledge(record, AcknowledgeType.ACCEPT)
        print("accepted:", slow.commit_sync())
        assert not {r.value for r in held} & set(seen_by_other), "a renewed record went to the other consumer"
        print("the other consumer got", seen_by_other, "- never a record the slow one held")
