"""Consume-transform-produce exactly once with kafkamock's transactional producer, and KIP-360: when the broker
has lost the producer's sequence state (here a pushed OUT_OF_ORDER_SEQUENCE_NUMBER), the transaction becomes
abortable; abort_transaction bumps the epoch with InitProducerId (carrying the producer's id and epoch) and the
producer goes on, instead of failing for good."""

from kafkamock.client import KafkaError
from kafkamock.client.blocking import Consumer, Producer
from kafkamock.testing import start_broker

with start_broker({"group.initial.rebalance.delay.ms": 0}) as broker:
    bootstrap = broker.bootstrap_servers
    broker.create_topic("orders", 1)
    broker.create_topic("totals", 1)
    with Producer({"bootstrap.servers": bootstrap}) as plain:
        for amount in (10, 20, 30):
            plain.send("orders", str(amount).encode())
    with Consumer({"bootstrap.servers": bootstrap, "group.id": "etl", "enable.auto.commit": False,
                   "auto.offset.reset": "earliest", "isolation.level": "read_committed"}) as consumer, \
            Producer({"bootstrap.servers": bootstrap, "transactional.id": "etl-1"}) as producer:
        consumer.subscribe(["orders"])
        producer.init_transactions()                  # fences any older "etl-1"
        records = []
        while len(records) < 3:
            records += consumer.poll(1.0)
        for attempt in (1, 2):
            producer.begin_transaction()
            if attempt == 1:                          # the broker loses this producer's state mid-transaction
                broker.control.push_fault("Produce", "OUT_OF_ORDER_SEQUENCE_NUMBER", topic="totals")
            try:
                producer.send("totals", str(sum(int(r.value) for r in records)).encode()).get()
                producer.send_offsets_to_transaction({r.topic_partition: r.offset + 1 for r in records},
                                                     consumer.group_metadata())
                producer.commit_transaction()
                print(f"attempt {attempt}: committed with producer id {producer.producer_id} "
                      f"epoch {producer.producer_epoch}")
                break
            except KafkaError as exc:                 # abortable: abort, which bumps the epoch (KIP-360)
                print(f"attempt {attempt}: {exc.name}; state {producer.state.name}, aborting")
                producer.abort_transaction()
    with Consumer({"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest",
                   "isolation.level": "read_committed"}) as reader:
        reader.assign([("totals", 0)])
        totals = []
        while not totals:
            totals = reader.poll(1.0)
        assert [r.value for r in totals] == [b"60"], "exactly one committed total"
        print("totals:", [r.value for r in totals])
