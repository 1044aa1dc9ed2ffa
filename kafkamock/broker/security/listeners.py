"""Which listeners a broker has, their security protocols and the addresses they advertise, from Kafka's
``listeners``, ``advertised.listeners`` and ``listener.security.protocol.map``.

An empty ``listeners`` keeps kafkamock's historical default: one PLAINTEXT listener on ``--host``/``--port``.
With ``--brokers N``, node k listens on each listener's port + k (port 0: a free port for every node).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkamock.broker.config import SASL_MECHANISMS, BrokerConfig, ConfigError, listener_config, parse_listeners


@dataclass(frozen=True, slots=True)
class Listener:
    name: str                      # as configured (Kafka's ListenerName), e.g. "SASL_SSL" or "EXTERNAL"
    security_protocol: str         # PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
    host: str                      # the address to bind ("" or 0.0.0.0: every interface)
    port: int                      # node 0's port; 0: a free port for each node

    @property
    def tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")


def protocol_map(config: BrokerConfig) -> dict[str, str]:
    raw: str = config["listener.security.protocol.map"]
    pairs = (p.strip().split(":") for p in raw.split(",") if p.strip())
    return {name.upper(): protocol for name, protocol in pairs}


def listeners(config: BrokerConfig, default_host: str = "127.0.0.1", default_port: int = 9092) -> list[Listener]:
    """The configured listeners, checked as Kafka checks them at start (names unique, mapped to a protocol,
    ports distinct, a SASL listener with mechanisms kafkamock serves); raises ConfigError."""
    raw = config["listeners"]
    if not raw:
        return [Listener("PLAINTEXT", "PLAINTEXT", default_host, default_port)]
    mapping = protocol_map(config)
    found: list[Listener] = []
    for name, host, port in parse_listeners(raw):
        if name.upper() not in mapping:
            raise ConfigError(f"No security protocol defined for listener {name} "
                              "(add it to listener.security.protocol.map)")
        if any(other.name.upper() == name.upper() for other in found):
            raise ConfigError(f"Each listener must have a different name, {name} appears twice in listeners")
        if port and any(other.port == port for other in found):
            raise ConfigError(f"Each listener must have a different port, {port} appears twice in listeners")
        found.append(Listener(name, mapping[name.upper()], host, port or 0))
    for listener in found:
        if listener.sasl:
            enabled_mechanisms(config, listener.name)          # refuses what cannot be served
    return found


def advertised(config: BrokerConfig, found: list[Listener]) -> dict[str, tuple[str | None, int | None]]:
    """{listener name: (advertised host or None, advertised port of node 0 or None)}; a listener that
    ``advertised.listeners`` does not name advertises its bound address, as in Kafka."""
    out: dict[str, tuple[str | None, int | None]] = {}
    names = {listener.name.upper(): listener.name for listener in found}
    raw = config["advertised.listeners"]
    for k, (name, host, port) in enumerate(parse_listeners(raw) if raw else []):
        if not config["listeners"] and k == 0 and name.upper() not in names:
            name = found[0].name           # a lone advertised listener names the default listener
        if name.upper() not in names:
            raise ConfigError(f"advertised.listeners names {name}, which is not in listeners")
        out[names[name.upper()]] = (host or None, port or None)
    return out


def enabled_mechanisms(config: BrokerConfig, listener: str) -> list[str]:
    """``listener.name.<l>.sasl.enabled.mechanisms`` else ``sasl.enabled.mechanisms``, upper case; refuses
    mechanisms kafkamock does not serve (Kafka's default GSSAPI among them) rather than ignore them."""
    value = listener_config(config, listener, "sasl.enabled.mechanisms")
    mechanisms = [m.strip().upper() for m in str(value).split(",") if m.strip()]
    unknown = [m for m in mechanisms if m not in SASL_MECHANISMS]
    if unknown or not mechanisms:
        raise ConfigError(f"SASL listener {listener}: mechanism(s) {', '.join(unknown) or '(none)'} cannot be served; "
                          f"set sasl.enabled.mechanisms (or listener.name.{listener.lower()}.sasl.enabled.mechanisms)"
                          f" to some of {', '.join(SASL_MECHANISMS)}")
    return mechanisms
