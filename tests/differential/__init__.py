"""The differential suite: Apache Kafka 4.3.1 and kafkamock side by side (a package, so its modules may share
names with the other test directories' modules)."""
