"""Fixtures for the client tests: ``tansu``, a second Kafka broker implementation (see ``support.tansu``)."""

from support.tansu import tansu  # noqa: F401
