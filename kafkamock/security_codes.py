"""Kafka's codes for ACLs and SCRAM credentials, shared by the broker, which keeps and enforces them, and the Admin
client, which sends them (as ``errors.py`` shares the error codes).

The values are the wire codes of Apache Kafka 4.3's ``org.apache.kafka.common.resource.ResourceType`` and
``PatternType``, ``org.apache.kafka.common.acl.AclOperation`` and ``AclPermissionType``, and
``org.apache.kafka.clients.admin.ScramMechanism``. ``ResourceType`` is the ACL resource type: a config resource's
type (``ConfigResource.Type``: TOPIC 2, BROKER 4, BROKER_LOGGER 8, CLIENT_METRICS 16, GROUP 32) is another code
set, ``kafkamock.client.admin.ResourceType``.
"""

from __future__ import annotations

from enum import IntEnum


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


class ScramMechanism(IntEnum):
    """A SCRAM mechanism by its AlterUserScramCredentials/DescribeUserScramCredentials type code."""

    UNKNOWN = 0
    SCRAM_SHA_256 = 1
    SCRAM_SHA_512 = 2

    @property
    def mechanism_name(self) -> str:
        """The SASL mechanism name ("SCRAM-SHA-256"); "UNKNOWN" for UNKNOWN."""
        return self.name.replace("_", "-")

    @property
    def hash_name(self) -> str:
        """The hashlib name of its hash function ("sha256")."""
        if self is ScramMechanism.UNKNOWN:
            raise ValueError("the UNKNOWN SCRAM mechanism has no hash function")
        return "sha" + self.name.rsplit("_", 1)[1]

    @classmethod
    def from_mechanism_name(cls, name: str) -> ScramMechanism:
        """The mechanism of a SASL name ("SCRAM-SHA-512"), UNKNOWN for any other name (Java's
        ``fromMechanismName``)."""
        return next((m for m in cls if m and m.mechanism_name == name), cls.UNKNOWN)
