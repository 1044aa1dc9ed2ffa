"""The facts kafkamock takes from Apache Kafka 4.3.1 (tools/import_kafka_facts.py) are what Kafka 4.3.1 says, and
kafkamock's error codes are Kafka's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafkamock.broker.kafka_configs import BROKER, TOPIC, Validator, invalid, java_double, parse_type
from kafkamock.errors import RETRIABLE, ErrorCode, default_message

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.kafka
def test_the_facts_files_are_what_kafka_4_3_1_says():
    result = subprocess.run([sys.executable, str(REPO / "tools" / "import_kafka_facts.py"), "--check"],
                            capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_kafka_error_code_has_its_name_and_retriability():
    errors = json.loads((REPO / "kafkamock" / "kafka_errors.json").read_text())["errors"]
    assert {e["code"]: e["name"] for e in errors} == {int(c): c.name for c in ErrorCode}
    assert {e["code"] for e in errors if e["retriable"]} == {int(c) for c in RETRIABLE}
    assert default_message(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) == "This server does not host this topic-partition."
    assert default_message(ErrorCode.NONE) is None


@pytest.mark.parametrize("value,text", [(0.5, "0.5"), (100.0, "100.0"), (1e7, "1.0E7"), (1.5e-4, "1.5E-4"),
                                        (0.001, "0.001"), (9999999.0, "9999999.0"), (-2.5e10, "-2.5E10"),
                                        (float("inf"), "Infinity"), (0.0, "0.0")])
def test_doubles_print_as_java_prints_them(value, text):
    assert java_double(value) == text


@pytest.mark.parametrize("raw,type_,expected", [
    ("+5", "INT", 5), (" 7 ", "INT", 7), ("2147483647", "INT", 2147483647), ("-32768", "SHORT", -32768),
    ("TRUE", "BOOLEAN", True), (" false", "BOOLEAN", False), ("1e3", "DOUBLE", 1000.0), ("2.5d", "DOUBLE", 2.5),
    ("a, b ,c", "LIST", ["a", "b", "c"]), ("", "LIST", []), (" x ", "STRING", "x"),
])
def test_values_parse_as_kafka_parses_them(raw, type_, expected):
    assert parse_type("c", raw, type_) == expected


@pytest.mark.parametrize("raw,type_,message", [
    ("5.0", "INT", "Invalid value 5.0 for configuration c: Not a number of type INT"),
    ("2147483648", "INT", "Invalid value 2147483648 for configuration c: Not a number of type INT"),
    ("1_000", "LONG", "Invalid value 1_000 for configuration c: Not a number of type LONG"),
    ("yes", "BOOLEAN", "Invalid value yes for configuration c: Expected value to be either true or false"),
    ("nan?", "DOUBLE", "Invalid value nan? for configuration c: Not a number of type DOUBLE"),
])
def test_bad_values_are_refused_in_kafkas_words(raw, type_, message):
    with pytest.raises(ValueError, match=message.replace("?", r"\?").replace(".", r"\.")):
        parse_type("c", raw, type_)


def test_validators_answer_in_kafkas_words():
    with pytest.raises(ValueError, match=r"^Invalid value 1000 for configuration segment.bytes: Value must be at "
                                         r"least 1048576$"):
        TOPIC["segment.bytes"].parse("1000")
    with pytest.raises(ValueError, match=r"String must be one of: CreateTime, LogAppendTime"):
        TOPIC["message.timestamp.type"].parse("Now")
    with pytest.raises(ValueError, match=r"^Configuration 'cleanup.policy' values must not be duplicated\.$"):
        TOPIC["cleanup.policy"].parse("compact,compact")
    with pytest.raises(ValueError, match=r"Value must be between 1 and 9 or equal to -1"):
        BROKER["compression.gzip.level"].parse("0")
    assert TOPIC["cleanup.policy"].parse("compact, delete") == ["compact", "delete"]
    assert Validator("Range", "[1,...]", low="1").check("x", 1) is None
    assert str(invalid("x", [1, 2], "m")) == "Invalid value [1, 2] for configuration x: m"
