#!/usr/bin/env python3
"""The driver of scripts/soak.sh: starts `pinkeeper run` under a notify socket, runs passes by
SIGUSR1 for a given time while it rewrites the fixture's routes (faults, list variants), samples
the daemon at the start, a third of the way and at the end, prints the table and judges it.

One pass at a time: the next SIGUSR1 goes out only after the STATUS= that ends the previous pass,
so the pass count is exact and every pass sees the routes written for it.
"""

import argparse
import base64
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time

FAR = 4102444800  # 2100-01-01: entries that never expire during a soak
# Pins accumulate until they expire (PinMerger: a list adds to what is cached), so the
# changing lists send entries that expire this long after they were first served: publishes and
# hooks go on for the whole soak, and the cached pins level off within seconds. Short, so that how
# many are cached when a sample is taken varies little (at 20 s, 2,400 - 3,000 pins of `big`
# moved anonymous memory by +-0.6 MiB from one sample to the next).
LIFETIME = 5
# Threads that come and go with the work (BlockingWork names); the rest live as long as the daemon.
TRANSIENT = ("pinkeeper-file", "pinkeeper-curl", "pinkeeper-hook", "pinkeeper-metrics", "pinkeeper-tls")
# Sent to `flaky`, one per pass in turn: (name, route keys besides mode and signing key).
FAULTS = [
    ("ok", {}),
    ("http-500", {"status": 500}),
    ("bad-signature", {"signature_override": base64.b64encode(b"not a signature").decode()}),
    ("truncated", {"behavior": "truncate"}),
    ("http-404", {"status": 404}),
    ("refused", {"behavior": "redirect", "location": "https://127.0.0.1:1/flaky"}),
    ("oversize", {"behavior": "oversize", "oversize_bytes": 256 << 10, "chunked": True}),
    ("slow", {"delay": 0.1}),
]
# Every TIMEOUT_EVERY passes instead: one of these, which request_timeout (1 s) cuts off.
TIMEOUTS = [
    ("no-headers", {"behavior": "hang_before_headers", "hang_seconds": 2}),
    ("drip", {"behavior": "drip", "drip_interval": 0.05}),
]
TIMEOUT_EVERY = 100


def entry(name, seed, expires):
    fingerprint = base64.b64encode(hashlib.sha256(seed.encode()).digest()).decode()
    return {"name": name, "fingerprint": fingerprint, "expires": expires}


def write_route(routes, name, route):
    """Atomically: the service may read the file at any moment."""
    path = os.path.join(routes, name + ".json")
    with open(path + ".tmp", "w") as f:
        json.dump(route, f)
    os.replace(path + ".tmp", path)


class Routes:
    """What the fixture serves for each store, pass by pass."""

    def __init__(self, directory, key):
        self.directory, self.key = directory, key
        self.written = {}
        self.generations = {}
        self.steady = [entry("steady.example.com", "steady", FAR)]

    def variant(self, store, generation, variants, size):
        """Generation `generation` of a changing list: one of `variants` sets of `size` entries,
        expiring LIFETIME seconds after the generation was first served."""
        if self.generations.get(store, (None,))[0] != generation:
            expires = int(time.time()) + LIFETIME
            v = generation % variants
            entries = [entry(f"{store}{i}.example.com", f"{store} {v} {i}", expires) for i in range(size)]
            self.generations[store] = (generation, entries)
        return self.generations[store][1]

    def route(self, name, mode, fingerprints, **extra):
        route = {"mode": mode, "signing_key": self.key, "fingerprints": fingerprints, **extra}
        if self.written.get(name) != route:  # unchanged: no rewrite (and static bodies stay cached)
            write_route(self.directory, name, route)
            self.written[name] = route

    def set_up(self, number):
        """The routes of pass `number`; returns the fault `flaky` gets."""
        self.route("steady", "challenge", self.steady)
        self.route("etag", "static", self.steady, etag=True)
        self.route("rotating", "static", self.variant("rotating", number // 3, 3, 5))
        self.route("big", "static", self.variant("big", number // 20, 2, 200))
        if number % TIMEOUT_EVERY == TIMEOUT_EVERY // 2:
            fault, keys = TIMEOUTS[(number // TIMEOUT_EVERY) % len(TIMEOUTS)]
        else:
            fault, keys = FAULTS[number % len(FAULTS)]
        self.route("flaky", "challenge", self.steady, **keys)
        return fault


def read_fields(path, names):
    values = {}
    with open(path) as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in names:
                values[key] = int(rest.split()[0])
    return values


def thread_names(pid):
    names = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                names.append(f.read().strip())
        except FileNotFoundError:
            pass  # ended while listed
    return names


def settle(pid, limit=30):
    """Waits until none of the daemon's short-lived threads is left (the download driver ends 10 s
    after its last transfer); returns how long that took."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if not any(name.startswith(TRANSIENT) for name in thread_names(pid)):
            time.sleep(0.5)  # a thread that is just returning
            if not any(name.startswith(TRANSIENT) for name in thread_names(pid)):
                break
        time.sleep(0.2)
    return time.monotonic() - start


def sample(pid, heap):
    status = read_fields(f"/proc/{pid}/status", {"Threads", "VmRSS", "RssAnon"})
    rollup = read_fields(f"/proc/{pid}/smaps_rollup", {"Pss", "Anonymous"})
    return {"fds": len(os.listdir(f"/proc/{pid}/fd")), "threads": status["Threads"],
            "rss_anon": status["RssAnon"], "anonymous": rollup["Anonymous"], "pss": rollup["Pss"],
            "rss": status["VmRSS"], "heap": heap_in_use(pid) if heap else None}


def heap_in_use(pid):
    """glibc's own count of the bytes malloc has handed out and not got back (kB), read with gdb
    (mallinfo2 in the stopped daemon): it grows with a leak, not with fragmentation."""
    result = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "print (size_t)mallinfo2().uordblks"],
                            capture_output=True, text=True, timeout=60)
    for line in result.stdout.splitlines():
        if line.startswith("$1 = "):
            return int(line.split("=")[1]) // 1024
    return None


class Notifications:
    def __init__(self, path):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(path)

    def wait(self, prefix, timeout):
        """The next message with a line starting with `prefix`, or None after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            self.socket.settimeout(left)
            try:
                message = self.socket.recv(65536).decode(errors="replace")
            except socket.timeout:
                return None
            if any(line.startswith(prefix) for line in message.split("\n")):
                return message
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--routes", required=True)
    parser.add_argument("--signing-key", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--seconds", type=float, default=150)
    parser.add_argument("--tolerance-kb", type=int, default=256)
    parser.add_argument("--heap", action="store_true", help="also read malloc's bytes in use (gdb)")
    args = parser.parse_args()

    routes = Routes(args.routes, args.signing_key)
    routes.set_up(0)
    notify_path = os.path.join(args.work, "notify.sock")
    notifications = Notifications(notify_path)
    environment = {k: v for k, v in os.environ.items() if k not in ("WATCHDOG_USEC", "JOURNAL_STREAM")}
    environment["NOTIFY_SOCKET"] = notify_path
    log = open(os.path.join(args.work, "daemon.log"), "w")
    daemon = subprocess.Popen([args.binary, "run", "--config", args.config], env=environment,
                              stdout=subprocess.DEVNULL, stderr=log)
    pid = daemon.pid
    try:
        return soak(args, routes, notifications, daemon, pid)
    finally:
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(10)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()


def soak(args, routes, notifications, daemon, pid):
    if notifications.wait("READY=1", 60) is None:
        print("soak: no READY=1 within 60 s; see", os.path.join(args.work, "daemon.log"), file=sys.stderr)
        return 1
    started = time.monotonic()
    passes, faults, samples, driving, settling = 0, {}, [], 0.0, 0.0

    def take(point):
        nonlocal settling
        settling += settle(pid)
        samples.append((point, passes, time.monotonic() - started, sample(pid, args.heap)))

    # `seconds` of passes; the waits for the threads to end before each sample come on top.
    take("start")
    stops = [args.seconds / 3, args.seconds]
    for stop in stops:
        while time.monotonic() - started - settling < stop:
            passes += 1
            fault = routes.set_up(passes)
            faults[fault] = faults.get(fault, 0) + 1
            began = time.monotonic()
            os.kill(pid, signal.SIGUSR1)
            if notifications.wait("STATUS=", 30) is None:
                print(f"soak: pass {passes} ({fault}) did not end within 30 s", file=sys.stderr)
                return 1
            driving += time.monotonic() - began
            if daemon.poll() is not None:
                print(f"soak: the daemon exited with {daemon.returncode}", file=sys.stderr)
                return 1
        take("third" if stop != stops[-1] else "end")
    elapsed = time.monotonic() - started

    print(f"passes: {passes} in {elapsed:.0f} s ({driving:.0f} s of passes, {passes / driving:.1f} per second; "
          f"{settling:.0f} s waiting for threads to end before the samples)")
    print("flaky's answers: " + ", ".join(f"{name} {count}" for name, count in faults.items()))
    with open(os.path.join(args.work, "daemon.log")) as f:
        lines = f.readlines()
    print(f"daemon log: {len(lines)} lines; {sum('change hook finished' in line for line in lines)} hook runs")
    for store in ("steady", "etag", "rotating", "big", "flaky"):
        mine = [line for line in lines if line.rstrip().endswith(f" store={store}") and ' msg="update ' in line]
        results = {}
        for line in mine:
            result = line.split(" result=")[1].split()[0] if " result=" in line else "?"
            if "not_modified=true" in line:
                result += " (304 or same list)"
            results[result] = results.get(result, 0) + 1
        print(f"  {store}: " + ", ".join(f"{name} {count}" for name, count in sorted(results.items())))
    heap = f" {'in use':>9}" if args.heap else ""
    print(f"{'point':<6} {'passes':>6} {'time':>6} {'fds':>4} {'threads':>7} {'RssAnon':>9} {'Anonymous':>9} {'VmRSS':>9} {'PSS':>9}{heap}")
    for point, count, at, s in samples:
        heap = f" {s['heap']:>6} kB" if args.heap else ""
        print(f"{point:<6} {count:>6} {at:>5.0f}s {s['fds']:>4} {s['threads']:>7} {s['rss_anon']:>6} kB "
              f"{s['anonymous']:>6} kB {s['rss']:>6} kB {s['pss']:>6} kB{heap}")

    third, end = samples[1][3], samples[2][3]
    problems = []
    for key in ("fds", "threads"):
        if end[key] > third[key]:
            problems.append(f"{key} grew: {third[key]} -> {end[key]}")
    # PSS is printed, not judged: it moves with the other processes of the machine that map the
    # same libraries. VmRSS counts those pages whole, whoever else maps them.
    for key, tolerance in (("rss_anon", args.tolerance_kb), ("anonymous", args.tolerance_kb), ("rss", 4 * args.tolerance_kb)):
        if end[key] - third[key] > tolerance:
            problems.append(f"{key} grew by {end[key] - third[key]} kB (tolerance {tolerance} kB)")
    if daemon.poll() is not None:
        problems.append(f"the daemon exited with {daemon.returncode}")
    for problem in problems:
        print("soak: FAIL:", problem)
    if not problems:
        print("soak: flat: no fd or thread more, memory within tolerance after the first third")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
