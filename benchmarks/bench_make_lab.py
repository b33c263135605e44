"""Benchmark: `make lab` from a fresh folder to the printed JupyterLab URL.

Two starts are timed, each in a new temporary folder: a `git clone` of this repository (the course
repository, as an author or instructor gets it) and an unzipped learner bundle (`forgelab release`, as a
learner gets it), each followed by `make lab` until it prints the URL with its token. `--cold` gives every run
an empty uv and pip cache, so every package is downloaded again; without it the machine's caches are used,
as on a machine that installed the workbook before. The load average before and after each run is printed
with it: the machine state is part of the result. This is a measurement, not a test.

    .venv/bin/python benchmarks/bench_make_lab.py [--runs 3] [--cold] [--only clone|bundle]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 900


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def to_url(folder: Path, cache: Path | None) -> float:
    """Seconds from `make lab` in ``folder`` to the printed URL (the server is stopped afterwards)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH", "FORGELAB_"))}
    env.update(BROWSER="true", JUPYTER_CONFIG_DIR=str(folder / ".bench-jupyter"),
               JUPYTER_RUNTIME_DIR=str(folder / ".bench-jupyter" / "runtime"))
    if cache is not None:
        env.update(UV_CACHE_DIR=str(cache / "uv"), PIP_CACHE_DIR=str(cache / "pip"))
    started = time.perf_counter()
    process = subprocess.Popen(["make", "--no-print-directory", "lab", f"PORT={port}"], cwd=folder, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        assert process.stdout is not None
        while time.perf_counter() - started < TIMEOUT_S:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"make lab in {folder} ended without printing a URL")
            if re.search(rf"http://127\.0\.0\.1:{port}/\S*\?token=\w+", line):
                return time.perf_counter() - started
        raise RuntimeError(f"make lab in {folder} printed no URL within {TIMEOUT_S} s")
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


def fresh_clone(into: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(into)], check=True)
    return into


def fresh_bundle(into: Path, bundle: Path) -> Path:
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(into)
    return into / "forge-workbook-lab"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="an empty package cache for every run")
    parser.add_argument("--only", choices=["clone", "bundle"])
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs; caches: {'empty (every package downloaded)' if args.cold else 'warm'}")
    with tempfile.TemporaryDirectory(prefix="bench-make-lab-") as scratch:
        base = Path(scratch)
        subprocess.run([sys.executable, "-m", "forgelab.cli", "release", "--out", str(base / "release")], cwd=ROOT,
                       check=True, stdout=subprocess.DEVNULL)
        bundle = base / "release" / "forge-workbook-lab.zip"
        kinds = [kind for kind in ("clone", "bundle") if args.only in (None, kind)]
        seconds: dict[str, list[float]] = {kind: [] for kind in kinds}
        for run in range(args.runs):
            for kind in kinds:  # interleaved, so the load falls on both alike
                folder = base / f"{kind}-{run}"
                made = fresh_clone(folder) if kind == "clone" else fresh_bundle(folder, bundle)
                before = load()
                took = to_url(made, base / f"cache-{kind}-{run}" if args.cold else None)
                seconds[kind].append(took)
                print(f"{kind:6} run {run + 1}: {took:6.1f} s to the URL (load average before {before}, after {load()})",
                      flush=True)
        for kind, values in seconds.items():
            print(f"{kind:6} median {statistics.median(values):.1f} s (range {min(values):.1f}–{max(values):.1f} s, "
                  f"{len(values)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
