"""Benchmark: many learners submitting at once to the course service on a real JupyterHub on 127.0.0.1.

Starts the hub the hub tests use (configurable-http-proxy, DummyAuthenticator, the course service managed by the hub),
makes ``--learners`` accounts and a token for each through the hub's API, builds one distinct workbook zip per learner
(``forgelab submit``'s layout, a few kilobytes like a real one), then lets every learner submit at the same moment
(one thread each, released together by a barrier) to the service's own address, as learners' servers do. The first
request of each token is checked with the hub (the service then caches the answer for a minute), so the figures
include the hub's token checks.

It prints and, with ``--write``, adds to ``benchmarks/RESULTS.md``: p50/p95/max latency of one submission, the
throughput (submissions per second over the burst), the service's peak resident memory (VmHWM of its process) and
the machine (CPUs, load average before and after). Every submission is then checked: each learner lists their
submissions and downloads the zip, whose sha256 must equal the one they sent and the receipt's — none lost, none
mixed up. Bounded: at most ``--learners`` (default 200) submissions, and the burst must end within ``--timeout``
seconds (default 300). Loopback only.

    .venv/bin/python benchmarks/bench_hub.py [--learners 200] [--timeout 300] [--write]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "course"))

from hub_fixtures import RunningHub, start_hub, workbook_zip  # noqa: E402


def _peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def run(learners: int, timeout: float) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="bench-hub-") as scratch:
        folder = Path(scratch)
        bundle = folder / "bundle.zip"
        bundle.write_bytes(workbook_zip())
        hub: RunningHub = start_hub(folder / "state", bundle)
        try:
            names = [f"learner{index:03d}" for index in range(learners)]
            print(f"making {learners} accounts and tokens …", flush=True)
            with ThreadPoolExecutor(8) as pool:
                tokens = dict(zip(names, pool.map(hub.token, names)))
            zips = {name: workbook_zip(f"OWNER = {name!r}\n# {'x' * 2000}\n", {
                "evidence/design-answer.md": f"{name}'s answer\n".encode() * 40}) for name in names}
            load_before = _load()
            barrier = threading.Barrier(learners)
            latencies: dict[str, float] = {}
            receipts: dict[str, dict[str, object]] = {}
            failures: list[str] = []

            def submit(name: str) -> None:
                with httpx.Client(base_url=hub.service_url, timeout=timeout,
                                  headers={"Authorization": f"token {tokens[name]}"}) as client:
                    barrier.wait(timeout)
                    started = time.perf_counter()
                    response = client.post("api/submissions", params={"stage": "all"}, content=zips[name])
                    latencies[name] = time.perf_counter() - started
                    if response.status_code != 201:
                        failures.append(f"{name}: {response.status_code} {response.text[:200]}")
                    else:
                        receipts[name] = response.json()

            print(f"{learners} learners submit at once …", flush=True)
            burst_started = time.perf_counter()
            with ThreadPoolExecutor(learners) as pool:
                list(pool.map(submit, names))
            burst = time.perf_counter() - burst_started
            load_after = _load()
            peak = _peak_kib(hub.service_pid())

            lost, mixed = [], []
            for name in names:
                sent = hashlib.sha256(zips[name]).hexdigest()
                receipt = receipts.get(name)
                if receipt is None or receipt["sha256"] != sent or receipt["learner"] != name:
                    mixed.append(name)
                    continue
                with hub.as_user(name) as client:
                    listed = client.get("api/submissions").json()["submissions"]
                    kept = client.get(f"api/submissions/{receipt['id']}/zip").content
                if [r["sha256"] for r in listed] != [sent] or hashlib.sha256(kept).hexdigest() != sent:
                    lost.append(name)
        finally:
            hub.stop()
    ordered = sorted(latencies.values())
    return {
        "learners": learners, "accepted": len(receipts), "failures": failures, "lost": lost, "mixed": mixed,
        "p50_s": statistics.median(ordered), "p95_s": ordered[max(0, int(len(ordered) * 0.95) - 1)],
        "max_s": ordered[-1], "burst_s": burst, "per_s": len(receipts) / burst, "peak_mib": peak / 1024,
        "zip_kib": statistics.mean(len(z) for z in zips.values()) / 1024,
        "load_before": load_before, "load_after": load_after,
    }


def report(figures: dict[str, object]) -> str:
    machine = f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}, Python {platform.python_version()}"
    return "\n".join([
        f"## Course service on JupyterHub: {figures['learners']} learners submit at once (benchmarks/bench_hub.py)",
        "",
        f"Machine: {machine}; load average (1, 5, 15 min) {figures['load_before']} before the burst, "
        f"{figures['load_after']} after. Measured {datetime.now(UTC).strftime('%Y-%m-%d')}.",
        "",
        "| figure | value |", "|---|---|",
        f"| submissions accepted | {figures['accepted']} of {figures['learners']} |",
        f"| lost / mixed up (checked by sha256 of every zip, list and download) | "
        f"{len(figures['lost'])} / {len(figures['mixed'])} |",  # type: ignore[arg-type]
        f"| latency of one submission, p50 / p95 / max | {figures['p50_s']:.2f} s / {figures['p95_s']:.2f} s / "
        f"{figures['max_s']:.2f} s |",
        f"| throughput over the burst | {figures['per_s']:.1f} submissions/s ({figures['burst_s']:.1f} s in all) |",
        f"| the service's peak resident memory | {figures['peak_mib']:.0f} MiB |",
        f"| size of one submission (zip) | {figures['zip_kib']:.1f} KiB |",
        "",
    ])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--write", action="store_true", help="add the figures to benchmarks/RESULTS.md")
    args = parser.parse_args()
    if not 1 <= args.learners <= 500:
        parser.error("--learners: 1 to 500")
    figures = run(args.learners, args.timeout)
    text = report(figures)
    print(text)
    for kind in ("failures", "lost", "mixed"):
        if figures[kind]:
            print(f"{kind}: {figures[kind]}")
    if args.write:
        results = ROOT / "benchmarks" / "RESULTS.md"
        existing = results.read_text(encoding="utf-8") if results.exists() else "# Benchmark results\n\n"
        results.write_text(existing.rstrip("\n") + "\n\n" + text, encoding="utf-8")
    return 0 if not (figures["failures"] or figures["lost"] or figures["mixed"]) else 1


if __name__ == "__main__":
    sys.exit(main())
