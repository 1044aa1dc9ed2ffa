"""A request as the core sees it: its header, its decoded body, the connection it came on and the node it arrived at.

The I/O shell builds one per frame (``server/connection.py``); the dispatch (``core.Cluster.handle``) and the handlers
(``handlers/``) read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from kafkamock.broker.faults import RequestFaults
    from kafkamock.broker.node import Node
    from kafkamock.broker.security.session import SaslSession


@dataclass(slots=True)
class ConnectionInfo:
    """What the broker knows about one client connection (for logs and per-connection state)."""

    id: int
    peer: str = "?"
    client_id: str | None = None
    software_name: str | None = None
    software_version: str | None = None
    # Security: the listener the connection came in on, its security protocol, and who the client is
    # (Kafka's KafkaPrincipal as "User:<name>"; set by TLS client authentication or SASL).
    listener: str = "PLAINTEXT"
    security_protocol: str = "PLAINTEXT"
    principal: str = "User:ANONYMOUS"
    # The SASL exchange's state on a SASL listener (None elsewhere): see security/session.py.
    sasl: SaslSession | None = field(default=None, repr=False)

    @property
    def host(self) -> str:
        """The client's address without the port, as ACLs name hosts."""
        host = self.peer.rsplit(":", 1)[0] if ":" in self.peer else self.peer
        return host.strip("[]")


BodyT = TypeVar("BodyT")


@dataclass
class Request(Generic[BodyT]):
    """One request: ``body`` is its decoded message, an instance of the generated class of its API
    (``kafkamock.codec.messages``), so a handler that declares ``request: Request[messages.FetchRequest]`` reads
    typed fields (``Request`` alone leaves the body untyped)."""

    api_key: int
    version: int
    correlation_id: int
    client_id: str | None
    body: BodyT
    connection: ConnectionInfo = field(default_factory=lambda: ConnectionInfo(0))
    node: Node | None = None                 # the node it arrived on (None: the first node)
    faults: RequestFaults | None = None      # partition-level faults the control API pushed for it
    size: int = 0                            # the request's size in bytes (what a produce quota counts)
    mute_until_ms: int = 0                   # a quota throttled it: read nothing more from its connection until then

    @property
    def arrived_on(self) -> Node:
        """The node the request arrived on: the dispatch (``Cluster.handle``) sets it before any handler runs."""
        if self.node is None:
            raise RuntimeError("a handler ran before Cluster.handle set the request's node")
        return self.node
