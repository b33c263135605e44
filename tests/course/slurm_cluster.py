"""A real one-node Slurm cluster for a test: munged, slurmctld and slurmd on 127.0.0.1, in a folder of the test's.

Debian's ``slurm-wlm`` and ``munge`` (``.ci/run`` installs them). Everything the cluster writes — its
configuration, munge key and socket, state, spool, logs and PID files — stays in that folder; the
daemons run in the foreground as children of the test, as root (slurmd must be root to run jobs as
their submitter), and :meth:`Cluster.stop` cancels what is left of the test's jobs and stops each
daemon by its PID. Nothing reads or writes ``/etc/slurm`` or ``/etc/munge``: the client commands find
the configuration through ``SLURM_CONF``.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from conftest import wait_until
from ports import config_ports

T = TypeVar("T")
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo")
NODE, PARTITION = "forgelab-node", "grading"
FINISHED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL",
            "DEADLINE"}


def _binary(name: str) -> str | None:
    for folder in ("/usr/sbin", "/usr/bin", "/sbin", "/bin"):
        if os.access(f"{folder}/{name}", os.X_OK):
            return f"{folder}/{name}"
    return shutil.which(name)


def unavailable() -> str | None:
    """Why a cluster cannot start here (None when it can)."""
    missing = [name for name in (*DAEMONS, *CLIENTS) if _binary(name) is None]
    if missing:
        return (f"Slurm is not installed ({', '.join(missing)} not found): `apt-get update && apt-get install -y "
                "slurm-wlm munge` (.ci/run does this before `make test`)")
    if os.geteuid() != 0:
        return "slurmd runs jobs only as root, and this test runs as an ordinary user: run it as root (as CI does)"
    return None


def _memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    return 4096


@dataclass
class Cluster:
    folder: Path
    env: dict[str, str]
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    jobs: list[str] = field(default_factory=list)

    @property
    def conf(self) -> Path:
        return self.folder / "slurm.conf"

    def run(self, *command: str, timeout: float = 60, env: dict[str, str] | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(command), env={**self.env, **(env or {})}, cwd=cwd or self.folder,
                              capture_output=True, text=True, timeout=timeout)

    def logs(self) -> str:
        parts = []
        for name in ("slurmctld.log", "slurmd.log", "munged.log"):
            path = self.folder / name
            if path.is_file():
                parts.append(f"== {name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-25:]))
        return "\n".join(parts)

    def wait_until_idle(self, deadline_s: float = 60) -> None:
        """Until the node accepts jobs (slurmd registered with the controller)."""
        states = [""]

        def idle() -> bool:
            done = self.run("sinfo", "--noheader", "--nodes", NODE, "--format", "%T")
            states.append(done.stdout.strip())
            return done.returncode == 0 and states[-1].startswith(("idle", "mixed", "allocated"))

        self._wait(idle, deadline_s, lambda: f"the Slurm node to become idle (state {states[-1]!r})")

    def tasks(self, job: str) -> dict[str, dict[str, str]]:
        """Every task of a job (one for a plain job, one per array index): its name (``ID`` or ``ID_K``) → the fields
        ``scontrol show job`` prints (JobState, ExitCode, StartTime, EndTime …)."""
        done = self.run("scontrol", "--oneliner", "show", "job", job)
        found = {}
        for line in done.stdout.splitlines():
            fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
            task = fields.get("ArrayTaskId")
            found[f"{fields.get('ArrayJobId')}_{task}" if task else fields.get("JobId", "")] = fields
        return found

    def wait_for(self, jobs: list[str], deadline_s: float) -> dict[str, dict[str, str]]:
        """Until every task of ``jobs`` has finished (polling the controller); a job still running at the deadline, or a
        daemon that died, raises."""
        seen: list[dict[str, dict[str, str]]] = [{}]

        def finished() -> dict[str, dict[str, str]] | None:
            found = {name: fields for job in jobs for name, fields in self.tasks(job).items()}
            seen.append(found)
            return found if found and all(fields.get("JobState") in FINISHED for fields in found.values()) else None

        return self._wait(finished, deadline_s, lambda: f"Slurm jobs {jobs} to finish (now "
                          f"{ {name: fields.get('JobState') for name, fields in seen[-1].items()} })")

    def _stopped_daemon(self) -> str | None:
        """Which daemon has stopped (a wait on the cluster gives up at once), or None."""
        for name, process in self.processes.items():
            if process.poll() is not None:
                return f"{name} stopped (exit {process.returncode})"
        return None

    def _wait(self, condition: Callable[[], T | None], deadline_s: float, what: Callable[[], str]) -> T:
        """:func:`conftest.wait_until` on the cluster (asked every half second), giving up when a daemon stops; a
        failure carries the daemons' logs."""
        try:
            return wait_until(condition, timeout=deadline_s, what="the cluster", gave_up=self._stopped_daemon,
                              every=0.5)
        except AssertionError as failed:
            raise RuntimeError(f"{failed}: waited for {what()}\n{self.logs()}") from None

    def stop(self) -> list[str]:
        """Cancel the test's jobs that are left, stop the daemons by PID (slurmd, slurmctld, munged); what did not stop."""
        for job in self.jobs:
            self.run("scancel", job, timeout=30)
        if self.jobs and "slurmctld" in self.processes:
            try:  # the cancelled jobs end before the daemons do (what is still running then is killed with them)
                self._wait(lambda: all(fields.get("JobState") in FINISHED for job in self.jobs
                                       for fields in self.tasks(job).values()), 30, lambda: "the cancelled jobs to end")
            except RuntimeError:
                pass
        stubborn = []
        for name in ("slurmd", "slurmctld", "munged"):
            process = self.processes.pop(name, None)
            if process is None or process.poll() is not None:
                continue
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
                stubborn.append(name)
        return stubborn


def _config(folder: Path, host: str, ports: tuple[int, int], cpus: int, memory_mb: int) -> str:
    return "\n".join([
        "# a one-node cluster for one test; every path is inside this folder",
        "ClusterName=forgelab-test",
        f"SlurmctldHost={host}(127.0.0.1)",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"SlurmctldPort={ports[0]}",
        f"SlurmdPort={ports[1]}",
        "AuthType=auth/munge",
        f"AuthInfo=socket={folder}/munge.socket",
        "CredType=cred/munge",
        f"StateSaveLocation={folder}/state",
        f"SlurmdSpoolDir={folder}/spool",
        f"SlurmctldPidFile={folder}/slurmctld.pid",
        f"SlurmdPidFile={folder}/slurmd.pid",
        f"SlurmctldLogFile={folder}/slurmctld.log",
        f"SlurmdLogFile={folder}/slurmd.log",
        f"PlugStackConfig={folder}/plugstack.conf",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "MpiDefault=none",
        "SwitchType=switch/none",
        "SchedulerType=sched/builtin",
        "SchedulerParameters=kill_invalid_depend",  # a merge whose shards failed is cancelled, not left pending
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "SlurmdParameters=config_overrides",
        "ReturnToService=2",
        "MinJobAge=3600",
        "MailProg=/bin/true",
        f"NodeName={NODE} NodeHostname={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN",
        f"PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP",
        "",
    ])


PORT_TAKEN = "Address already in use"  # what slurmctld or slurmd logs when the port it was given is taken
STARTS = 3


def start(folder: Path, base_env: dict[str, str]) -> Cluster:
    """Start munged, slurmctld and slurmd for a one-node cluster in ``folder``; the node is idle when this returns.

    slurmctld and slurmd take their ports from slurm.conf and can neither pick one themselves nor take a socket handed
    over (see ports.py): when a daemon finds its port taken meanwhile (its log says :data:`PORT_TAKEN`), the cluster
    is stopped and started again on other ports, up to :data:`STARTS` times; any other failure is raised at once."""
    for attempt in range(1, STARTS + 1):
        try:
            return _start(folder, base_env)
        except RuntimeError as failed:
            if PORT_TAKEN not in str(failed) or attempt == STARTS:
                raise
            shutil.rmtree(folder)
    raise AssertionError("unreachable")


def _start(folder: Path, base_env: dict[str, str]) -> Cluster:
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o711)  # munged wants a socket folder that others may enter but not write
    for name in ("state", "spool"):
        (folder / name).mkdir(exist_ok=True)
    key = folder / "munge.key"
    key.write_bytes(secrets.token_bytes(1024))
    key.chmod(0o400)
    (folder / "plugstack.conf").write_text("", encoding="utf-8")
    host = socket.gethostname().split(".")[0]
    cpus = max(2, os.cpu_count() or 2)
    (folder / "slurm.conf").write_text(_config(folder, host, tuple(config_ports(2)), cpus,
                                               max(8192, _memory_mb())), encoding="utf-8")
    env = {**base_env, "SLURM_CONF": str(folder / "slurm.conf")}
    cluster = Cluster(folder, env)
    commands = {
        "munged": [_binary("munged") or "munged", "--foreground", "--force", f"--socket={folder}/munge.socket",
                   f"--key-file={key}", f"--pid-file={folder}/munged.pid", f"--log-file={folder}/munged.log",
                   f"--seed-file={folder}/munged.seed"],
        "slurmctld": [_binary("slurmctld") or "slurmctld", "-D", "-i", "-f", str(cluster.conf)],
        "slurmd": [_binary("slurmd") or "slurmd", "-D", "-N", NODE, "-f", str(cluster.conf)],
    }
    try:
        for name, command in commands.items():
            log = (folder / f"{name}.out").open("wb")
            cluster.processes[name] = subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT,
                                                       stdin=subprocess.DEVNULL, start_new_session=True)
            if name == "munged":
                _wait_for_socket(folder / "munge.socket", cluster)
        cluster.wait_until_idle()
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _wait_for_socket(path: Path, cluster: Cluster, deadline_s: float = 30) -> None:
    cluster._wait(path.exists, deadline_s, lambda: f"munged to create {path}")
