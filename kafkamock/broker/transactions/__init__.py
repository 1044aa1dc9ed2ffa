"""The transaction coordinator (KIP-98, KIP-360's epoch rules, KIP-890's verification and per-transaction epochs)."""

from kafkamock.broker.transactions.coordinator import TransactionCoordinator
from kafkamock.broker.transactions.metadata import TxnMetadata
from kafkamock.broker.transactions.state import TxnState

__all__ = ["TransactionCoordinator", "TxnMetadata", "TxnState"]
