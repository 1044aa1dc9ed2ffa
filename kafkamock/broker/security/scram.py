"""SCRAM credentials per user and mechanism, as Kafka's ScramControlManager keeps them: salt, StoredKey,
ServerKey and iterations (never the password), changed by AlterUserScramCredentials and persisted with the
cluster metadata."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kafkamock.broker.errors import ErrorCode
from kafkamock.security_codes import ScramMechanism

MECHANISMS = {int(m): m.mechanism_name for m in ScramMechanism if m}   # Kafka's ScramMechanism types
TYPES = {name: t for t, name in MECHANISMS.items()}
HASHES = {m.mechanism_name: m.hash_name for m in ScramMechanism if m}
MIN_ITERATIONS = 4096                                          # both mechanisms (ScramMechanism.minIterations)
MAX_ITERATIONS = 16384                                         # ScramControlManager.MAX_ITERATIONS


@dataclass(frozen=True, slots=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    @classmethod
    def from_salted_password(cls, mechanism: str, salt: bytes, salted_password: bytes,
                             iterations: int) -> ScramCredential:
        """RFC 5802: ClientKey = HMAC(SaltedPassword, "Client Key"), StoredKey = H(ClientKey), ServerKey = HMAC(
        SaltedPassword, "Server Key")."""
        digest = HASHES[mechanism]
        client_key = hmac.new(salted_password, b"Client Key", digest).digest()
        return cls(salt, hashlib.new(digest, client_key).digest(),
                   hmac.new(salted_password, b"Server Key", digest).digest(), iterations)

    @classmethod
    def from_password(cls, mechanism: str, password: str, iterations: int = MIN_ITERATIONS,
                      salt: bytes | None = None) -> ScramCredential:
        salt = os.urandom(32) if salt is None else salt
        salted = hashlib.pbkdf2_hmac(HASHES[mechanism], password.encode(), salt, iterations)
        return cls.from_salted_password(mechanism, salt, salted, iterations)


class CredentialError(Exception):
    def __init__(self, code: ErrorCode, message: str):
        super().__init__(message)
        self.code, self.message = code, message


class ScramCredentials:
    """{(user, mechanism name): credential}; ``changed`` is called after every change (persistence)."""

    def __init__(self, changed: Callable[[], None] = lambda: None) -> None:
        self._credentials: dict[tuple[str, str], ScramCredential] = {}
        self._changed = changed

    def get(self, user: str, mechanism: str) -> ScramCredential | None:
        return self._credentials.get((user, mechanism))

    def users(self) -> list[str]:
        return sorted({user for user, _ in self._credentials})

    def of_user(self, user: str) -> dict[str, ScramCredential]:
        return {m: c for (u, m), c in sorted(self._credentials.items()) if u == user}

    def set_password(self, user: str, password: str, mechanisms: Iterable[str] = ("SCRAM-SHA-256", "SCRAM-SHA-512"),
                     iterations: int = MIN_ITERATIONS) -> None:
        """A convenience for tests and ``kafkamock serve --scram-user``: the credentials Kafka's
        ``kafka-configs --alter --add-config 'SCRAM-SHA-512=[password=...]'`` would store."""
        for mechanism in mechanisms:
            check_upsertion(user, TYPES.get(mechanism, 0), iterations)
            self._credentials[(user, mechanism)] = ScramCredential.from_password(mechanism, password, iterations)
        self._changed()

    def put(self, user: str, mechanism: str, credential: ScramCredential) -> None:
        self._credentials[(user, mechanism)] = credential

    def delete(self, user: str, mechanism: str) -> None:
        del self._credentials[(user, mechanism)]

    def commit(self) -> None:
        self._changed()

    def snapshot(self) -> list[dict]:
        b64 = lambda b: base64.b64encode(b).decode()   # noqa: E731
        return [{"user": user, "mechanism": mechanism, "salt": b64(c.salt), "stored_key": b64(c.stored_key),
                 "server_key": b64(c.server_key), "iterations": c.iterations}
                for (user, mechanism), c in sorted(self._credentials.items())]

    def restore(self, entries: list[dict]) -> None:
        self._credentials.clear()
        for e in entries:
            self._credentials[(e["user"], e["mechanism"])] = ScramCredential(
                base64.b64decode(e["salt"]), base64.b64decode(e["stored_key"]), base64.b64decode(e["server_key"]),
                int(e["iterations"]))


def check_name_and_mechanism(user: str, mechanism_type: int) -> None:
    if not user:
        raise CredentialError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
    if mechanism_type not in MECHANISMS:
        raise CredentialError(ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")


def check_upsertion(user: str, mechanism_type: int, iterations: int) -> None:
    check_name_and_mechanism(user, mechanism_type)
    if iterations < MIN_ITERATIONS:
        raise CredentialError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
    if iterations > MAX_ITERATIONS:
        raise CredentialError(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
