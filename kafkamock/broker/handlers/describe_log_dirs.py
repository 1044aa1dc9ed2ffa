"""DescribeLogDirs (35): the log directory of the node the request arrived on, and the replicas it holds there
(Admin.describeLogDirs / describeReplicaLogDirs).

As Kafka's KafkaApis.handleDescribeLogDirsRequest and ReplicaManager.describeLogDirs, with DESCRIBE on the cluster
(else CLUSTER_AUTHORIZATION_FAILED and no directories). A node has one directory: ``log.dirs`` when kafkamock keeps
its logs on disk, else ``log.dir`` (Kafka's default, /tmp/kafka-logs), which is where Kafka would keep them.
Each replica the node holds among the partitions asked for (``topics`` null: all of them; unknown ones are simply
absent) is listed with its log's size in bytes and an offset lag of 0: the high watermark minus the log end,
never negative, and every replica here shares the leader's log. v4+ reports the total and usable bytes of the
directory's volume (for logs kept in memory, of the volume Kafka's default directory would be on); v5 whether the
directory is cordoned (``cordoned.log.dirs``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation, ResourceType
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.codec.messages import DescribeLogDirsRequest, DescribeLogDirsResponse

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 35


def log_dir(cluster: Cluster) -> str:
    """The node's log directory as an absolute path (Kafka reports and matches absolute paths)."""
    root = getattr(cluster.storage, "root", None)
    if root is None:
        root = (cluster.config["log.dirs"] or cluster.config["log.dir"] or "/tmp/kafka-logs").split(",")[0].strip()
    return os.path.abspath(str(root))


def cordoned(cluster: Cluster, request: Request, path: str) -> bool:
    dirs = {d.strip() for d in str(cluster.node_config(request)["cordoned.log.dirs"] or "").split(",") if d.strip()}
    return "*" in dirs or path in dirs


def handle(cluster: Cluster, request: Request[DescribeLogDirsRequest]) -> DescribeLogDirsResponse:
    if not cluster.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.CLUSTER):
        return error_response(cluster, request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    body = request.body
    node_id = request.node.node_id if request.node is not None else cluster.node_id
    wanted = None if body.topics is None else {(t.topic, p) for t in body.topics for p in t.partitions}
    topics: dict[str, list[DescribeLogDirsResponse.DescribeLogDirsPartition]] = {}
    for topic in cluster.metadata.topics.values():
        for p in topic.partitions:
            if node_id not in p.replicas or (wanted is not None and (topic.name, p.index) not in wanted):
                continue
            lag = max(p.log.high_watermark - p.log.log_end_offset, 0)
            topics.setdefault(topic.name, []).append(DescribeLogDirsResponse.DescribeLogDirsPartition(
                partition_index=p.index, partition_size=p.log.size_bytes, offset_lag=lag, is_future_key=False))
    path = log_dir(cluster)
    total, usable = cluster.storage.space(path)
    return DescribeLogDirsResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, results=[
        DescribeLogDirsResponse.DescribeLogDirsResult(
            error_code=ErrorCode.NONE, log_dir=path,
            topics=[DescribeLogDirsResponse.DescribeLogDirsTopic(name=name, partitions=partitions)
                    for name, partitions in topics.items()],
            total_bytes=total, usable_bytes=usable, is_cordoned=cordoned(cluster, request, path))])


def error_response(cluster: Cluster, request: Request[DescribeLogDirsRequest], code: ErrorCode,
                   message: str | None = None) -> DescribeLogDirsResponse:
    return DescribeLogDirsResponse(throttle_time_ms=0, error_code=code, results=[])


HANDLER = ApiHandler(API_KEY, handle, error_response)
