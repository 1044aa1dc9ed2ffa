"""kafkajs 2.2.4 (the Node.js client) against a kafkamock broker: runs ``tests/js/scenarios.js`` and parses its line.

kafkajs is pinned by ``tests/js/package.json`` and ``package-lock.json`` and installed into ``.cache/node`` by
``make js`` (``npm ci``); ``install()`` does the same on first use when the cache is missing or stale. Each call
starts one ``node`` process (about 0.2 s) that prints one JSON line: the scenario's result, or ``error``.

    clients = JsClients(install())
    clients.admin(bootstrap, [{"op": "createTopics", "topics": [{"topic": "t", "numPartitions": 2}]}])
    clients.produce(bootstrap, "t", [{"key": "k", "value": "v", "headers": {"h": "x"}}], compression="gzip")
    clients.consume(bootstrap, ["t"], group_id="g", count=1)["records"]
    clients.txn(bootstrap, "tx", [{"op": "begin"}, {"op": "send", "topic": "t", "messages": [...]}, {"op": "commit"}])
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from support.scenario_runs import ScenarioError, run_scenario

REPO = Path(__file__).resolve().parents[2]
JS_DIR = REPO / "tests" / "js"
SCENARIOS = JS_DIR / "scenarios.js"
DEFAULT_CACHE = REPO / ".cache" / "node"
KAFKAJS_VERSION = "2.2.4"
PACKAGE_FILES = ("package.json", "package-lock.json", ".npmrc")
DEFAULT_TIMEOUT = 60.0   # seconds per process; every scenario has its own, shorter deadline (spec timeoutMs)

__all__ = ["JsClients", "ScenarioError", "install", "missing_tools"]


def missing_tools() -> list[str]:
    """The programs kafkajs needs here and this machine lacks (``make js`` / .ci/run install them)."""
    return [tool for tool in ("node", "npm") if shutil.which(tool) is None]


def _installed_version(cache: Path) -> str | None:
    try:
        return json.loads((cache / "node_modules" / "kafkajs" / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def install(cache: str | Path = DEFAULT_CACHE) -> Path:
    """``node_modules`` with kafkajs as the lock file pins it (``npm ci`` in ``cache`` when missing or stale)."""
    cache = Path(cache)
    current = all((cache / name).is_file() and (cache / name).read_bytes() == (JS_DIR / name).read_bytes()
                  for name in PACKAGE_FILES)
    if not current or _installed_version(cache) != KAFKAJS_VERSION:
        cache.mkdir(parents=True, exist_ok=True)
        for name in PACKAGE_FILES:
            shutil.copyfile(JS_DIR / name, cache / name)
        proc = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=cache, capture_output=True, text=True,
                              timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"npm ci in {cache} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    if _installed_version(cache) != KAFKAJS_VERSION:
        raise RuntimeError(f"{cache}/node_modules has no kafkajs {KAFKAJS_VERSION} after npm ci")
    return cache / "node_modules"


def message(key: str | None, value: str | None, headers: Mapping[str, str] | None = None, *,
            partition: int | None = None) -> dict:
    out: dict[str, Any] = {"key": key, "value": value}
    if headers:
        out["headers"] = dict(headers)
    if partition is not None:
        out["partition"] = partition
    return out


class JsClients:
    """Runs scenarios.js, one node process per call; ``runs`` keeps ``(scenario, seconds)`` for the timing line."""

    def __init__(self, node_modules: str | Path, node: str | None = None, timeout: float = DEFAULT_TIMEOUT):
        self.node = node or shutil.which("node") or "node"
        self.env = {**os.environ, "NODE_PATH": str(node_modules)}
        self.timeout = timeout
        self.runs: list[tuple[str, float]] = []

    def run(self, scenario: str, bootstrap: str, spec: Mapping[str, Any], *, check: bool = True) -> dict:
        """One scenario's JSON result; ScenarioError when it failed (unless not ``check``: then the result with its
        ``error``, as long as it printed one)."""
        command = [self.node, str(SCENARIOS), scenario, bootstrap, "-"]
        proc, result = run_scenario(command, spec, scenario=scenario, program="node", timeout=self.timeout,
                                    runs=self.runs, env=self.env)
        if result is None or (check and (proc.returncode != 0 or "error" in result)):
            error = (result or {}).get("error")
            what = (f"{error.get('name')}: {error.get('message')} (cause {error.get('cause')})" if error
                    else f"exit {proc.returncode}, stdout {proc.stdout[-500:]!r}")
            raise ScenarioError(f"{scenario} failed: {what}\nnode stderr tail:\n{proc.stderr[-3000:]}",
                                result=result, stderr=proc.stderr)
        return result

    # -- one helper per scenario (see the comment at the top of scenarios.js for every option)

    def admin(self, bootstrap: str, ops: Iterable[Mapping[str, Any]], *, check: bool = True, **spec: Any) -> list:
        """Admin ops in order: the ``result`` of each (``check``), or every ``{"op", "result" | "error"}``."""
        results = self.run("admin", bootstrap, {"ops": list(ops), **spec})["results"]
        if check:
            failed = [r for r in results if "error" in r]
            if failed:
                raise ScenarioError(f"admin ops failed: {failed}", result={"results": results})
            return [r["result"] for r in results]
        return results

    def produce(self, bootstrap: str, topic: str, messages: Iterable[Mapping[str, Any]] | None = None, *,
                sends: Iterable[Iterable[Mapping[str, Any]]] | None = None, compression: str = "none",
                **spec: Any) -> list[list[dict]]:
        """``messages`` in one send (or each of ``sends`` in turn); the RecordMetadata of each send."""
        body: dict[str, Any] = {"topic": topic, "compression": compression, **spec}
        body["sends"] = [list(s) for s in sends] if sends is not None else [list(messages or ())]
        return self.run("produce", bootstrap, body)["sends"]

    def consume(self, bootstrap: str, topics: Iterable[str], *, group_id: str, count: int | None = None,
                until_value: str | None = None, read_uncommitted: bool = False, **spec: Any) -> dict:
        """A group member reading from the beginning until ``count`` records or one valued ``until_value``."""
        body = {"topics": list(topics), "groupId": group_id, "count": count, "untilValue": until_value,
                "readUncommitted": read_uncommitted, **spec}
        return self.run("consume", bootstrap, body)

    def roundtrip(self, bootstrap: str, produce: Mapping[str, Any], consume: Mapping[str, Any], *,
                  check: bool = True, **spec: Any) -> dict:
        return self.run("roundtrip", bootstrap, {"produce": dict(produce), "consume": dict(consume), **spec},
                        check=check)

    def txn(self, bootstrap: str, transactional_id: str, steps: Iterable[Mapping[str, Any]], **spec: Any) -> list:
        return self.run("txn", bootstrap, {"transactionalId": transactional_id, "steps": list(steps), **spec})["steps"]

    def group(self, bootstrap: str, topic: str, group_id: str, **spec: Any) -> dict:
        return self.run("group", bootstrap, {"topic": topic, "groupId": group_id, **spec})

    def lso(self, bootstrap: str, topic: str, transactional_id: str, **spec: Any) -> dict:
        return self.run("lso", bootstrap, {"topic": topic, "transactionalId": transactional_id, **spec})


if __name__ == "__main__":   # PYTHONPATH=tests python tests/support/js_clients.py [CACHE]: what `make js` does
    print(install(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_CACHE))
