"""Share groups (KIP-932): share-partition record states, acquisition locks and the durable state of the seed page.

Only the share-partition core is here so far (``partition.py``, ``state.py``); membership, sessions and the
ShareFetch/ShareAcknowledge handlers come with the rest of the share-group work, and the share-group APIs are not
advertised until then.
"""

from kafkamock.broker.share.partition import AcquiredRun, SharePartition
from kafkamock.broker.share.state import AckType, RecordState

__all__ = ["AckType", "AcquiredRun", "RecordState", "SharePartition"]
