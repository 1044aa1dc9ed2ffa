"""The trio shell around the core: one clock for every timer (trio's MockClock through TrioClock, or a ManualClock),
node listeners that stop and start, and log lines a Spark job can live with. No test here sleeps for real."""

from __future__ import annotations

import logging
import socket

import pytest
import trio
import trio.testing

from kafkamock import records
from kafkamock.broker import Cluster, ManualClock
from kafkamock.client.connection import KafkaConnection, KafkaConnectionError
from kafkamock.server import TrioClock, run_broker
from kafkamock.testing import start_broker


def _fetch_body(topic: str, offset: int, max_wait_ms: int) -> dict:
    return {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 10**6, "session_epoch": -1,
            "topics": [{"topic": topic, "partitions": [{"partition": 0, "fetch_offset": offset,
                                                        "partition_max_bytes": 10**6}]}]}


def _host_port(server, k: int = 0) -> tuple[str, int]:
    host, _, port = server.bootstrap_servers.split(",")[k].rpartition(":")
    return host, int(port)


@pytest.mark.trio
async def test_long_poll_and_retention_run_on_trio_virtual_time(autojump_clock):
    broker = Cluster(clock=TrioClock(), config={"log.retention.check.interval.ms": 60_000})
    async with run_broker(broker) as server, trio.open_nursery() as nursery:
        broker.metadata.create_topic("t", 1, 1, {"retention.ms": 3_600_000})
        conn = await KafkaConnection.connect(nursery, *_host_port(server))
        started = trio.current_time()
        response = await conn.request("Fetch", _fetch_body("t", 0, 600_000), version=12)   # ten minutes
        assert trio.current_time() - started == pytest.approx(600, abs=1)                  # in virtual time
        assert response.responses[0].partitions[0].records in (b"", None)
        now = broker.now_ms()
        produced = await conn.request("Produce", {"acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": records.encode_batch(
                [{"value": b"old", "timestamp": now}])}]}]}, version=9)
        assert produced.responses[0].partition_responses[0].error_code == 0
        plog = broker.metadata.partition("t", 0).log
        await trio.sleep(3_600 - 61)                     # checks ran every minute, the record is not an hour old
        assert plog.log_start_offset == 0
        await trio.sleep(122)                            # it is now, and a check has run since
        assert plog.log_start_offset == plog.log_end_offset == 1
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_manual_clock_drives_the_shell_without_sleeping():
    clock = ManualClock()
    broker = Cluster(clock=clock)
    async with run_broker(broker) as server, trio.open_nursery() as nursery:
        broker.metadata.create_topic("t", 1, 1)
        conn = await KafkaConnection.connect(nursery, *_host_port(server))
        done = trio.Event()
        answers = []

        async def fetch():
            answers.append(await conn.request("Fetch", _fetch_body("t", 0, 30_000), version=12))
            done.set()
        nursery.start_soon(fetch)
        await trio.testing.wait_all_tasks_blocked()
        assert broker.timers.waiting() == 1 and not done.is_set()
        clock.advance(29_999)
        await trio.testing.wait_all_tasks_blocked()
        assert not done.is_set()
        with trio.fail_after(10):
            clock.advance(1)                             # the deadline: the shell wakes and the core answers
            await done.wait()
        assert answers[0].responses[0].partitions[0].error_code == 0
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_stopped_node_closes_its_listener_and_connections_and_comes_back_on_the_same_port():
    broker = Cluster(brokers=2)
    async with run_broker(broker) as server, trio.open_nursery() as nursery:
        host, port = _host_port(server, 1)
        conn = await KafkaConnection.connect(nursery, host, port)
        broker.control.stop_node(2)
        with trio.fail_after(10), pytest.raises(KafkaConnectionError):
            await conn.request("Metadata", {"topics": None})
        with pytest.raises(KafkaConnectionError):
            await KafkaConnection.connect(nursery, host, port)
        broker.control.start_node(2)
        with trio.fail_after(10):
            while True:                                  # the listener task binds again right after start
                try:
                    again = await KafkaConnection.connect(nursery, host, port)
                    break
                except KafkaConnectionError:
                    await trio.sleep(0.01)
        assert [b.node_id for b in (await again.request("Metadata", {"topics": None})).brokers] == [1, 2]
        nursery.cancel_scope.cancel()


def test_one_info_line_per_client_id_and_debug_for_each_connection(caplog):
    caplog.set_level(logging.DEBUG, logger="kafkamock")
    with start_broker() as broker:
        host, _, port = broker.bootstrap_servers.rpartition(":")
        for client_id in ("spark-executor", "spark-executor", "spark-executor", "other"):
            with socket.create_connection((host, int(port))) as sock:
                from kafkamock.codec import encode_request

                sock.sendall(encode_request("ApiVersions", 3, 1, client_id, {"client_software_name": "x",
                                                                             "client_software_version": "1"}))
                assert sock.recv(4)
        broker.control.nodes()                           # a round trip to the broker thread: the closes are logged
    infos = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO and r.name == "kafkamock.server"]
    assert [m for m in infos if "connected" in m] == [
        m for m in infos if "connected" in m and ("'spark-executor'" in m or "'other'" in m)]
    assert sum("'spark-executor'" in m for m in infos) == 1 and sum("'other'" in m for m in infos) == 1
    debug = [r for r in caplog.records if r.levelno == logging.DEBUG and r.name == "kafkamock.server"
             and "connection" in r.getMessage()]
    assert len(debug) >= 4


def test_start_broker_with_a_manual_clock_answers_a_long_poll_when_the_test_moves_time():
    clock = ManualClock()
    with start_broker(clock=clock) as broker:
        broker.create_topic("t")
        host, _, port = broker.bootstrap_servers.rpartition(":")
        from kafkamock.codec import decode_response, encode_request

        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(encode_request("Fetch", 12, 7, "poller", _fetch_body("t", 0, 3_600_000)))
            sock.settimeout(0.2)
            with pytest.raises(TimeoutError):
                sock.recv(4)                                   # an hour of broker time: nothing yet
            clock.advance(3_600_000)                           # from this (non-broker) thread
            sock.settimeout(30)
            size = int.from_bytes(sock.recv(4), "big")
            frame = b""
            while len(frame) < size:
                frame += sock.recv(size - len(frame))
        header, body = decode_response("Fetch", 12, size.to_bytes(4, "big") + frame)
        assert header.correlation_id == 7 and body.responses[0].partitions[0].error_code == 0


@pytest.mark.trio
async def test_a_silent_group_member_expires_at_its_session_deadline_with_no_request(autojump_clock):
    """Classic members whose clients went away (no LeaveGroup): the shell's timer task runs the core's session
    timers at their deadline on virtual time, with no request arriving to wake it (a librdkafka run once saw
    them expire only when a DeleteGroups came in)."""
    import functools
    import struct

    from kafkamock import codec

    subscription = struct.pack(">h", 0) + codec.encode("ConsumerProtocolSubscription", 0, {"topics": ["t"]})

    def join(member=""):
        return {"group_id": "g", "session_timeout_ms": 5_000, "rebalance_timeout_ms": 60_000, "member_id": member,
                "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": subscription}]}

    broker = Cluster(clock=TrioClock(), config={"group.initial.rebalance.delay.ms": 0,
                                               "group.min.session.timeout.ms": 1_000})
    async with run_broker(broker) as server, trio.open_nursery() as nursery:
        broker.metadata.create_topic("t", 2, 1)
        members = []
        for _ in range(2):
            conn = await KafkaConnection.connect(nursery, *_host_port(server))
            first = await conn.request("JoinGroup", join(), version=9)
            nursery.start_soon(functools.partial(conn.request, "JoinGroup", join(first.member_id), version=9))
            members.append((conn, first.member_id))
            await trio.testing.wait_all_tasks_blocked()
        a_conn, a = members[0]
        await a_conn.request("Heartbeat", {"group_id": "g", "generation_id": 1, "member_id": a}, version=4)
        joined = await a_conn.request("JoinGroup", join(a), version=9)
        assert joined.error_code == 0 and len(joined.members) == 2
        for conn, member in members:
            await conn.request("SyncGroup", {"group_id": "g", "generation_id": joined.generation_id,
                                             "member_id": member, "protocol_type": "consumer",
                                             "protocol_name": "range", "assignments": []}, version=5)
        started = broker.now_ms()
        for conn, _ in members:
            await conn.aclose()
        group = broker.groups.groups["g"]
        await trio.sleep(4.9)
        assert len(group.members) == 2 and group.state.value == "Stable"
        await trio.sleep(0.2)                            # the 5 s sessions ended: nothing was sent meanwhile
        assert group.members == {} and group.state.value == "Empty"
        assert broker.now_ms() - started < 5_200
        nursery.cancel_scope.cancel()
