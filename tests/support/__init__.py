"""Test-only helpers: the Java oracle (oracle.py) and the Kafka-JSON conversions (kafka_json.py)."""
