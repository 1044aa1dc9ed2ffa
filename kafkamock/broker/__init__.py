"""The broker core: cluster state, partition logs and one handler per API, free of I/O (docs/architecture.md)."""

from kafkamock.broker.clock import Clock, ManualClock, SystemClock
from kafkamock.broker.config import BrokerConfig
from kafkamock.broker.control import Control, ControlError
from kafkamock.broker.core import Cluster, ConnectionInfo, Request
from kafkamock.broker.errors import ErrorCode, KafkaError
from kafkamock.broker.node import Node
from kafkamock.broker.outcome import Close, NoResponse, Outcome, Respond, Wait, Waiter

__all__ = ["BrokerConfig", "Clock", "Close", "Cluster", "ConnectionInfo", "Control", "ControlError", "ErrorCode",
           "KafkaError", "ManualClock", "NoResponse", "Node", "Outcome", "Request", "Respond", "SystemClock", "Wait",
           "Waiter"]
