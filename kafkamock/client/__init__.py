"""kafkamock's own clients (trio): Consumer (classic and KIP-848 groups, KIP-983 delayed revocation), Producer,
and the pieces they share (connection, cluster routing, offsets, a range reader). ``kafkamock.client.blocking`` has
the same clients for synchronous code."""

from kafkamock.client.cluster import KafkaClient
from kafkamock.client.connection import KafkaConnection, KafkaConnectionError
from kafkamock.client.consumer import Consumer, GroupMetadata
from kafkamock.client.errors import CommitFailedError, KafkaError, KafkaResponseError
from kafkamock.client.offsets import EARLIEST, LATEST, list_offsets, partition_counts
from kafkamock.client.producer import OutgoingRecord, Producer
from kafkamock.client.reader import FetchedChunk, read_range
from kafkamock.client.types import ConsumerRecord, OffsetAndMetadata, TopicPartition

__all__ = ["EARLIEST", "LATEST", "CommitFailedError", "Consumer", "ConsumerRecord", "FetchedChunk", "GroupMetadata",
           "KafkaClient", "KafkaConnection", "KafkaConnectionError", "KafkaError", "KafkaResponseError",
           "OffsetAndMetadata", "OutgoingRecord", "Producer", "TopicPartition", "list_offsets", "partition_counts",
           "read_range"]
