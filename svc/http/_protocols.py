"""The small protocols a caller implements: the crypto provider and the telemetry sink."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

__all__ = ["CryptoProvider", "TelemetrySink"]


@runtime_checkable
class CryptoProvider(Protocol):
    """The signature check the webhook route uses; ``svc.crypto`` is the default provider."""

    def hmac_sha256_matches(self, key: bytes, data: bytes, expected: bytes) -> bool: ...


@runtime_checkable
class TelemetrySink(Protocol):
    """Receives every counter and histogram the service records (spec "Telemetry events")."""

    def increment_counter(
        self, name: str, value: float, attributes: Mapping[str, str]
    ) -> object: ...

    def record_histogram(
        self, name: str, value_seconds: float, attributes: Mapping[str, str]
    ) -> object: ...
