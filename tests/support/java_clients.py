"""Real Java clients (kafka-clients 4.3.1's KafkaProducer, KafkaConsumer and Admin) against a kafkamock broker.

``tests/java/ClientScenarios.java`` runs one scenario per JVM and prints one JSON line; this module compiles it
once (cached in ``.cache/java/classes-clients/<hash>``, like ``support.oracle.build``), runs scenarios with a
timeout and parses the line. ``WireTap`` records what the broker was asked and answered, for failure reports.

    clients = JavaClients(build())
    clients.produce(bootstrap, "orders", [{"key": "k", "value": "v", "headers": [("h", "x")], "timestamp": 1}])
    clients.consume(bootstrap, "orders", count=1)["records"]
    clients.admin(bootstrap, [{"op": "describeCluster"}])[0]
    clients.txn(bootstrap, "tx", [{"op": "init"}, {"op": "begin"}, {"op": "send", ...}, {"op": "commit"}])
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from support.oracle import DEFAULT_CACHE, JAVA_DIR, compile_java, find_java
from support.scenario_runs import ScenarioError, run_scenario

SOURCE = JAVA_DIR / "ClientScenarios.java"
MAIN_CLASS = "ClientScenarios"
JVM_ARGS = (
    "-Xmx256m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",          # short-lived JVMs: C1 only starts faster and is plenty
    "-Xshare:auto",
    "-Dslf4j.internal.verbosity=ERROR",  # no "No SLF4J providers" banner on stderr
)
DEFAULT_TIMEOUT = 60.0  # seconds per JVM; the clients' own timeouts (10-15 s) normally fire long before

__all__ = ["JavaClients", "RunningScenario", "ScenarioError", "WireTap", "build"]


def build(cache: str | Path = DEFAULT_CACHE) -> list[str]:
    """The scenarios' classpath: ClientScenarios.java compiled against the jars (as the oracle is)."""
    return compile_java(SOURCE, MAIN_CLASS, "classes-clients", cache)


def _record(r: Mapping[str, Any]) -> dict:
    out: dict[str, Any] = {"key": r.get("key"), "value": r.get("value"),
                           "headers": [list(h) for h in r.get("headers", ())]}
    for optional in ("timestamp", "partition"):
        if r.get(optional) is not None:
            out[optional] = r[optional]
    return out


class JavaClients:
    """Runs ClientScenarios, one JVM per call; ``runs`` keeps ``(scenario, seconds)`` for timing reports."""

    def __init__(self, classpath: Iterable[str | Path], java: str | None = None, jvm_args: Iterable[str] = JVM_ARGS,
                 timeout: float = DEFAULT_TIMEOUT):
        self.classpath = os.pathsep.join(str(p) for p in classpath)
        found = find_java()
        self.java = java or (found[0] if found else "java")
        self.jvm_args = list(jvm_args)
        self.timeout = timeout
        self.runs: list[tuple[str, float]] = []

    def run(self, scenario: str, bootstrap: str, spec: Mapping[str, Any], *, timeout: float | None = None) -> dict:
        """Run one scenario; its JSON result, or ScenarioError (with the Java error and stderr) when it failed."""
        command = [self.java, *self.jvm_args, "-cp", self.classpath, MAIN_CLASS, scenario, bootstrap, "-"]
        proc, result = run_scenario(command, spec, scenario=scenario, program="the JVM",
                                    timeout=timeout or self.timeout, runs=self.runs)
        if proc.returncode != 0 or result is None:
            java_error = (result or {}).get("error")
            what = (f"{java_error['class']}: {java_error['message']}" if java_error and "class" in java_error
                    else f"exit {proc.returncode}, stdout {proc.stdout[-500:]!r}")
            raise ScenarioError(f"{scenario} failed: {what}\nJVM stderr tail:\n{proc.stderr[-3000:]}",
                                result=result, stderr=proc.stderr, returncode=proc.returncode)
        return result

    # -- scenario helpers (see the comment at the top of ClientScenarios.java for every option)

    def produce(self, bootstrap: str, topic: str, records: Iterable[Mapping[str, Any]] | None = None, *,
                batches: Iterable[Iterable[Mapping[str, Any]]] | None = None, compression: str | None = None,
                idempotent: bool = True, acks: str = "all", config: Mapping[str, Any] | None = None,
                **extra: Any) -> dict:
        """Send records (one group, flushed) or batches (several groups, each flushed); RecordMetadata back."""
        spec: dict[str, Any] = {"topic": topic, "idempotent": idempotent, "acks": acks, "config": dict(config or {}),
                                **extra}
        if batches is not None:
            spec["batches"] = [[_record(r) for r in group] for group in batches]
        else:
            spec["records"] = [_record(r) for r in records or ()]
        if compression is not None:
            spec["compression"] = compression
        return self.run("produce", bootstrap, spec)

    def consume(self, bootstrap: str, topic: str, *, count: int, partitions: Iterable[int] = (0,),
                seek: str | int | Mapping[int, int] = "beginning", timeout_ms: int = 10_000,
                extra_poll_ms: int = 0, config: Mapping[str, Any] | None = None, **extra: Any) -> dict:
        """assign + seek, then poll until ``count`` records (or ``timeout_ms``); records, positions, timed_out."""
        if isinstance(seek, Mapping):
            seek = {str(p): o for p, o in seek.items()}
        spec = {"topic": topic, "partitions": list(partitions), "seek": seek, "count": count,
                "timeout_ms": timeout_ms, "extra_poll_ms": extra_poll_ms, "config": dict(config or {}), **extra}
        return self.run("consume", bootstrap, spec)

    def start(self, scenario: str, bootstrap: str, spec: Mapping[str, Any], *,
              interactive: bool = False) -> RunningScenario:
        """Start a scenario without waiting for it (``stream``): the test acts on the broker meanwhile.

        ``interactive``: the SPEC goes as the first line of standard input ("-line") and the input stays open for
        commands (``RunningScenario.stop()`` sends the ``group`` scenario's "stop")."""
        command = [self.java, *self.jvm_args, "-cp", self.classpath, MAIN_CLASS, scenario, bootstrap,
                   "-line" if interactive else "-"]
        return RunningScenario(scenario, command, spec, self, interactive=interactive)

    def group(self, bootstrap: str, group: str, topics: Iterable[str] | None = None, *, count: int,
              protocol: str = "classic", timeout_ms: int = 30_000, config: Mapping[str, Any] | None = None,
              **extra: Any) -> dict:
        """One group member (``group`` scenario): subscribe, poll and commit until ``count`` records, then close."""
        spec = {"group": group, "protocol": protocol, "count": count, "timeout_ms": timeout_ms,
                "config": dict(config or {}), **extra}
        if topics is not None:
            spec["topics"] = list(topics)
        return self.run("group", bootstrap, spec, timeout=timeout_ms / 1000 + 30)

    def start_group(self, bootstrap: str, group: str, topics: Iterable[str] | None = None, *,
                    protocol: str = "classic", timeout_ms: int = 120_000, config: Mapping[str, Any] | None = None,
                    **extra: Any) -> RunningScenario:
        """A group member running until ``stop()`` (or ``timeout_ms``); its PROGRESS events in ``progress``."""
        spec = {"group": group, "protocol": protocol, "until_stopped": True, "timeout_ms": timeout_ms,
                "config": dict(config or {}), **extra}
        if topics is not None:
            spec["topics"] = list(topics)
        return self.start("group", bootstrap, spec, interactive=True)

    def txn(self, bootstrap: str, transactional_id: str, steps: Iterable[Mapping[str, Any]], *,
            config: Mapping[str, Any] | None = None, timeout: float | None = None, **extra: Any) -> list[dict]:
        """The ``txn`` scenario: transactional producers, group consumers and an Admin run ``steps`` in one JVM; one
        ``{"index", "op", "ok", "result", "error", "label"...}`` per step (a failed step does not stop the run)."""
        spec = {"transactional_id": transactional_id, "steps": list(steps), "config": dict(config or {}), **extra}
        return self.run("txn", bootstrap, spec, timeout=timeout)["steps"]

    def share(self, bootstrap: str, group: str, topic: str, steps: Iterable[Mapping[str, Any]], *,
              config: Mapping[str, Any] | None = None, timeout: float | None = None) -> list[dict]:
        """The ``share`` scenario: KafkaShareConsumers of one share group (and an Admin) run ``steps`` in one JVM; one
        report per step, as ``txn``."""
        spec = {"group": group, "topic": topic, "steps": list(steps), "config": dict(config or {})}
        return self.run("share", bootstrap, spec, timeout=timeout)["steps"]

    def admin(self, bootstrap: str, ops: Iterable[Mapping[str, Any]], *, config: Mapping[str, Any] | None = None,
              check: bool = True) -> list[dict]:
        """Run admin ops in order; one ``{"op", "result"}`` (or ``{"op", "error"}`` when not ``check``) per op."""
        spec = {"ops": list(ops), "config": dict(config or {})}
        try:
            return self.run("admin", bootstrap, spec)["results"]
        except ScenarioError as exc:
            if check or exc.result is None or "results" not in exc.result:
                raise
            return exc.result["results"]


class RunningScenario:
    """A scenario JVM running in the background. Its "PROGRESS key=value ..." lines on stderr are parsed as they come
    (``progress``: every line's fields, in order; ``acked``/``failed`` for ``stream``); ``wait_progress(n)`` blocks
    until n acknowledgements, ``wait_for(condition)`` until any condition on them holds, ``stop()`` sends "stop"
    (``interactive`` runs), ``result()`` waits for the JSON line."""

    def __init__(self, scenario: str, command: list[str], spec: Mapping[str, Any], owner: JavaClients, *,
                 interactive: bool = False):
        import threading

        self.scenario, self.owner = scenario, owner
        self.started = time.monotonic()
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, encoding="utf-8", errors="replace")
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(spec) + ("\n" if interactive else ""))
        if interactive:
            self.proc.stdin.flush()
        else:
            self.proc.stdin.close()
        self.acked = self.failed = 0
        self.progress: list[dict[str, str]] = []
        self.stderr_lines: list[str] = []
        self._stdout: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        self._out_reader = threading.Thread(target=lambda: self._stdout.append(self.proc.stdout.read()),  # type: ignore[union-attr]
                                            daemon=True)
        self._out_reader.start()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._changed:
                self.stderr_lines.append(line)
                if line.startswith("PROGRESS "):
                    fields = dict(part.split("=", 1) for part in line.split()[1:] if "=" in part)
                    self.progress.append(fields)
                    if "acked" in fields:
                        self.acked, self.failed = int(fields["acked"]), int(fields["failed"])
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    @property
    def last(self) -> dict[str, str]:
        """The fields of the latest PROGRESS line ({} before the first)."""
        with self._changed:
            return dict(self.progress[-1]) if self.progress else {}

    def stderr_tail(self, lines: int = 40) -> str:
        with self._changed:
            return "".join(self.stderr_lines[-lines:])

    def wait_for(self, condition: Callable[[], bool], timeout: float = 60.0, what: str = "a condition") -> None:
        """Block until ``condition()`` holds, re-checked after every stderr line; ScenarioError (with the stderr
        tail) at the deadline or when the JVM ends first."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not condition():
                remaining = deadline - time.monotonic()
                ended = self.proc.poll() is not None and not self._reader.is_alive()
                if remaining <= 0 or ended:
                    why = f"the JVM exited ({self.proc.returncode})" if ended else f"timed out after {timeout} s"
                    raise ScenarioError(f"{self.scenario}: {why} waiting for {what}; last progress {self.progress[-1:]}"
                                        f"; stderr tail:\n{''.join(self.stderr_lines[-40:])}")
                self._changed.wait(remaining)

    def wait_progress(self, acked: int, timeout: float = 60.0) -> None:
        self.wait_for(lambda: self.acked >= acked, timeout, f"{acked} acknowledgements (have {self.acked})")

    def stop(self) -> None:
        """Ask an interactive scenario to finish (the "stop" command, then the end of its input)."""
        stdin = self.proc.stdin
        if stdin is not None and not stdin.closed:
            try:
                stdin.write("stop\n")
                stdin.close()
            except (BrokenPipeError, OSError):
                pass

    def result(self, timeout: float = DEFAULT_TIMEOUT * 3) -> dict:
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise ScenarioError(f"{self.scenario}: the JVM did not finish in {timeout} s; stderr tail:\n"
                                f"{''.join(self.stderr_lines[-40:])}") from None
        finally:
            self._reader.join(timeout=5)
            self._out_reader.join(timeout=5)
            self.owner.runs.append((self.scenario, time.monotonic() - self.started))
        stdout = "".join(self._stdout)
        lines = [line for line in stdout.splitlines() if line.strip()]
        result = json.loads(lines[-1]) if lines else None
        if self.proc.returncode != 0 or result is None:
            raise ScenarioError(f"{self.scenario} failed (exit {self.proc.returncode}): "
                                f"{(result or {}).get('error')}\nJVM stderr tail:\n{''.join(self.stderr_lines[-40:])}",
                                result=result, stderr="".join(self.stderr_lines), returncode=self.proc.returncode)
        return result

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass


class WireTap:
    """Records every request the broker core handles and its response, to explain a client failure.

    Wraps ``Cluster.handle`` of one broker instance (test-local; the broker code is untouched). Requests the
    connection refuses before the core (unsupported API or version) are not here: the server logs those.
    """

    def __init__(self, broker: Any):
        from kafkamock.broker import Respond, Wait
        from kafkamock.codec.registry import default_registry

        self.entries: list[dict] = []
        requests = default_registry().requests
        original = broker.handle

        def traced(request):
            spec = requests.get(request.api_key)
            entry = {"api": spec.api_name if spec else str(request.api_key), "version": request.version,
                     "client_id": request.client_id, "request": request.body, "response": None}
            self.entries.append(entry)
            try:
                result = original(request)
            except Exception as exc:
                entry["exception"] = repr(exc)
                raise
            if isinstance(result, Wait):
                check = result.waiter.check

                def checking(final: bool):
                    response = check(final)
                    if response is not None:
                        entry["response"] = response.body if isinstance(response, Respond) else response
                    return response
                result.waiter.check = checking
            else:
                entry["response"] = result.body if isinstance(result, Respond) else result
            return result

        broker.handle = traced

    def apis(self) -> list[tuple[str, int]]:
        """``(api, version)`` of each request, in arrival order."""
        return [(e["api"], e["version"]) for e in self.entries]

    def find(self, api: str) -> list[dict]:
        return [e for e in self.entries if e["api"] == api]

    def format(self, limit: int = 800) -> str:
        lines = []
        for e in self.entries:
            line = (f"{e['api']} v{e['version']} ({e['client_id']}): {_short(e['request'])} -> "
                    f"{e.get('exception') or _short(e['response'])}")
            lines.append(line if len(line) <= limit else line[:limit] + " ...")
        return "\n".join(lines)


def _short(value: Any) -> str:
    """repr with records bytes abbreviated."""
    def shrink(v: Any) -> Any:
        if isinstance(v, bytes | bytearray | memoryview) and len(v) > 32:
            return f"<{len(v)} bytes>"
        if isinstance(v, Mapping):
            return {k: shrink(x) for k, x in v.items() if k != "_unknown_tagged_fields" or x}
        if isinstance(v, list):
            return [shrink(x) for x in v]
        return v
    return repr(shrink(value))
