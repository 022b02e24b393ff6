"""Fast positional constructors for the webhook layer's frozen, slotted records.

A frozen dataclass's ``__init__`` pays a keyword call and an
``object.__setattr__`` per field; the normalizer builds an update per item and
the user reads build an identity per update, so both use ``positional_maker``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar, cast

_T = TypeVar("_T")


def _slot_layout(cls: type) -> tuple[str, ...] | None:
    """The ``__slots__`` of the one class in ``cls``'s MRO that adds slots, if exactly one does."""
    owners = [k for k in cls.__mro__ if k is not object and vars(k).get("__slots__")]
    if len(owners) != 1:
        return None
    slots = vars(owners[0])["__slots__"]
    return (slots,) if isinstance(slots, str) else tuple(slots)


def _twin(cls: type, specs: tuple[dataclasses.Field[Any], ...]) -> type | None:
    """A plain (not frozen) slotted dataclass with ``cls``'s fields, positional, that re-labels
    each instance it builds as ``cls``; None when the two slot layouts differ."""
    layout = _slot_layout(cls)
    if layout is None or set(layout) != {s.name for s in specs}:
        return None

    def __post_init__(self: object) -> None:
        self.__class__ = cls

    fields: list[tuple[str, type, Any]] = []
    for spec in specs:
        if spec.init:  # positional and required, whatever ``cls`` defaults it to
            kept = dataclasses.field()
        elif spec.default_factory is not dataclasses.MISSING:
            kept = dataclasses.field(init=False, default_factory=spec.default_factory)
        else:
            kept = dataclasses.field(init=False, default=spec.default)
        fields.append((spec.name, object, kept))
    twin = dataclasses.make_dataclass(
        f"_{cls.__name__}Twin",
        fields,
        namespace={"__post_init__": __post_init__, "__module__": __name__},
        repr=False,
        eq=False,
        slots=True,
    )
    probe: Any = object.__new__(twin)
    try:
        probe.__class__ = cls
    except TypeError:
        return None
    return twin


# Why a twin class re-labelled through ``__class__`` (the positional makers in docs/decisions.md):
# a 2-field record (7 fields) costs ~190 ns (~245) through it, ~440 ns (~1,000) through the frozen
# keyword ``__init__``, ~425 ns (~700) through a closure calling each slot's descriptor, and
# ~130 ns (~165) through ``exec``-built code.
def positional_maker(cls: type[_T]) -> Callable[..., _T]:
    """A positional constructor for a frozen slotted dataclass that skips its frozen ``__init__``.

    It is a plain twin dataclass with the same fields and slot layout (ordinary
    attribute stores, in the ``__init__`` the stdlib generates) whose
    ``__post_init__`` re-labels the instance with ``__class__``, which CPython
    allows between classes of identical layout; if the layouts differ it maps
    the values to ``cls``'s keywords. Instances equal ``cls(...)`` with the
    same values (tested for every kind).
    """
    specs = dataclasses.fields(cls)  # type: ignore[arg-type]
    twin = _twin(cls, specs)
    if twin is not None:
        return cast("Callable[..., _T]", twin)
    names = [s.name for s in specs if s.init]

    def make(*values: Any) -> _T:
        return cls(**dict(zip(names, values, strict=True)))

    return make
