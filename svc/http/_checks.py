"""The construction checks of ``create_app``: each refusal a ``ServiceError`` with the spec's code.

They run before anything is built, in a fixed order, so the same bad
argument always gets the same code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, TypeVar

import httpx
from prometheus_client import CollectorRegistry

from svc.flows import FlowPrivateKey
from svc.store import BroadcastStore, PersistenceStore
from svc.webhook import WebhookFacade

from ._errors import ServiceError
from ._profile import Profile, ServiceSecrets
from ._protocols import CryptoProvider, TelemetrySink

__all__ = ["CheckedArguments", "check_arguments"]

_Given = TypeVar("_Given", Profile, ServiceSecrets)

_STORE_MEMBERS: Final = tuple(
    name
    for contract in (PersistenceStore, BroadcastStore)
    for name in vars(contract)
    if not name.startswith("_")
)
"""The contract's members, read from it, to name what a refused store lacks."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckedArguments:
    """The arguments ``create_app`` converts: profile and secrets from mappings, the store typed."""

    profile: Profile
    secrets: ServiceSecrets
    store: PersistenceStore | None


def check_arguments(
    *,
    profile: object,
    secrets: object,
    transport: object,
    crypto_provider: object,
    facade: object,
    store: object,
    enable_group_routes: object,
    telemetry_sink: object,
    metrics_registry: object,
    outbox_handler: object,
    flow_handler: object,
    flows_private_key: object,
) -> CheckedArguments:
    """Every argument check of ``create_app``; raises ``ServiceError`` at the first refusal."""
    checked_profile = _record_of(
        profile, Profile, "invalid_profile", "profile must be a Profile or a mapping."
    )
    checked_secrets = _record_of(
        secrets, ServiceSecrets, "invalid_secrets", "secrets must be ServiceSecrets or a mapping."
    )
    _check_options(
        transport=transport,
        crypto_provider=crypto_provider,
        facade=facade,
        enable_group_routes=enable_group_routes,
        telemetry_sink=telemetry_sink,
        metrics_registry=metrics_registry,
    )
    checked_store = _check_store(store)
    _check_flows(checked_profile, flow_handler, flows_private_key)
    if outbox_handler is not None and checked_store is None:
        raise ServiceError("invalid_config", "outbox_handler needs a store.")
    if outbox_handler is not None and not callable(outbox_handler):
        raise ServiceError("invalid_config", "outbox_handler must be an async callable.")
    return CheckedArguments(profile=checked_profile, secrets=checked_secrets, store=checked_store)


def _record_of(value: object, record: type[_Given], code: str, message: str) -> _Given:
    """``value`` as ``record``: the record itself, or built from its mapping
    (``from_mapping``); anything else refused with ``code``."""
    if isinstance(value, record):
        return value
    if isinstance(value, Mapping):
        return record.from_mapping(value)
    raise ServiceError(code, message)


def _check_store(store: object) -> PersistenceStore | None:
    """The store, when it implements ``PersistenceStore`` (the service calls every member);
    else ``invalid_persistence`` naming the members it lacks."""
    if store is None or isinstance(store, PersistenceStore):
        return store
    # Only to name them in the refusal; on 3.12+ isinstance also wants them on the class.
    missing = [name for name in _STORE_MEMBERS if not hasattr(store, name)] or ["on its class"]
    raise ServiceError(
        "invalid_persistence", "store lacks required methods: " + ", ".join(missing) + "."
    )


def _check_options(
    *,
    transport: object,
    crypto_provider: object,
    facade: object,
    enable_group_routes: object,
    telemetry_sink: object,
    metrics_registry: object,
) -> None:
    if transport is not None and not isinstance(transport, httpx.AsyncBaseTransport):
        raise ServiceError("invalid_transport", "transport must be an httpx.AsyncBaseTransport.")
    if crypto_provider is not None and not isinstance(crypto_provider, CryptoProvider):
        raise ServiceError(
            "invalid_crypto_provider", "crypto_provider must have hmac_sha256_matches()."
        )
    if facade is not None and not isinstance(facade, WebhookFacade):
        raise ServiceError(
            "invalid_whatsapp", "facade must have handles(update) and run(context) methods."
        )
    if not isinstance(enable_group_routes, bool):
        raise ServiceError("invalid_config", "enable_group_routes must be a bool.")
    if telemetry_sink is not None and not isinstance(telemetry_sink, TelemetrySink):
        raise ServiceError(
            "invalid_config",
            "telemetry_sink needs increment_counter() and record_histogram().",
        )
    if metrics_registry is not None and not isinstance(metrics_registry, CollectorRegistry):
        raise ServiceError("invalid_config", "metrics_registry must be a CollectorRegistry.")


def _check_flows(profile: Profile, handler: object, key: object) -> None:
    """The Flows route needs a path, a handler and a private key, all three or none."""
    given = (profile.flows_path is not None, handler is not None, key is not None)
    if any(given) and not all(given):
        raise ServiceError(
            "invalid_config",
            "the Flows endpoint needs profile.flows_path, flow_handler and flows_private_key.",
        )
    if handler is not None and not callable(handler):
        raise ServiceError("invalid_config", "flow_handler must be callable.")
    if key is not None and not isinstance(key, FlowPrivateKey):
        raise ServiceError("invalid_config", "flows_private_key must be a loaded FlowPrivateKey.")
