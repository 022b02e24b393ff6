"""svc.testing declares its public surface."""

from __future__ import annotations

import inspect

import svc.testing


def test_all_is_complete_and_unique() -> None:
    exported = {
        name
        for name, value in vars(svc.testing).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert set(svc.testing.__all__) == exported
    assert len(svc.testing.__all__) == len(set(svc.testing.__all__))
