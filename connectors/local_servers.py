"""Throwaway PostgreSQL and Chroma servers on 127.0.0.1 in a folder, and databases made and dropped on any
PostgreSQL or Chroma server: the server stack of the scale bench, and of the tests.

PostgreSQL comes from the machine's server binaries (PATH, or Debian's /usr/lib/postgresql/N/bin; `make test`
installs them when absent) and refuses to run as root, so under root the cluster belongs to the `postgres`
account. Chroma is `chroma run`, the CLI chromadb installs.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import psycopg
from sqlalchemy.engine import make_url

START_TIMEOUT_S = 60


def free_port() -> int:
    """A free TCP port on 127.0.0.1 for a local server (these, the Slack emulator, `sleuth serve`)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def unique_name(prefix: str = "t") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


# ---------------------------------------------------------------------------------------------- PostgreSQL
def server_binaries() -> Path:
    found = shutil.which("initdb") or shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if not versions:
        raise RuntimeError("no PostgreSQL server binaries: `make test` installs them (apt postgresql)")
    return Path(versions[-1]).parent


def _libpq(url: str) -> str:
    """A SQLAlchemy URL (`postgresql+psycopg://…`) as psycopg's own connection string."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def create_database(url: str, name: str | None = None, template: str | None = None) -> str:
    """A new empty database (or a copy of `template`, which must have no open connections) on the PostgreSQL
    server `url` points at (any database there; the role needs CREATEDB); the new database's URL."""
    name = name or unique_name()
    copy = f" TEMPLATE {template}" if template else ""
    with psycopg.connect(_libpq(url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"{copy}')
    return make_url(url).set(database=name).render_as_string(hide_password=False)


def drop_database(url: str) -> None:
    """Drops the database `url` names (connected through the server's `postgres` database)."""
    target = make_url(url)
    with psycopg.connect(_libpq(str(target.set(database="postgres"))), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{target.database}" WITH (FORCE)')


def database_mb(url: str) -> float:
    with psycopg.connect(_libpq(url)) as conn:
        (size,) = conn.execute("SELECT pg_database_size(current_database())").fetchone() or (0,)
    return float(size) / (1024 * 1024)


class PostgresServer:
    """One cluster in `root`; `database()` hands out databases on it."""

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
        return create_database(self.url(), template=template)

    def pid(self) -> int:
        """The postmaster's process id (its backends are its children)."""
        return int((self.data / "postmaster.pid").read_text().split()[0])


# ---------------------------------------------------------------------------------------------- Chroma
def _chroma_settings(url: str, token: str | None) -> Any:
    import chromadb

    parsed = urlparse(url)
    return chromadb.Settings(
        chroma_server_host=parsed.hostname or "127.0.0.1",
        chroma_server_http_port=parsed.port or 8000,
        chroma_server_ssl_enabled=parsed.scheme == "https",
        chroma_server_headers={"Authorization": f"Bearer {token}"} if token else None,
        chroma_api_impl="chromadb.api.fastapi.FastAPI",
        anonymized_telemetry=False,
    )


def create_chroma_database(url: str, token: str | None = None, name: str | None = None) -> str:
    """A new database on the Chroma server at `url` (one per test or bench size keeps them apart); its name."""
    import chromadb

    name = name or unique_name()
    chromadb.AdminClient(_chroma_settings(url, token)).create_database(name)
    return name


def drop_chroma_database(url: str, name: str, token: str | None = None) -> None:
    import chromadb

    chromadb.AdminClient(_chroma_settings(url, token)).delete_database(name)


class ChromaServer:
    """`chroma run` with its data in `root`; its output goes to `root`.log beside it."""

    def __init__(self, root: Path) -> None:
        self.root, self.port = root, free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ChromaServer:
        chroma = Path(sys.executable).parent / "chroma"
        command = [
            str(chroma),
            "run",
            "--path",
            str(self.root),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
        ]
        log = (self.root.parent / f"{self.root.name}.log").open("wb")
        self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"chroma run exited with {self._process.returncode}")
            try:
                if httpx.get(f"{self.url}/api/v2/heartbeat", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("chroma run did not answer in time")

    def database(self) -> str:
        return create_chroma_database(self.url)

    def client(self, database: str):  # type: ignore[no-untyped-def]
        import chromadb

        return chromadb.HttpClient(host="127.0.0.1", port=self.port, database=database,
                                   settings=chromadb.Settings(anonymized_telemetry=False))  # fmt: skip

    def copy_database(self, source: str, target: str) -> None:
        """Copies every collection (ids, vectors, documents, metadata) of one database into another."""
        src, dst = self.client(source), self.client(target)
        for listed in src.list_collections():
            old = src.get_collection(listed.name)
            new = dst.create_collection(listed.name, metadata=old.metadata, embedding_function=None)
            got = old.get(include=["embeddings", "documents", "metadatas"])
            for start in range(0, len(got["ids"]), 500):
                part = slice(start, start + 500)
                new.add(ids=got["ids"][part], embeddings=got["embeddings"][part],
                        documents=got["documents"][part], metadatas=got["metadatas"][part])  # fmt: skip

    def pid(self) -> int:
        assert self._process is not None, "not started"
        return self._process.pid

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None


# ---------------------------------------------------------------------------------------------- both
@dataclass
class Servers:
    """A real PostgreSQL and a real `chroma run` on 127.0.0.1, their data under `root`."""

    root: Path
    postgres: PostgresServer
    chroma: ChromaServer

    def pids(self) -> tuple[int, ...]:
        return self.postgres.pid(), self.chroma.pid()


@contextmanager
def local_servers() -> Iterator[Servers]:
    """Starts both in a new temporary folder; stops them and removes the folder on the way out."""
    root = Path(tempfile.mkdtemp(prefix="sleuth-servers-"))
    root.chmod(0o755)  # the PostgreSQL cluster belongs to the `postgres` account when running as root
    try:
        postgres = PostgresServer(root / "pg").start()
        try:
            chroma = ChromaServer(root / "chroma").start()
            try:
                yield Servers(root, postgres, chroma)
            finally:
                chroma.stop()
        finally:
            postgres.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
