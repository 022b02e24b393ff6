"""The route inventory: templated routes (``:id`` placeholders), and the metric label of a path."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from ._profile import Profile

__all__ = ["UNMATCHED", "Route", "route_inventory", "route_labeler"]

UNMATCHED: Final = "unmatched"
"""The ``route`` label of a request that matched no route (never the raw path)."""


@dataclass(frozen=True, slots=True)
class Route:
    """One route: its methods and its templated path (``/api/messages/:id``)."""

    methods: tuple[str, ...]
    path: str
    auth: str  # "none", "bearer", "bearer-hidden", "verify-token", "signature"

    def lines(self) -> list[str]:
        return [f"{method} {self.path}" for method in self.methods]


def route_inventory(profile: Profile, *, enable_group_routes: bool) -> tuple[Route, ...]:
    """Every route the app serves, in a stable order, with ``:param`` placeholders."""
    prefix = profile.api_prefix
    routes = [
        Route(("GET",), "/healthz", "none"),
        Route(("GET",), "/readyz", "none"),
        Route(("GET",), "/status", "bearer-hidden"),
        Route(("GET",), "/metrics", "bearer-hidden"),
        Route(("GET",), "/debug/diagnostics", "bearer-hidden"),
        Route(("GET",), "/openapi.json", "none"),
        Route(("GET",), profile.webhook_path, "verify-token"),
        Route(("POST",), profile.webhook_path, "signature"),
        Route(("POST",), f"{prefix}/messages/text", "bearer"),
        Route(("GET", "POST"), f"{prefix}/messages", "bearer"),
        Route(("GET",), f"{prefix}/messages/:id", "bearer"),
        Route(("GET",), f"{prefix}/conversations/:user/window", "bearer"),
        Route(("POST",), f"{prefix}/broadcasts", "bearer"),
        Route(("GET",), f"{prefix}/broadcasts/:id", "bearer"),
        Route(("POST",), f"{prefix}/broadcasts/:id/pause", "bearer"),
        Route(("POST",), f"{prefix}/broadcasts/:id/resume", "bearer"),
    ]
    if profile.flows_path is not None:
        routes.append(Route(("POST",), profile.flows_path, "signature"))
    if enable_group_routes:
        routes += [
            Route(("GET", "POST"), f"{prefix}/groups", "bearer"),
            Route(("GET", "POST", "DELETE"), f"{prefix}/groups/:groupId", "bearer"),
            Route(("GET", "POST"), f"{prefix}/groups/:groupId/invite-link", "bearer"),
            Route(("DELETE",), f"{prefix}/groups/:groupId/participants", "bearer"),
            Route(("GET", "POST", "DELETE"), f"{prefix}/groups/:groupId/join-requests", "bearer"),
        ]
    return tuple(routes)


def route_labeler(routes: tuple[Route, ...]) -> Callable[[str], str]:
    """A function from a request path to its templated route, or ``unmatched``.

    Static paths are one dict lookup; templated ones compare segment by
    segment. A placeholder matches one non-empty segment; the message route
    also answers (with 400) for a segment it refuses, so any one segment counts.
    """
    static: dict[str, str] = {}
    templated: list[tuple[tuple[str, ...], str]] = []
    for route in routes:
        if ":" in route.path:
            templated.append((tuple(route.path.split("/")), route.path))
        else:
            static[route.path] = route.path

    def label(path: str) -> str:
        found = static.get(path)
        if found is not None:
            return found
        parts = path.split("/")
        for template, name in templated:
            if len(template) == len(parts) and all(
                t == p or (t.startswith(":") and p) for t, p in zip(template, parts, strict=True)
            ):
                return name
        return UNMATCHED

    return label
