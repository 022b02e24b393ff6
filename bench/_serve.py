"""Server processes of the HTTP benchmarks, one kind per invocation, served on 127.0.0.1.

- ``ceiling``: a bare ASGI app that reads the body and answers 200, under
  hypercorn's trio worker (the most the server itself can do);
- ``svc``: ``svc.http.create_app`` under hypercorn's trio worker, configured
  like ``svc serve`` (no access log), with no store, SQLite or PostgreSQL;
- ``pywa``: pywa's webhook on FastAPI under uvicorn (one worker, no access log);
- ``fakegraph``: a tiny asyncio HTTP server answering every POST like Graph's
  ``/{phone}/messages`` (the upstream of the send benchmark).

Stops on SIGTERM or SIGINT. ``python bench/_serve.py KIND --port N [...]``
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import signal
from collections.abc import Awaitable, Callable
from typing import Any

PHONE_NUMBER_ID = "106540352242922"
WABA_ID = "102290129340398"
VERIFY_TOKEN = "bench-verify-token"
ACCESS_TOKEN = "bench-access-token"

Scope = dict[str, Any]
ASGI = Callable[[Scope, Any, Any], Awaitable[None]]


async def ceiling_app(scope: Scope, receive: Any, send: Any) -> None:
    """Read the whole body, answer 200 with a small JSON body (the server's ceiling)."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return
        more = message.get("more_body", False)
    body = b'{"status":"ok"}'
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def handler_facade(delay: float | None) -> Any:
    """``None``: no facade (the default one, no handler); else a facade whose message handler
    awaits ``delay`` seconds (0: returns at once), as a bot that calls another service does."""
    if delay is None:
        return None
    import trio

    from svc.webhook import DefaultFacade, MessageUpdate

    facade = DefaultFacade()

    @facade.on("message")
    async def handle(update: MessageUpdate) -> None:
        if delay:
            await trio.sleep(delay)

    return facade


def svc_app(
    *,
    secret: str,
    token: str,
    store: Any = None,
    base_url: str = "https://graph.facebook.com",
    handler_delay: float | None = None,
) -> Any:
    """The service app as ``svc serve`` builds it, with fixed secrets and an optional store;
    ``handler_delay`` adds a message handler that takes that many seconds."""
    from svc.crypto import InboxKeyring
    from svc.http import Profile, ServiceSecrets, create_app

    facade = handler_facade(handler_delay)
    # Handlers over a store keep the waiting updates sealed: a fixed bench key.
    keyring = InboxKeyring([bytes(32)]) if facade is not None and store is not None else None
    return create_app(
        facade=facade,
        inbox_keyring=keyring,
        profile=Profile(phone_number_id=PHONE_NUMBER_ID, waba_id=WABA_ID, base_url=base_url),
        secrets=ServiceSecrets(
            access_token=ACCESS_TOKEN,
            webhook_verify_token=VERIFY_TOKEN,
            webhook_app_secret=secret,
            service_bearer_token=token,
        ),
        store=store,
    )


def pywa_app(*, secret: str) -> Any:
    """pywa's async client on FastAPI: signature validation on, no-op message/status handlers."""
    from fastapi import FastAPI
    from pywa_async import WhatsApp

    server = FastAPI()
    wa = WhatsApp(
        phone_id=PHONE_NUMBER_ID,
        token=ACCESS_TOKEN,
        server=server,
        webhook_endpoint="/webhooks/whatsapp",
        verify_token=VERIFY_TOKEN,
        app_secret=secret,
        validate_updates=True,
    )

    async def on_message(_client: Any, _message: Any) -> None:
        return None

    async def on_status(_client: Any, _status: Any) -> None:
        return None

    wa.on_message()(on_message)
    wa.on_message_status()(on_status)
    return server


def open_store(
    kind: str,
    *,
    sqlite_path: str | None,
    pg_url: str | None,
    pg_schema: str | None,
    sqlite_writer: str = "process",
    pg_writer: str = "process",
) -> Any:
    """The store ``svc serve`` would open (its webhook writes where ``--sqlite-writer`` and
    ``--pg-writer`` put them: the writer process by default)."""
    from svc.store import PostgresStore, SqliteStore

    if kind == "none":
        return None
    if kind == "sqlite":
        assert sqlite_path is not None
        return SqliteStore(sqlite_path, writer=sqlite_writer)
    assert pg_url is not None
    return PostgresStore(pg_url, schema=pg_schema, writer=pg_writer)


def _hypercorn_config(port: int) -> Any:
    from hypercorn.config import Config

    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.graceful_timeout = 1.0
    config.loglevel = "WARNING"
    return config


def serve_trio(app_factory: Callable[[Any], Any], port: int, store: Any) -> None:
    """Serve under hypercorn's trio worker until SIGTERM/SIGINT; migrate and close ``store``."""
    import trio
    from hypercorn.trio import serve

    async def main() -> None:
        if store is not None:
            await store.migrate()
        stop = trio.Event()

        async def watch() -> None:
            with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for _ in signals:
                    stop.set()
                    return

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(watch)
                await serve(app_factory(store), _hypercorn_config(port), shutdown_trigger=stop.wait)
                nursery.cancel_scope.cancel()
        finally:
            if store is not None:
                with trio.CancelScope(shield=True):
                    await store.close()

    trio.run(main)


def serve_fake_graph(port: int) -> None:
    """Answer every request like Graph's send endpoint, with a fresh ``wamid`` each time."""
    ids = itertools.count(1)

    class Protocol(asyncio.Protocol):
        def connection_made(self, transport: Any) -> None:
            self.transport = transport
            self.buffer = b""

        def data_received(self, data: bytes) -> None:
            self.buffer += data
            while True:
                end = self.buffer.find(b"\r\n\r\n")
                if end < 0:
                    return
                head = self.buffer[:end].lower()
                length = 0
                at = head.find(b"content-length:")
                if at >= 0:
                    length = int(head[at + 15 :].split(b"\r\n", 1)[0])
                if len(self.buffer) < end + 4 + length:
                    return
                self.buffer = self.buffer[end + 4 + length :]
                body = (
                    '{"messaging_product":"whatsapp","contacts":[{"input":"15551234567",'
                    '"wa_id":"15551234567"}],"messages":[{"id":"wamid.FAKE'
                    + f"{next(ids):012d}"
                    + '"}]}'
                ).encode()
                self.transport.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                    + str(len(body)).encode()
                    + b"\r\n\r\n"
                    + body
                )

    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(Protocol, "127.0.0.1", port)
        stop = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)
        async with server:
            await stop.wait()

    asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("kind", choices=("ceiling", "svc", "pywa", "fakegraph"))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--secret", default="bench-app-secret")
    parser.add_argument("--token", default="bench-service-token")
    parser.add_argument("--store", choices=("none", "sqlite", "postgres"), default="none")
    parser.add_argument("--sqlite-path")
    parser.add_argument("--pg-url")
    parser.add_argument("--pg-schema")
    parser.add_argument("--sqlite-writer", choices=("thread", "process"), default="process")
    parser.add_argument("--pg-writer", choices=("thread", "process"), default="process")
    parser.add_argument("--base-url", default="https://graph.facebook.com")
    parser.add_argument("--handler-delay", type=float, help="a message handler of N seconds")
    args = parser.parse_args()
    if args.kind == "fakegraph":
        serve_fake_graph(args.port)
    elif args.kind == "ceiling":
        serve_trio(lambda _store: ceiling_app, args.port, None)
    elif args.kind == "svc":
        store = open_store(
            args.store,
            sqlite_path=args.sqlite_path,
            pg_url=args.pg_url,
            pg_schema=args.pg_schema,
            sqlite_writer=args.sqlite_writer,
            pg_writer=args.pg_writer,
        )
        serve_trio(
            lambda s: svc_app(
                secret=args.secret,
                token=args.token,
                store=s,
                base_url=args.base_url,
                handler_delay=args.handler_delay,
            ),
            args.port,
            store,
        )
    else:
        import uvicorn

        uvicorn.run(
            pywa_app(secret=args.secret),
            host="127.0.0.1",
            port=args.port,
            log_level="warning",
            access_log=False,
        )


if __name__ == "__main__":
    main()
