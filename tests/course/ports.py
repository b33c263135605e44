"""Ports for the servers the tests start, without luck.

A port that was bound, closed and then handed to a server "hoping it is still free" races every other process on a
busy machine. So:

* a server that can pick its own port is started on port 0 and the test reads the port it reports
  (:data:`REPORTED_URL` matches the address Jupyter and ``forgelab site serve`` print);
* a port that must stay *unanswered* (a client's "cannot reach" path) is :func:`held_port`: bound and never
  listening, held for the whole test, so connecting is refused and no other socket on the machine is given it;
* only programs that take their ports from a configuration file and can neither report a port they chose nor take a
  socket handed over get :func:`config_ports`: ports the kernel chose, released just before the program binds them
  — the one place a race remains, named here:

  - slurmctld and slurmd read SlurmctldPort/SlurmdPort from slurm.conf, which both daemons and every client command
    must agree on before either starts (port 0 is not a port to them, and Slurm has no socket activation). A daemon
    that finds its port taken logs "Address already in use" and exits: :func:`slurm_cluster.start` then starts the
    cluster again on new ports (the one retry, on that condition);
  - JupyterHub, its configurable-http-proxy and the class service are told each other's ports before any of them
    starts (the hub hands the proxy its API port and the service its URL; none reports a port it chose). There is no
    condition to retry on: the proxy binds its public port even while another socket listens on 127.0.0.1 at that
    port (tried: a socket bound and listening there; the hub said "JupyterHub is now running" on it and the test's
    requests went to the other socket until they timed out). :func:`hub_fixtures.start_hub` fails then with the
    hub's last output, which names its ports.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager

REPORTED_URL = re.compile(r"http://127\.0\.0\.1:(\d+)/")


def reported_port(line: str) -> int:
    """The port in the first loopback URL of ``line`` (what a server started on port 0 printed)."""
    found = REPORTED_URL.search(line)
    assert found is not None, f"no http://127.0.0.1:PORT/ in {line!r}"
    return int(found.group(1))


@contextmanager
def held_port() -> Iterator[int]:
    """A loopback port nothing answers on while the ``with`` block runs: bound by this test, never listening."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])


def config_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports for a program that reads them from its configuration (see the module
    docstring: prefer port 0 and the reported port wherever the program can do that)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()
