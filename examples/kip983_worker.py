"""KIP-983 with kafkamock's consumer: work on records in a thread pool, keep polling through a rebalance, and hand a
partition over only when its records are done and committed, so no record is processed twice."""

import time
from concurrent.futures import ThreadPoolExecutor

from kafkamock.client.blocking import Consumer, Producer
from kafkamock.testing import start_broker


def handle(record):                     # the slow part, off the poll loop
    time.sleep(0.02)


with start_broker({"group.initial.rebalance.delay.ms": 0}) as broker:
    broker.create_topic("jobs", 4)
    with Producer({"bootstrap.servers": broker.bootstrap_servers}) as producer:
        for i in range(800):
            producer.send("jobs", f"job-{i}".encode(), partition=i % 4)
    settings = {"bootstrap.servers": broker.bootstrap_servers, "group.id": "workers", "enable.auto.commit": False,
                "auto.offset.reset": "earliest", "partition.assignment.strategy": "cooperative-sticky", "heartbeat.interval.ms": 100}
    pool = ThreadPoolExecutor(4)
    in_flight = {}                      # partition -> [(record, future)] in offset order
    done_a, done_b = [], []
    with Consumer(settings) as a, Consumer(settings) as b:
        a.subscribe(["jobs"])
        while len({(r.partition, r.offset) for r in done_a + done_b}) < 800 or len(b.assignment()) < 2:
            for record in a.poll(0.05):
                in_flight.setdefault(record.topic_partition, []).append((record, pool.submit(handle, record)))
            finished = {}
            for tp, work in in_flight.items():                 # commit what is done, in order
                while work and work[0][1].done():
                    record, _ = work.pop(0)
                    done_a.append(record)
                    finished[tp] = record.offset + 1
            if finished:
                a.commit(finished)
            revoking = a.to_be_revoked_partitions()
            a.pause(revoking)                                  # fetch no more of them: finish what is under way
            busy = {tp for tp in revoking if in_flight.get(tp)}
            if busy and a.delay_revoke(busy):                  # revoked a poll later; false once lost
                print("delaying the revoke of", sorted(map(str, busy)))
            for tp in a.lost_partitions():                     # another member may have them: stop
                in_flight.pop(tp, None)
            if sum(map(len, in_flight.values())) > 40:          # back-pressure: fetch no more for now
                a.pause(a.assignment())
            else:
                a.resume(a.paused() - a.to_be_revoked_partitions())
            if len(done_a) > 100 and not b.subscription():     # a second member joins mid-processing
                b.subscribe(["jobs"])
            if b.subscription():
                got = b.poll(0.05)
                done_b += got
                if got:
                    b.commit()
        keys = [(r.partition, r.offset) for r in done_a + done_b]
        assert len(keys) == len(set(keys)) == 800, "a record processed twice"
        print(f"worker A processed {len(done_a)}, worker B {len(done_b)}; B owns {sorted(map(str, b.assignment()))}")
