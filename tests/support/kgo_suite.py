"""franz-go's client integration suite (``pkg/kgo``, pinned by ``tests/kgo/go.mod``) against ``kafkamock serve``.

The suite is another project's judge of a broker: franz-go runs it against its own fake (kfake) and against Apache
Kafka. Here it is built once into ``.cache/kgo`` (``go test -c``) and run with the environment it reads:

- ``KGO_SEEDS``: the brokers' PLAINTEXT listener; ``KGO_TEST_RF``: the replication factor of its topics (1 on one
  broker, 3 on three); ``KGO_TEST_RECORDS``: the volume of its ETL tests (500,000 by default; a few thousand keep
  a CI pass short); ``KGO_TEST_CHAOS=1``: every client connection dies after 0.5–1.5 s;
- ``KGO_TEST_SCRAM_SEEDS`` / ``KGO_TEST_SCRAM`` and ``KGO_TEST_OAUTH_SEEDS``: a SCRAM-SHA-256 and an OAUTHBEARER
  (unsecured tokens) listener of the same brokers, so the authentication tests run instead of skipping.

Results come from ``go tool test2json``: every test and subtest with its outcome and, for a skip, its reason.
``Restarter`` kill -9s the broker every few seconds and starts it again on the same data directory and ports while
the suite runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from support.serve_process import REPO, ServeProcess, free_port

MODULE = REPO / "tests" / "kgo"
CACHE = REPO / ".cache" / "kgo"
PACKAGE = "github.com/twmb/franz-go/pkg/kgo"
SCRAM_USER = ("kgo", "kgo-secret")
SKIP_WORDS = re.compile(r"does not support|skipping|not set|still takes", re.IGNORECASE)
# What the suite's helpers expect of a test broker (kfake's run_tests.sh sets the same): KIP-848 members heartbeat
# every second, classic groups start without Kafka's 3 s initial delay.
BROKER_CONFIG = {"group.initial.rebalance.delay.ms": "0", "group.consumer.heartbeat.interval.ms": "1000",
                 "group.consumer.min.heartbeat.interval.ms": "1000"}


def franz_go_version() -> str:
    for line in (MODULE / "go.mod").read_text().splitlines():
        parts = line.split()
        if parts[:2] == ["require", "github.com/twmb/franz-go"]:
            return parts[2]
    raise RuntimeError("tests/kgo/go.mod pins no github.com/twmb/franz-go")


def go() -> str | None:
    return shutil.which("go")


@dataclass
class Suite:
    binary: Path
    source: Path          # the package's directory: some tests read its files, as under `go test`


def build() -> Suite:
    """The suite's test binary, built when go.mod or go.sum changed since (Go's build cache makes a rebuild quick)."""
    exe = go()
    if exe is None:
        raise RuntimeError("the Go toolchain is not installed (make kgo installs it)")
    CACHE.mkdir(parents=True, exist_ok=True)
    binary = CACHE / f"kgo-{franz_go_version()}.test"
    env = {**os.environ, "GOFLAGS": "-mod=readonly"}
    inputs = max((MODULE / name).stat().st_mtime for name in ("go.mod", "go.sum"))
    if not binary.exists() or binary.stat().st_mtime < inputs:
        subprocess.run([exe, "test", "-c", "-o", str(binary), PACKAGE], cwd=MODULE, env=env, check=True)
    source = subprocess.run([exe, "list", "-f", "{{.Dir}}", PACKAGE], cwd=MODULE, env=env, check=True,
                            capture_output=True, text=True).stdout.strip()
    return Suite(binary, Path(source))


@dataclass
class Outcome:
    name: str
    action: str                   # pass, fail or skip
    seconds: float
    reason: str = ""              # a skip's message, the end of a failure's output


@dataclass
class Results:
    label: str
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    exit_code: int = 0
    seconds: float = 0.0
    output: list[str] = field(default_factory=list)     # the raw lines that belong to no test (panics, timeouts)
    retried: dict[str, str] = field(default_factory=dict)   # a known race's test run again: its first failure

    def top(self, action: str) -> list[Outcome]:
        return [o for o in self.outcomes.values() if "/" not in o.name and o.action == action]

    def of(self, action: str) -> list[Outcome]:
        return [o for o in self.outcomes.values() if o.action == action]

    def summary(self) -> dict:
        return {"label": self.label, "franz_go": franz_go_version(), "exit_code": self.exit_code,
                "seconds": round(self.seconds, 1),
                "tests": {a: len(self.top(a)) for a in ("pass", "fail", "skip")},
                "subtests": {a: len(self.of(a)) - len(self.top(a)) for a in ("pass", "fail", "skip")},
                "skipped": {o.name: o.reason for o in self.of("skip")},
                "failed": {o.name: o.reason for o in self.of("fail")},
                "retried": dict(self.retried)}

    def report(self) -> str:
        """What a failed assertion shows: each failure with the end of its output."""
        lines = [f"franz-go {franz_go_version()} kgo suite, {self.label}: exit {self.exit_code}, "
                 f"{self.summary()['tests']}"]
        for o in self.of("fail"):
            lines.append(f"FAIL {o.name} ({o.seconds:.1f} s):\n{o.reason}")
        for name, reason in self.retried.items():
            lines.append(f"{name} failed first, a race of its own ({KNOWN_RACES[name]}), and was run again:\n{reason}")
        if self.exit_code and not self.of("fail"):
            lines.append("\n".join(self.output[-40:]))
        return "\n".join(lines)


# Tests whose failure can be a race of the test's own rather than the broker's, with the race: when such tests are a
# whole run's only failures, they are run once more, alone, against the same broker, and that outcome counts (the
# first failure stays in the report and the saved summary). A broker that fails them for its own reasons fails twice.
KNOWN_RACES = {
    "Test848RegexBrokerResolves":
        "its loop stops once it holds records of as many topics as it wants, and __consumer_offsets, which its regex "
        "matches and the broker assigns it (as Kafka does) and which holds the other tests' commits, counts among "
        "them: with several brokers, the fetch bringing those records can come before the one bringing its second "
        "topic's",
}


def run(suite: Suite, env: dict[str, str], *, label: str, timeout_s: float, run_filter: str | None = None,
        log: Path | None = None) -> Results:
    """Run the suite (or the tests ``run_filter`` matches) with ``env`` added to this process's environment; a
    whole run whose only failures are ``KNOWN_RACES`` runs them once more (``retry_races``)."""
    results = _run(suite, env, label=label, timeout_s=timeout_s, run_filter=run_filter, log=log)
    return results if run_filter else retry_races(suite, env, results, timeout_s=timeout_s, log=log)


def retry_races(suite: Suite, env: dict[str, str], results: Results, *, timeout_s: float, log: Path | None = None
                ) -> Results:
    """``results`` with its known races run again, when they are all that failed (go test's exit status 1 says
    failed tests and nothing else): their second outcomes replace the first, which stay in ``retried``."""
    failed = results.top("fail")
    if not failed or results.exit_code != 1 or any(o.name not in KNOWN_RACES for o in failed):
        return results
    names = [o.name for o in failed]
    again = _run(suite, env, label=results.label, timeout_s=timeout_s, run_filter="^(" + "|".join(names) + ")$",
                 log=log.with_suffix(".again" + log.suffix) if log else None)
    for name in names:
        results.retried[name] = results.outcomes[name].reason
        for key in [k for k in results.outcomes if k == name or k.startswith(name + "/")]:
            del results.outcomes[key]
        results.outcomes.update({k: o for k, o in again.outcomes.items() if k == name or k.startswith(name + "/")})
        results.outcomes.setdefault(name, Outcome(name, "fail", 0.0, "not run again"))
    results.exit_code = again.exit_code if not results.of("fail") else results.exit_code
    return results


def _run(suite: Suite, env: dict[str, str], *, label: str, timeout_s: float, run_filter: str | None = None,
         log: Path | None = None) -> Results:
    """One run of the suite's binary (or of the tests ``run_filter`` matches), its outcomes read from test2json."""
    args = [go() or "go", "tool", "test2json", "-t", "-p", PACKAGE, str(suite.binary), "-test.v=test2json",
            f"-test.timeout={int(timeout_s)}s"]
    if run_filter:
        args.append(f"-test.run={run_filter}")
    results = Results(label)
    texts: dict[str, list[str]] = {}
    started = time.monotonic()
    with subprocess.Popen(args, cwd=suite.source, env={**os.environ, "KGO_LOG_LEVEL": "none", **env},
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        assert proc.stdout is not None
        sink = log.open("w") if log else None
        try:
            for line in proc.stdout:
                if sink:
                    sink.write(line)
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    results.output.append(line.rstrip())
                    continue
                test, action = event.get("Test"), event.get("Action")
                if not test:
                    if action == "output":
                        results.output.append(event.get("Output", "").rstrip())
                    continue
                if action == "output":
                    texts.setdefault(test, []).append(event.get("Output", ""))
                elif action in ("pass", "fail", "skip"):
                    # Lines logged by deferred cleanups after a t.Skip run under Goexit and say "panic.go:".
                    text = [t for t in texts.get(test, [])
                            if not t.startswith(("=== ", "--- ")) and "panic.go:" not in t]
                    if action == "skip":   # the t.Skip message, among what deferred cleanups log around it
                        said = [t for t in text if SKIP_WORDS.search(t)] or text[:1]
                        reason = said[0].strip() if said else ""
                    else:
                        reason = "".join(text[-30:]).strip()
                    results.outcomes[test] = Outcome(test, action, event.get("Elapsed", 0.0), reason)
        finally:
            if sink:
                sink.close()
        results.exit_code = proc.wait()
    results.seconds = time.monotonic() - started
    return results


class KgoBroker(ServeProcess):
    """``kafkamock serve`` with three listeners per broker: PLAINTEXT for the suite, SCRAM-SHA-256 and OAUTHBEARER
    (SASL_PLAINTEXT) for its authentication tests; node k on each listener's port + k."""

    def __init__(self, brokers: int, extra: tuple[str, ...] = ()):
        self.plain, self.scram, self.oauth = (free_port(brokers) for _ in range(3))
        listeners = f"PLAINTEXT://127.0.0.1:{self.plain},SCRAM://127.0.0.1:{self.scram},OAUTH://127.0.0.1:{self.oauth}"
        args = ["--scram-user", ":".join(SCRAM_USER), "--config", f"listeners={listeners}",
                "--config", "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SCRAM:SASL_PLAINTEXT,"
                            "OAUTH:SASL_PLAINTEXT",
                "--config", "listener.name.scram.sasl.enabled.mechanisms=SCRAM-SHA-256",
                "--config", "listener.name.oauth.sasl.enabled.mechanisms=OAUTHBEARER"]
        for name, value in BROKER_CONFIG.items():
            args += ["--config", f"{name}={value}"]
        super().__init__(args + list(extra), brokers=brokers, port=self.plain)

    def hold_ports(self) -> KgoBroker:
        """Own every listener port, as a supervisor with socket activation does: across a restart clients wait in
        the accept queue rather than being refused (franz-go surfaces a refused dial to a group as a poll error)."""
        self.hold([base + k for base in (self.plain, self.scram, self.oauth) for k in range(self.brokers)])
        return self

    def suite_env(self, rf: int, records: int) -> dict[str, str]:
        seeds = ",".join(f"127.0.0.1:{self.plain + k}" for k in range(self.brokers))
        return {"KGO_SEEDS": seeds, "KGO_TEST_RF": str(rf), "KGO_TEST_RECORDS": str(records),
                "KGO_TEST_SCRAM_SEEDS": f"127.0.0.1:{self.scram}", "KGO_TEST_SCRAM": ":".join(SCRAM_USER),
                "KGO_TEST_OAUTH_SEEDS": f"127.0.0.1:{self.oauth}"}


class Restarter:
    """While running, kill -9 the broker every ``every_s`` seconds and start it again at once on the same data
    directory and ports (what a crash and a supervisor's restart do; with ``hold_ports`` the supervisor also keeps
    the listening sockets, as systemd's socket activation does); counts the restarts."""

    def __init__(self, broker: ServeProcess, every_s: float):
        self.cluster, self.every_s = broker, every_s
        self.downtimes: list[float] = []          # seconds from each kill to the restarted broker's ready line
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="kgo-restarter", daemon=True)

    def _loop(self) -> None:
        try:
            while not self._stop.wait(self.every_s):
                killed = time.monotonic()
                self.cluster.kill()
                self.cluster.start()
                self.downtimes.append(time.monotonic() - killed)
        except BaseException as exc:  # reported on leaving the with block: a broker that cannot restart fails the run
            self.error = exc

    @property
    def restarts(self) -> int:
        return len(self.downtimes)

    def __enter__(self) -> Restarter:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=120)
        if self.error is not None:
            raise RuntimeError(f"the broker did not come back after restart {self.restarts + 1}") from self.error


DEFAULT_RECORDS = 5000
RECORDS = int(os.environ.get("KGO_RECORDS", str(DEFAULT_RECORDS)))


def labelled(name: str, records: int = RECORDS) -> str:
    """A run's result name: another volume than CI's keeps its own file (``kafkamock-1-500000``)."""
    return name if records == DEFAULT_RECORDS else f"{name}-{records}"
# Skips a conforming broker still gets, with why.
EXPECTED_SKIPS = {"TestIssueProduceBrokerTooOldFailsRecords":
                  "Kafka 4.x advertises Produce v0-v2 (and kafkamock with it); the test needs a broker that does not"}
# What the suite skips on a broker of a release that lacks the feature (its own messages; the KIP-848 variants of
# the ETL tests, named .../848, skip with a message test2json does not attach to them): allowed only when kafkamock
# presents itself as such a release.
RELEASE_SKIPS = ("broker does not support share groups", "broker does not support KIP-848",
                 "broker does not support static membership")


def check(results: Results, *, release: str | None = None) -> None:
    """Every test passed, and nothing skipped but what a conforming broker (of ``release``) gets skipped."""
    assert not results.of("fail") and results.exit_code == 0, results.report()
    unexpected = {o.name: o.reason for o in results.of("skip") if o.name not in EXPECTED_SKIPS
                  and not (release and (any(why in o.reason for why in RELEASE_SKIPS) or "/848" in o.name))}
    assert not unexpected, f"tests skipped on kafkamock: {unexpected}"
    assert len(results.top("pass")) >= (100 if release else 150), results.summary()["tests"]   # not a filter


def save(results: Results, extra: dict | None = None) -> Path:
    """Keep a run's summary in .cache/kgo/results (docs/compatibility.md's conformance table is made from these)."""
    out = CACHE / "results"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{results.label}.json"
    path.write_text(json.dumps({**results.summary(), **(extra or {})}, indent=1, sort_keys=True) + "\n")
    return path


def against_kafka(records: int) -> Results:
    """The same suite against a one-node Apache Kafka 4.3.1 (``make kafka``), to tell a suite problem from a
    kafkamock one. PLAINTEXT only: the SCRAM and OAUTHBEARER tests skip there (they need the listeners and users
    kafkamock's ``KgoBroker`` sets up)."""
    from support.kafka_cluster import KafkaCluster

    suite = build()
    kafka = KafkaCluster(config=BROKER_CONFIG).start()
    try:
        env = {"KGO_SEEDS": kafka.bootstrap_servers, "KGO_TEST_RF": "1", "KGO_TEST_RECORDS": str(records)}
        label = labelled("kafka-4.3.1-1", records)
        results = run(suite, env, label=label, timeout_s=1800, log=CACHE / f"{label}.log")
    finally:
        kafka.stop()
    save(results, {"brokers": 1, "records": records, "broker": "Apache Kafka 4.3.1"})
    return results


if __name__ == "__main__":        # `make kgo`: PYTHONPATH=tests python -m support.kgo_suite build
    import sys

    if sys.argv[1:] == ["build"]:
        print(f"kgo suite: franz-go {franz_go_version()}, {build().binary}")
    elif sys.argv[1:2] == ["kafka"]:   # `make kgo-kafka`
        outcome = against_kafka(int(sys.argv[2]) if len(sys.argv) > 2 else 5000)
        print(outcome.report())
        print(json.dumps(outcome.summary()["tests"]), json.dumps(outcome.summary()["skipped"], indent=1))
    else:
        sys.exit("usage: python -m support.kgo_suite {build | kafka [records]}")
