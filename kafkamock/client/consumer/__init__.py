"""kafkamock's consumer (classic and KIP-848 groups, KIP-983 delayed revocation)."""

from kafkamock.client.consumer.consumer import Consumer

__all__ = ["Consumer"]
