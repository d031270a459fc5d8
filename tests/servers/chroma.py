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

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
