"""A known race of a kgo test's own (``kgo_suite.KNOWN_RACES``) is run once more, alone, when it is all that failed;
anything else that fails, or the race failing twice, still fails the run."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import kgo_suite
from support.kgo_suite import Outcome, Results

RACE = next(iter(kgo_suite.KNOWN_RACES))
SUITE = kgo_suite.Suite(Path("kgo.test"), Path("."))


def results(exit_code: int, **actions: str) -> Results:
    out = Results("kafkamock-3", exit_code=exit_code)
    for name, action in actions.items():
        out.outcomes[name] = Outcome(name, action, 1.0, f"{name} said {action}")
    return out


@pytest.fixture
def runs(monkeypatch):
    """The suite's runs, in order (their filters); each answers with the next of ``answers``."""
    calls: list[str | None] = []
    answers: list[Results] = []

    def fake(suite, env, *, label, timeout_s, run_filter=None, log=None):
        calls.append(run_filter)
        return answers.pop(0)

    monkeypatch.setattr(kgo_suite, "_run", fake)
    return calls, answers


def test_a_known_race_that_alone_failed_runs_again_and_its_second_outcome_counts(runs):
    calls, answers = runs
    answers += [results(1, TestA="pass", **{RACE: "fail", f"{RACE}/sub": "fail"}),
                results(0, **{RACE: "pass", f"{RACE}/sub": "pass"})]
    got = kgo_suite.run(SUITE, {}, label="kafkamock-3", timeout_s=60)
    assert calls == [None, f"^({RACE})$"]
    assert got.exit_code == 0 and not got.of("fail")
    assert got.outcomes[RACE].action == "pass" and got.outcomes[f"{RACE}/sub"].action == "pass"
    assert got.retried == {RACE: f"{RACE} said fail"} and got.summary()["retried"] == got.retried


def test_a_race_that_fails_again_fails_the_run(runs):
    calls, answers = runs
    answers += [results(1, TestA="pass", **{RACE: "fail"}), results(1, **{RACE: "fail"})]
    got = kgo_suite.run(SUITE, {}, label="kafkamock-3", timeout_s=60)
    assert len(calls) == 2 and got.exit_code == 1 and [o.name for o in got.of("fail")] == [RACE]
    assert "run again" in got.report() and RACE in got.retried


@pytest.mark.parametrize("first", [
    results(1, TestA="fail", **{RACE: "fail"}),       # another test failed too: nothing is run again
    results(2, **{RACE: "fail"}),                     # not go test's "tests failed" (a panic, a timeout)
    results(1, TestA="pass"),                          # failed without a failed test
], ids=["another-failure", "not-a-test-failure", "no-failed-test"])
def test_nothing_runs_again_unless_known_races_are_all_that_failed(runs, first):
    calls, answers = runs
    answers.append(first)
    got = kgo_suite.run(SUITE, {}, label="kafkamock-3", timeout_s=60)
    assert calls == [None] and got is first and not got.retried


def test_a_filtered_run_is_never_run_again(runs):
    calls, answers = runs
    answers.append(results(1, **{RACE: "fail"}))
    assert kgo_suite.run(SUITE, {}, label="x", timeout_s=60, run_filter=RACE).outcomes[RACE].action == "fail"
    assert calls == [RACE]
