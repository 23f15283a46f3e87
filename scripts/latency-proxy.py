#!/usr/bin/env python3
"""A TCP relay on 127.0.0.1 that adds network latency, for scripts/bench.sh: every byte is
delivered HALF-RTT seconds after it was sent, in both directions, and a new connection's first
bytes wait one more round trip (the TCP handshake a real network would cost). Loopback has no
latency and `tc netem` would slow every other loopback user of the machine; this slows only
the connections made to it. Not part of the product.

Usage: latency-proxy.py --rtt SECONDS --target PORT --port-file FILE
"""

import argparse
import asyncio
import time


async def relay(reader, writer, delay, extra_first=0.0):
    """Copies reader to writer, each chunk delayed by `delay` from when it was read (in order)."""
    queue = asyncio.Queue()

    async def deliver():
        while True:
            due, data = await queue.get()
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                writer.close()
                return
            writer.write(data)
            await writer.drain()

    sender = asyncio.ensure_future(deliver())
    first = True
    try:
        while True:
            data = await reader.read(65536)
            due = time.monotonic() + delay + (extra_first if first else 0.0)
            first = False
            await queue.put((due, data or None))
            if not data:
                break
        await sender
    except (ConnectionError, OSError):
        sender.cancel()
        writer.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rtt", type=float, required=True)
    parser.add_argument("--target", type=int, required=True)
    parser.add_argument("--port-file", required=True)
    args = parser.parse_args()
    half = args.rtt / 2

    async def client(reader, writer):
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", args.target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(relay(reader, up_writer, half, extra_first=args.rtt),
                             relay(up_reader, writer, half), return_exceptions=True)

    server = await asyncio.start_server(client, "127.0.0.1", 0, backlog=512)
    with open(args.port_file, "w") as f:
        f.write(str(server.sockets[0].getsockname()[1]))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
