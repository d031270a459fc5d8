"""A real Chroma server for the tests: `chroma run` (the CLI chromadb installs) on 127.0.0.1, data in a temp dir."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx

from tests.servers.postgres import free_port

START_TIMEOUT_S = 60


class ChromaServer:
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
        """A new database on the server (one per test keeps tests apart); its name."""
        import chromadb

        name = f"t_{uuid.uuid4().hex[:12]}"
        chromadb.AdminClient(chromadb.Settings(chroma_server_host="127.0.0.1", chroma_server_http_port=self.port,
                             chroma_api_impl="chromadb.api.fastapi.FastAPI", anonymized_telemetry=False)
                             ).create_database(name)  # fmt: skip
        return name

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

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
