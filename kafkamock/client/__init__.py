"""kafkamock's own client side (trio): a typed connection, cluster routing, offsets, a range reader and an
idempotent producer. Tests, tooling and the PySpark connector use it."""

from kafkamock.client.cluster import KafkaClient
from kafkamock.client.connection import KafkaConnection, KafkaConnectionError
from kafkamock.client.errors import KafkaResponseError
from kafkamock.client.offsets import EARLIEST, LATEST, list_offsets, partition_counts
from kafkamock.client.producer import OutgoingRecord, Producer
from kafkamock.client.reader import FetchedChunk, read_range

__all__ = ["EARLIEST", "LATEST", "FetchedChunk", "KafkaClient", "KafkaConnection", "KafkaConnectionError",
           "KafkaResponseError", "OutgoingRecord", "Producer", "list_offsets", "partition_counts", "read_range"]
