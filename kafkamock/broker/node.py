"""One emulated broker of the cluster: its id, the address clients reach it at, whether it is up (and registered),
its own layer of broker configs, and its own fetch and share sessions. A request carries the node it arrived on."""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkamock.broker.config import BrokerConfig
from kafkamock.broker.fetch_sessions import FetchSessions
from kafkamock.broker.share.sessions import ShareSessions


@dataclass
class Node:
    node_id: int
    host: str                      # the advertised address (what Metadata and FindCoordinator tell clients)
    port: int
    config: BrokerConfig = field(default_factory=BrokerConfig, repr=False)
    rack: str | None = None
    up: bool = True
    registered: bool = True        # False once UnregisterBroker removed it (until it starts again)
    fetch_sessions: FetchSessions = field(default_factory=FetchSessions, repr=False)
    share_sessions: ShareSessions = field(default_factory=lambda: ShareSessions(lambda: 2000), repr=False)
    endpoints: dict[str, tuple[str, int]] = field(default_factory=dict)   # advertised address per listener

    def address(self, listener: str | None = None) -> tuple[str, int]:
        """The address this node advertises on ``listener``: Kafka answers a request with the endpoints of the
        listener it arrived on."""
        return self.endpoints.get(listener, (self.host, self.port)) if listener else (self.host, self.port)

    def endpoint(self, listener: str | None = None) -> dict:
        host, port = self.address(listener)
        return {"node_id": self.node_id, "host": host, "port": port, "rack": self.rack}
