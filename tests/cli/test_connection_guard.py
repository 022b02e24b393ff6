"""``ConnectionGuard``: an error in one connection's task ends that connection only.

The guard is driven directly here with a stand-in connection task; the
reliability suite replays the real attacks against ``svc serve`` and plain
hypercorn (``tests/reliability/test_connection_isolation.py``).
"""

from __future__ import annotations

import binascii
import io
import json

import h11
import pytest
import trio
import trio.testing
from prometheus_client import CollectorRegistry

from svc.cli import ConnectionGuard
from svc.cli._serving import error_class


class Connection(trio.abc.AsyncResource):
    """A connection that only records that it was closed."""

    def __init__(self) -> None:
        self.closed = False

    async def aclose(self) -> None:
        self.closed = True


def _count(registry: CollectorRegistry, name: str) -> float | None:
    return registry.get_sample_value("svc_connection_errors_total", {"error_class": name})


def test_error_class_names_builtins_bare_and_others_by_package() -> None:
    assert error_class(KeyError(1)) == "KeyError"
    assert error_class(h11.LocalProtocolError("x")) == "h11.LocalProtocolError"
    assert error_class(binascii.Error("x")) == "binascii.Error"


async def test_an_error_is_counted_logged_by_class_and_the_connection_closed() -> None:
    registry = CollectorRegistry()
    log = io.StringIO()
    guard = ConnectionGuard(registry, log_stream=log)
    connection = Connection()

    async def serve() -> None:
        raise KeyError("a stream id the message would carry")

    await guard.run(serve, connection, lambda: "h2")
    assert connection.closed
    assert _count(registry, "KeyError") == 1.0
    line = json.loads(log.getvalue())
    assert line == {
        "level": "error",
        "event": "svc.connection.error",
        "errorClass": "KeyError",
        "protocol": "h2",
    }
    assert "stream id" not in log.getvalue()


async def test_errors_of_one_connection_count_once_per_class() -> None:
    registry = CollectorRegistry()
    guard = ConnectionGuard(registry, log_stream=io.StringIO())

    async def fail(error: Exception) -> None:
        raise error

    async def serve() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(fail, h11.LocalProtocolError("a"))
            nursery.start_soon(fail, h11.LocalProtocolError("b"))
            nursery.start_soon(fail, ValueError("c"))

    await guard.run(serve, Connection(), lambda: "http/1.1")
    assert _count(registry, "h11.LocalProtocolError") == 1.0
    assert _count(registry, "ValueError") == 1.0


async def test_a_clean_end_counts_nothing_and_still_closes() -> None:
    registry = CollectorRegistry()
    log = io.StringIO()
    guard = ConnectionGuard(registry, log_stream=log)
    connection = Connection()

    async def serve() -> None:
        await trio.lowlevel.checkpoint()

    await guard.run(serve, connection, lambda: "h2")
    assert connection.closed
    assert log.getvalue() == ""
    samples = [
        sample
        for family in registry.collect()
        for sample in family.samples
        if sample.name == "svc_connection_errors_total"
    ]
    assert samples == []


async def test_cancellation_passes_through_the_guard() -> None:
    registry = CollectorRegistry()
    guard = ConnectionGuard(registry, log_stream=io.StringIO())
    connection = Connection()
    with trio.CancelScope() as scope:
        scope.cancel()
        await guard.run(trio.sleep_forever, connection, lambda: "h2")
    assert scope.cancelled_caught
    assert connection.closed


async def test_keyboard_interrupt_is_not_taken_for_a_connection_error() -> None:
    registry = CollectorRegistry()
    guard = ConnectionGuard(registry, log_stream=io.StringIO())

    async def serve() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        await guard.run(serve, Connection(), lambda: "h2")
    assert _count(registry, "KeyboardInterrupt") is None
