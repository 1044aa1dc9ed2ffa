"""Security in the core: listeners and their protocols, SASL exchanges, SCRAM credentials, principals.

Everything here is sans-IO: TLS itself lives at the edge (``kafkamock/server/tls.py``), which hands the core the
client certificate's subject; the SASL state of a connection is a table (``session.py``) driven by requests and
the broker's clock.
"""
