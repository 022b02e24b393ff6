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

from svc.crypto import InboxKeyring
from svc.flows import FlowPrivateKey
from svc.store import BroadcastStore, OutboxWorkerOptions, PersistenceStore
from svc.webhook import WebhookFacade

from ._errors import ServiceError
from ._options import FlowsEndpoint
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
    outbox: object,
    flows: object,
    inbox_keyring: object,
    echo_reply: bool,
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
    _check_flows(checked_profile, flows)
    if outbox is not None and not isinstance(outbox, OutboxWorkerOptions):
        raise ServiceError("invalid_config", "outbox must be an OutboxWorkerOptions.")
    if outbox is not None and checked_store is None:
        raise ServiceError("invalid_config", "the outbox worker needs a store.")
    _check_keyring(
        inbox_keyring, needed=checked_store is not None and (facade is not None or echo_reply)
    )
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


def _check_keyring(keyring: object, *, needed: bool) -> None:
    """Handlers over a store (a facade, or the echo reply) keep waiting updates sealed under an
    ``InboxKeyring``."""
    if keyring is not None and not isinstance(keyring, InboxKeyring):
        raise ServiceError("invalid_secret", "inbox_keyring must be an svc.crypto.InboxKeyring.")
    if needed and keyring is None:
        raise ServiceError(
            "invalid_config",
            "handlers with a store keep waiting updates encrypted: inbox_keyring is missing "
            "(the profile's inbox keys, e.g. SVC_INBOX_KEY).",
            field="inbox_keyring",
        )


def _check_flows(profile: Profile, flows: object) -> None:
    """The Flows route needs a path and its ``FlowsEndpoint`` (a handler, a private key), both or
    neither."""
    if (profile.flows_path is not None) != (flows is not None):
        raise ServiceError(
            "invalid_config", "the Flows endpoint needs profile.flows_path and flows, both or none."
        )
    if flows is None:
        return
    if not isinstance(flows, FlowsEndpoint):
        raise ServiceError("invalid_config", "flows must be a FlowsEndpoint.")
    if not callable(flows.handler):
        raise ServiceError("invalid_config", "the Flows endpoint's handler must be callable.")
    if not isinstance(flows.private_key, FlowPrivateKey):
        raise ServiceError(
            "invalid_config", "the Flows endpoint's private_key must be a loaded FlowPrivateKey."
        )
