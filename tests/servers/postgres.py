"""A real PostgreSQL server for the tests: initdb in a temporary directory, listening on 127.0.0.1 only.

Uses the machine's server binaries (PATH, or Debian's /usr/lib/postgresql/N/bin; `make test` installs them when
absent). PostgreSQL refuses to run as root, so under root the cluster belongs to the `postgres` account.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import uuid
from pathlib import Path
from typing import Any

import psycopg

START_TIMEOUT_S = 60


def server_binaries() -> Path:
    found = shutil.which("initdb") or shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if not versions:
        raise RuntimeError("no PostgreSQL server binaries: `make test` installs them (apt postgresql)")
    return Path(versions[-1]).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """One cluster; `database()` hands each test its own database (optionally a copy of a template)."""

    def __init__(self, root: Path) -> None:
        self.root, self.port = root, free_port()
        self.data = root / "pgdata"
        self._bin = server_binaries()
        self._user: dict[str, Any] = {}
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            self._user = {"user": account.pw_uid, "group": account.pw_gid}
            root.mkdir(parents=True, exist_ok=True)
            os.chown(root, account.pw_uid, account.pw_gid)
            os.chmod(root.parent, 0o755)

    def _run(self, *args: str) -> None:
        subprocess.run([str(self._bin / args[0]), *args[1:]], check=True, capture_output=True, **self._user)

    def start(self) -> PostgresServer:
        self._run("initdb", "-D", str(self.data), "-U", "sleuth", "--auth=trust", "-E", "UTF8", "--no-sync")
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=off -c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start")
        return self

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://sleuth@127.0.0.1:{self.port}/{database}"

    def database(self, template: str | None = None) -> str:
        """A new empty database (or a copy of `template`, which must have no open connections); its URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        copy = f" TEMPLATE {template}" if template else ""
        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user=sleuth dbname=postgres", autocommit=True
        ) as c:
            c.execute(f"CREATE DATABASE {name}{copy}")
        return self.url(name)
