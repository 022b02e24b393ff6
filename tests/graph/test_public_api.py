"""The declared public surface of ``svc.graph``: ``__all__`` is complete and every name resolves."""

from __future__ import annotations

import types

import svc.graph as graph


def test_all_lists_every_public_name() -> None:
    public = {
        name
        for name, value in vars(graph).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public - set(graph.__all__) == set()


def test_every_name_in_all_resolves() -> None:
    assert len(graph.__all__) == len(set(graph.__all__))
    for name in graph.__all__:
        assert getattr(graph, name) is not None, name


def test_foundation_names_are_exported() -> None:
    for name in (
        "Endpoint",
        "Param",
        "check_path_segment",
        "PhoneNumberClient",
        "WABAClient",
        "GroupClient",
        "register_error_code",
        "reset_error_registry",
        "resolve_error_class",
        "InvalidParameterError",
        "UnsupportedMessageTypeError",
        "ToManyAPICallsError",
        "ExpiredAccessTokenError",
        "APIPermissionError",
        "RateLimitHitError",
        "SpamRateLimitHitError",
        "TooManyMessagesError",
        "ReEngagementMessageError",
        "TemplateParamCountMismatchError",
    ):
        assert name in graph.__all__, name


def test_public_classes_and_functions_live_in_private_modules() -> None:
    for name in graph.__all__:
        module = getattr(getattr(graph, name), "__module__", None)
        if module is not None and module.startswith("svc.graph"):
            assert module.split(".")[-1].startswith("_"), name
