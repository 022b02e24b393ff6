"""Fast positional constructors for the webhook layer's frozen, slotted records.

A frozen dataclass's ``__init__`` pays a keyword call and an
``object.__setattr__`` per field; the normalizer builds an update per item and
the user reads build an identity per update, so both use ``positional_maker``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")


def _slot_layout(cls: type) -> tuple[str, ...] | None:
    """The ``__slots__`` of the one class in ``cls``'s MRO that adds slots, if exactly one does."""
    owners = [k for k in cls.__mro__ if k is not object and vars(k).get("__slots__")]
    if len(owners) != 1:
        return None
    slots = vars(owners[0])["__slots__"]
    return (slots,) if isinstance(slots, str) else tuple(slots)


# Why generated code (``exec``) and a ``__class__`` re-label, not a plain closure: a closure that
# calls each slot's descriptor in a loop made the receive step (signature + parse + normalize)
# 1.21x slower (``bench/webhook_normalize.py --baseline``, 5 rounds 1.18-1.22, at 21d1014); per
# record it is ~600 ns against ~130 ns, and unrolled descriptor calls without the twin ~300 ns.
# The generated function is this one rule, read from the dataclass's own fields.
def positional_maker(cls: type[_T]) -> Callable[..., _T]:
    """A positional constructor for a frozen slotted dataclass that skips its frozen ``__init__``.

    It fills a plain twin class with the same slot layout (ordinary attribute
    stores) and re-labels the instance with ``__class__``, which CPython
    allows between classes of identical layout, because the frozen
    ``__init__`` pays a keyword call and an ``object.__setattr__`` per field
    on the hot path; if the twin cannot be re-labelled it calls each slot's
    descriptor. Instances equal ``cls(...)`` with the same values (tested
    for every kind).
    """
    specs = dataclasses.fields(cls)  # type: ignore[arg-type]
    params: list[str] = []
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    for spec in specs:
        if spec.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__name__}.{spec.name}: default_factory is not supported")
        if spec.init:
            params.append(spec.name)
        else:
            namespace[f"_d_{spec.name}"] = spec.default
    values = {s.name: (s.name if s.init else f"_d_{s.name}") for s in specs}
    layout = _slot_layout(cls)
    twin: type | None = None
    if layout is not None and set(layout) == set(values):
        twin = type(f"_{cls.__name__}Twin", (), {"__slots__": layout})
        try:
            probe = twin()
            probe.__class__ = cls
        except TypeError:
            twin = None
    if twin is not None:
        namespace["_twin"] = twin
        lines = [f"    o.{name} = {value}" for name, value in values.items()]
        lines += ["    o.__class__ = _cls"]
        head = "    o = _twin()"
    else:
        for name in values:
            namespace[f"_set_{name}"] = getattr(cls, name).__set__
        lines = [f"    _set_{name}(o, {value})" for name, value in values.items()]
        head = "    o = _new(_cls)"
    source = f"def make({', '.join(params)}, /):\n{head}\n" + "\n".join(lines)
    source += "\n    return o\n"
    exec(source, namespace)  # noqa: S102 - built only from the dataclass's own field names
    return namespace["make"]  # type: ignore[no-any-return]
