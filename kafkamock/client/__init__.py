"""kafkamock's own Kafka clients, on trio: Consumer (classic and KIP-848 groups, KIP-983 delayed revocation),
ShareConsumer (KIP-932 with KIP-1222 RENEW), Producer (idempotent and transactional, KIP-360 recovery) and Admin,
plus the pieces they share (connection, cluster routing, offsets, a range reader). ``kafkamock.client.blocking``
has the same clients for synchronous code. Settings take the Java client's names; errors are ``KafkaError`` with
Kafka's error codes."""

from kafkamock.client.admin import Admin
from kafkamock.client.cluster import KafkaClient
from kafkamock.client.connection import KafkaConnection, KafkaConnectionError
from kafkamock.client.consumer import Consumer
from kafkamock.client.errors import CommitFailedError, IllegalStateError, KafkaError, KafkaResponseError
from kafkamock.client.offsets import EARLIEST, LATEST, list_offsets, partition_counts
from kafkamock.client.producer import FutureRecordMetadata, OutgoingRecord, Producer, RecordMetadata
from kafkamock.client.reader import FetchedChunk, read_range
from kafkamock.client.share_consumer import AcknowledgeType, ShareConsumer
from kafkamock.client.transactions import TransactionAbortedError
from kafkamock.client.types import ConsumerGroupMetadata, ConsumerRecord, OffsetAndMetadata, TopicPartition

__all__ = ["EARLIEST", "LATEST", "AcknowledgeType", "Admin", "CommitFailedError", "Consumer", "ConsumerGroupMetadata",
           "ConsumerRecord", "FetchedChunk", "FutureRecordMetadata", "IllegalStateError", "KafkaClient",
           "KafkaConnection", "KafkaConnectionError", "KafkaError", "KafkaResponseError", "OffsetAndMetadata",
           "OutgoingRecord", "Producer", "RecordMetadata", "ShareConsumer", "TopicPartition",
           "TransactionAbortedError", "list_offsets", "partition_counts", "read_range"]
