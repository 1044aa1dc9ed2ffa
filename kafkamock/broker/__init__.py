"""The broker core: cluster state, partition logs and one handler per API, free of I/O (DESIGN.md §2)."""

from kafkamock.broker.clock import Clock, ManualClock, SystemClock
from kafkamock.broker.config import BrokerConfig
from kafkamock.broker.core import Broker, ConnectionInfo, Pending, Request
from kafkamock.broker.errors import ErrorCode, KafkaError

__all__ = ["Broker", "BrokerConfig", "Clock", "ConnectionInfo", "ErrorCode", "KafkaError", "ManualClock", "Pending",
           "Request", "SystemClock"]
