"""The load generator: a raw-socket asyncio HTTP/1.1 client run as its own process.

It pre-builds every request (so building and signing never compete with the
timed phase), opens ``--concurrency`` keep-alive connections and has each send
its next request as soon as the previous answer is read (closed loop); with ``--rate``
it sends at that fixed rate whatever the answers instead (open loop). Prints one JSON
line: requests, seconds, req/s (or the rate), p50/p99 latency in ms and the count of
each status.

    python bench/_loadgen.py webhook --port 8000 --secret S --count 20000
    python bench/_loadgen.py webhook --port 8000 --secret S --count 3000 --rate 300 --single-text
    python bench/_loadgen.py send --port 8000 --token T --count 5000 [--keyed]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import sys
import time
from collections import Counter

import _deliveries


def _percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def webhook_requests(args: argparse.Namespace, host: str) -> list[bytes]:
    found = _deliveries.deliveries(
        args.count + args.warmup,
        args.secret,
        duplicates=args.duplicates,
        run=args.run,
        single_text=args.single_text,
    )
    return [_deliveries.http_request(d, host=host, path=args.path) for d in found]


def send_requests(args: argparse.Namespace, host: str) -> list[bytes]:
    out = []
    for i in range(args.count + args.warmup):
        body = json.dumps(
            {"to": f"1555{i % 1_000_000:07d}", "text": f"Your order {i} has shipped."}
        ).encode()
        key = f"Idempotency-Key: {args.run}-{i}\r\n" if args.keyed else ""
        head = (
            f"POST {args.path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {args.token}\r\n{key}Content-Length: {len(body)}\r\n\r\n"
        )
        out.append(head.encode() + body)
    return out


async def _read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    length = None
    chunked = False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if length is not None:
        await reader.readexactly(length)
    elif chunked:
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    return status


async def drive(
    requests: list[bytes], *, port: int, concurrency: int, warmup: int
) -> dict[str, object]:
    """Send ``requests`` over ``concurrency`` connections; time all but the first ``warmup``."""
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    next_index = 0
    started = 0.0

    async def worker() -> None:
        nonlocal next_index, started
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while next_index < len(requests):
                index = next_index
                next_index += 1
                if index == warmup:
                    started = time.perf_counter()
                begin = time.perf_counter()
                writer.write(requests[index])
                status = await _read_response(reader)
                if index >= warmup:
                    latencies.append(time.perf_counter() - begin)
                    statuses[status] += 1
        finally:
            writer.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    seconds = time.perf_counter() - started
    done = len(latencies)
    return {
        "requests": done,
        "seconds": round(seconds, 3),
        "rps": round(done / seconds, 1) if seconds > 0 else 0.0,
        "p50_ms": round(_percentile(latencies, 0.5) * 1000, 2),
        "p99_ms": round(_percentile(latencies, 0.99) * 1000, 2),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 2) if latencies else 0.0,
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
    }


async def drive_open_loop(
    requests: list[bytes], *, port: int, rate: float, warmup: int
) -> dict[str, object]:
    """Send request ``i`` at ``start + i / rate`` whatever the answers (open loop).

    Each request takes an idle keep-alive connection or opens one, so a slow answer
    never delays the next send. Latency is measured from the scheduled time (a late
    send counts against the server, not hidden); ``max_send_lag_ms`` says how late the
    client itself was. A reused connection the server closed meanwhile is retried once
    on a fresh one (``reconnects``).
    """
    loop = asyncio.get_running_loop()
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    latencies: list[float] = []
    lags: list[float] = []
    statuses: Counter[int] = Counter()
    counts = Counter[str]()
    begin = loop.time() + 0.2

    async def exchange(request: bytes) -> int:
        for attempt in (0, 1):
            fresh = not idle or attempt == 1
            if fresh:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                counts["opened"] += 1
            else:
                reader, writer = idle.pop()
            try:
                writer.write(request)
                status = await _read_response(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                writer.close()
                if fresh:
                    return 0
                counts["reconnects"] += 1
                continue
            idle.append((reader, writer))
            return status
        return 0

    async def one(index: int, request: bytes) -> None:
        scheduled = begin + index / rate
        wait = scheduled - loop.time()
        if wait > 0:
            await asyncio.sleep(wait)
        lag = loop.time() - scheduled
        status = await exchange(request)
        if index >= warmup:
            latencies.append(loop.time() - scheduled)
            lags.append(lag)
            statuses[status] += 1

    await asyncio.gather(*(one(i, r) for i, r in enumerate(requests)))
    for _, writer in idle:
        writer.close()
    done = len(latencies)
    return {
        "requests": done,
        "rate": rate,
        "seconds": round(len(requests) / rate, 3),
        "p50_ms": round(_percentile(latencies, 0.5) * 1000, 2),
        "p99_ms": round(_percentile(latencies, 0.99) * 1000, 2),
        "max_ms": round(max(latencies) * 1000, 2) if latencies else 0.0,
        "max_send_lag_ms": round(max(lags) * 1000, 2) if lags else 0.0,
        "connections_opened": counts["opened"],
        "reconnects": counts["reconnects"],
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", choices=("webhook", "send"))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--secret", default="")
    parser.add_argument("--token", default="")
    parser.add_argument("--path", default=None)
    parser.add_argument("--duplicates", type=float, default=_deliveries.DUPLICATE_SHARE)
    parser.add_argument("--keyed", action="store_true")
    parser.add_argument("--run", default=secrets.token_hex(3))
    parser.add_argument("--rate", type=float, help="open loop: requests per second")
    parser.add_argument("--single-text", action="store_true", help="one text message per delivery")
    args = parser.parse_args()
    host = f"127.0.0.1:{args.port}"
    if args.mode == "webhook":
        args.path = args.path or _deliveries.WEBHOOK_PATH
        requests = webhook_requests(args, host)
    else:
        args.path = args.path or "/api/messages/text"
        requests = send_requests(args, host)
    if args.rate is not None:
        result = asyncio.run(
            drive_open_loop(requests, port=args.port, rate=args.rate, warmup=args.warmup)
        )
    else:
        result = asyncio.run(
            drive(requests, port=args.port, concurrency=args.concurrency, warmup=args.warmup)
        )
    print(json.dumps(result), flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
