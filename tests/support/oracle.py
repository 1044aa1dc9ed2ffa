"""The Python side of the Java oracle: build it (jars + javac) and talk to one long-lived JVM over its line protocol.

Why a JVM at all: Apache Kafka's generated message classes (kafka-clients 4.3.1) are the reference for the wire
format, so the codec is checked byte for byte against them (docs/architecture.md). One JVM serves a whole test session;
requests are batched (thousands of items per line) because a round trip costs far more than an item.

    oracle = KafkaOracle(build())            # or the session fixture ``kafka_oracle`` from tests/conftest.py
    with oracle:
        [data] = oracle.encode([("ApiVersionsRequest", 3, {"clientSoftwareName": "a", "clientSoftwareVersion": "b"})])
        [json] = oracle.decode([("ApiVersionsRequest", 3, data)])

``encode``/``decode`` return one result per item, in order: ``bytes``/``dict`` on success, an ``OracleError``
instance (not raised) when Java refused that item, so a differential test can compare refusals too.
``encode_one``/``decode_one`` raise instead. The JSON is Kafka's JsonConverter form; see ``kafka_json``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
JAVA_DIR = REPO / "tests" / "java"
SOURCE = JAVA_DIR / "KafkaOracle.java"
DEFAULT_CACHE = REPO / ".cache" / "java"
BATCH = 2000  # items per request line: big enough to amortise the round trip, small enough to stay a few MB
JVM_ARGS = (
    "-Xmx1g",
    "-XX:+UseSerialGC",
    "-Xshare:auto",
    "-Dslf4j.internal.verbosity=ERROR",  # no "No SLF4J providers" banner on stderr
)

__all__ = ["BATCH", "KafkaOracle", "OracleCrashed", "OracleError", "build", "find_java"]


class OracleError(Exception):
    """Java refused one item (its exception class and message are in ``message``)."""

    def __init__(self, name: str, version: int, message: str):
        self.name, self.version, self.message = name, version, message
        super().__init__(f"{name} v{version}: {message}")


class OracleCrashed(RuntimeError):
    """The JVM died or answered something that is not the protocol."""


def find_java() -> tuple[str, str] | None:
    """``(java, javac)`` from ``$JAVA_HOME/bin`` or ``PATH``; None when no JDK is installed."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java, javac = Path(home, "bin", "java"), Path(home, "bin", "javac")
        if java.exists() and javac.exists():
            return str(java), str(javac)
    java, javac = shutil.which("java"), shutil.which("javac")
    return (java, javac) if java and javac else None


def _fetch_jars(cache: Path, kind: str = "clients") -> list[Path]:
    """The jars of ``kind`` (tests/java/fetch_jars.py: ``clients`` or ``kafka``), resolved into ``cache`` once."""
    spec = importlib.util.spec_from_file_location("kafkamock_fetch_jars", JAVA_DIR / "fetch_jars.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main([kind, str(cache)])


def compile_java(source: Path, main_class: str, subdir: str, cache: str | Path = DEFAULT_CACHE) -> list[str]:
    """Fetch the jars and compile ``source`` into ``cache/subdir/<hash>`` (keyed by the source and the jar names,
    so an edit recompiles); return the classpath."""
    found = find_java()
    if found is None:
        raise FileNotFoundError("no JDK: need java and javac (JDK 17) on PATH or in $JAVA_HOME/bin")
    _, javac = found
    cache = Path(cache).resolve()
    jars = _fetch_jars(cache)
    digest = hashlib.sha256(source.read_bytes())
    for jar in jars:
        digest.update(jar.name.encode() + b"\0")
    classes = cache / subdir / digest.hexdigest()[:16]
    if not (classes / f"{main_class}.class").exists():
        classes.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix="build-", dir=classes.parent))
        cp = os.pathsep.join(str(j) for j in jars)
        result = subprocess.run([javac, "-encoding", "UTF-8", "-cp", cp, "-d", str(tmp), str(source)],
                                capture_output=True, text=True)
        if result.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(f"javac failed:\n{result.stdout}{result.stderr}")
        try:
            tmp.rename(classes)
        except OSError:  # another session won the race: use its classes
            shutil.rmtree(tmp, ignore_errors=True)
    return [str(classes), *(str(j) for j in jars)]


def build(cache: str | Path = DEFAULT_CACHE) -> list[str]:
    """The oracle's classpath: KafkaOracle.java compiled against the jars."""
    return compile_java(SOURCE, "KafkaOracle", "classes", cache)


Item = dict | Sequence


class KafkaOracle:
    """One JVM running KafkaOracle; thread-safe, restarts itself after a crash on the next request."""

    def __init__(self, classpath: Iterable[str | Path], java: str | None = None, jvm_args: Iterable[str] = JVM_ARGS):
        self.classpath = os.pathsep.join(str(p) for p in classpath)
        found = find_java()
        self.java = java or (found[0] if found else "java")
        self.jvm_args = list(jvm_args)
        self._proc: subprocess.Popen | None = None
        self._stderr = None
        self._lock = threading.Lock()

    # -- lifecycle

    def start(self) -> KafkaOracle:
        if self._proc is not None and self._proc.poll() is None:
            return self
        if self._stderr is not None:
            self._stderr.close()
        self._stderr = tempfile.TemporaryFile()  # read back only to explain a crash
        self._proc = subprocess.Popen(
            [self.java, *self.jvm_args, "-cp", self.classpath, "KafkaOracle"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
        )
        return self

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.poll() is None:
                proc.stdin.write(b'{"op":"quit"}\n')
                proc.stdin.close()
                proc.stdout.read()
                proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        finally:
            for stream in (proc.stdin, proc.stdout, self._stderr):
                if stream is not None and not stream.closed:
                    stream.close()
            self._stderr = None

    def __enter__(self) -> KafkaOracle:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # -- protocol

    def request(self, payload: dict) -> dict:
        """Send one request object, return the response object (raw protocol access)."""
        line = json.dumps(payload, separators=(",", ":"), allow_nan=True).encode("utf-8") + b"\n"
        with self._lock:
            self.start()
            proc = self._proc
            try:
                proc.stdin.write(line)
                proc.stdin.flush()
                answer = proc.stdout.readline()
            except OSError as e:
                raise self._crashed(f"lost the JVM: {e}") from e
            if not answer:
                raise self._crashed("the JVM exited")
            try:
                response = json.loads(answer)
            except ValueError as e:
                raise self._crashed(f"not a protocol line: {answer[:200]!r}") from e
        if "error" in response:
            raise OracleCrashed(f"the oracle refused the whole request: {response['error']}")
        return response

    def _crashed(self, what: str) -> OracleCrashed:
        proc, self._proc = self._proc, None
        tail = b""
        if proc is not None:
            try:
                proc.kill()
                proc.wait(timeout=10)
            except Exception:
                pass
            if self._stderr is not None:
                self._stderr.seek(0)
                tail = self._stderr.read()[-4000:]
        return OracleCrashed(f"{what}; JVM stderr:\n{tail.decode('utf-8', 'replace')}")

    def ping(self) -> dict:
        """``{"kafka": "4.3.1", "java": "17..."}``."""
        return self.request({"op": "ping"})

    def _batched(self, op: str, items: list[dict]) -> list[dict]:
        results: list[dict] = []
        for start in range(0, len(items), BATCH):
            chunk = items[start:start + BATCH]
            answer = self.request({"op": op, "items": chunk})["results"]
            if len(answer) != len(chunk):
                raise OracleCrashed(f"{op}: sent {len(chunk)} items, got {len(answer)} results")
            results.extend(answer)
        return results

    def encode(self, items: Iterable[Item]) -> list[bytes | OracleError]:
        """Kafka JSON -> wire bytes. Items: ``(name, version, json)`` or ``{"name", "version", "json"}``."""
        wire = [_item(i, "json") for i in items]
        out: list[bytes | OracleError] = []
        for item, r in zip(wire, self._batched("encode", wire), strict=True):
            out.append(bytes.fromhex(r["hex"]) if "hex" in r else OracleError(item["name"], item["version"], r["error"]))
        return out

    def decode(self, items: Iterable[Item]) -> list[dict | OracleError]:
        """Wire bytes -> Kafka JSON. Items: ``(name, version, data)`` or ``{"name", "version", "data"|"hex"}``.

        Strict: bytes left over after the message are an error. Records fields carry their real bytes (base64).
        """
        wire = [_item(i, "data") for i in items]
        out: list[dict | OracleError] = []
        for item, r in zip(wire, self._batched("decode", wire), strict=True):
            out.append(r["json"] if "json" in r else OracleError(item["name"], item["version"], r["error"]))
        return out

    def encode_one(self, name: str, version: int, json_value: dict) -> bytes:
        [result] = self.encode([(name, version, json_value)])
        if isinstance(result, OracleError):
            raise result
        return result

    def decode_one(self, name: str, version: int, data: bytes) -> dict:
        [result] = self.decode([(name, version, data)])
        if isinstance(result, OracleError):
            raise result
        return result


def _item(item: Any, payload: str) -> dict:
    """Normalise a tuple or dict item to the wire form; bytes travel as hex."""
    if isinstance(item, dict):
        out = {"name": item["name"], "version": item["version"]}
        if payload == "json":
            out["json"] = item["json"]
        else:
            out["hex"] = item["hex"] if "hex" in item else bytes(item["data"]).hex()
        return out
    name, version, value = item
    if payload == "json":
        return {"name": name, "version": version, "json": value}
    return {"name": name, "version": version, "hex": bytes(value).hex()}
