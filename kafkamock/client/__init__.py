"""kafkamock's own client side (trio): a typed connection and cluster routing, grown into full clients later."""

from kafkamock.client.cluster import KafkaClient
from kafkamock.client.connection import KafkaConnection, KafkaConnectionError

__all__ = ["KafkaClient", "KafkaConnection", "KafkaConnectionError"]
