"""DescribeQuorum (55): the KRaft quorum of the metadata log (KIP-595; Admin.describeMetadataQuorum).

Kafka's broker forwards it to the active controller, whose Raft client answers it (ControllerApis
.handleDescribeQuorum, with DESCRIBE on the cluster; KafkaRaftClient.handleDescribeQuorumRequest). The request must
name exactly ``__cluster_metadata`` partition 0; anything else is UNKNOWN_TOPIC_OR_PARTITION for every partition
named, and an empty topic list an empty answer. kafkamock answers for its emulated quorum (``quorum.py``): every
node a voter, the controller its leader, no observers. v1 adds each voter's last fetch and last caught-up times;
v2 the voters' directory ids (zero: a static quorum keeps none) and their nodes, which list no listener since
kafkamock's nodes have no controller listener.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkamock.broker.acls import AclOperation
from kafkamock.broker.errors import ErrorCode
from kafkamock.broker.handlers.contract import ApiHandler
from kafkamock.broker.quorum import METADATA_PARTITION, METADATA_TOPIC
from kafkamock.codec.messages import DescribeQuorumRequest, DescribeQuorumResponse
from kafkamock.errors import default_message

if TYPE_CHECKING:
    from kafkamock.broker.core import Cluster, Request

API_KEY = 55


def _valid(topics: list[DescribeQuorumRequest.TopicData]) -> bool:
    return (len(topics) == 1 and topics[0].topic_name == METADATA_TOPIC and len(topics[0].partitions) == 1
            and topics[0].partitions[0].partition_index == METADATA_PARTITION)


def handle(cluster: Cluster, request: Request[DescribeQuorumRequest]) -> DescribeQuorumResponse:
    cluster.auth.require_cluster(request, AclOperation.DESCRIBE)
    topics = request.body.topics
    if not _valid(topics):
        code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return DescribeQuorumResponse(error_code=ErrorCode.NONE, error_message="", nodes=[], topics=[
            DescribeQuorumResponse.TopicData(topic_name=t.topic_name, partitions=[
                DescribeQuorumResponse.PartitionData(
                    partition_index=p.partition_index, error_code=code, error_message=default_message(code),
                    leader_id=0, leader_epoch=0, high_watermark=0, current_voters=[], observers=[])
                for p in t.partitions]) for t in topics])
    quorum = cluster.quorum
    leader, epoch = quorum.observe()
    voters = quorum.voters()
    return DescribeQuorumResponse(
        error_code=ErrorCode.NONE, error_message="",
        topics=[DescribeQuorumResponse.TopicData(topic_name=METADATA_TOPIC, partitions=[
            DescribeQuorumResponse.PartitionData(
                partition_index=METADATA_PARTITION, error_code=ErrorCode.NONE, error_message="",
                leader_id=leader, leader_epoch=epoch, high_watermark=quorum.high_watermark,
                current_voters=voters, observers=[])])],
        nodes=[DescribeQuorumResponse.Node(node_id=v.replica_id, listeners=[]) for v in voters]
        if request.version >= 2 else [])


def error_response(cluster: Cluster, request: Request[DescribeQuorumRequest], code: ErrorCode,
                   message: str | None = None) -> DescribeQuorumResponse:
    """Kafka's getErrorResponse: the error at the top, with its own message."""
    return DescribeQuorumResponse(error_code=code, error_message=default_message(code), topics=[], nodes=[])


HANDLER = ApiHandler(API_KEY, handle, error_response)
