"""`SLEUTH_CHROMA_URL` on a real `chroma run` server: the ACL filters hold as in the embedded store, and the
token reaches a server that demands one (Chroma behind an authenticating proxy, as a company would run it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler

import httpx
import pytest
from chromadb.errors import AuthorizationError

from connectors.knowledge.chunks import ChunkVectors
from connectors.knowledge.embedder import HashEmbedder
from tests.conftest import Servers
from tests.servers.http import send_json, serve_http

TOKEN = "s3cret-token"


@contextmanager
def _auth_proxy(upstream: str) -> Iterator[str]:
    """Forwards to `upstream` only requests bearing TOKEN; 401 otherwise."""

    class Proxy(BaseHTTPRequestHandler):
        def _forward(self) -> None:
            if (
                self.headers.get("Authorization") != f"Bearer {TOKEN}"
            ):  # refused as Chroma's own auth words it
                send_json(self, 401, {"error": "AuthorizationError", "message": "Unauthorized"}, {})
                return
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k: v for k, v in self.headers.items() if k.lower() not in {"host", "content-length"}}
            reply = httpx.request(
                self.command, upstream + self.path, content=body, headers=headers, timeout=30
            )
            self.send_response(reply.status_code)
            for name in ("Content-Type",):
                if name in reply.headers:
                    self.send_header(name, reply.headers[name])
            self.send_header("Content-Length", str(len(reply.content)))
            self.end_headers()
            self.wfile.write(reply.content)

        do_GET = do_POST = do_PUT = do_DELETE = _forward

        def log_message(self, format: str, *args: object) -> None:
            pass

    with serve_http(Proxy) as url:
        yield url


def test_acl_filters_on_the_server(servers: Servers) -> None:
    chroma = servers.chroma
    vectors = ChunkVectors(HashEmbedder(), url=chroma.url, database=chroma.database())
    metas = [{"doc_id": "d:1", "acl": ["public"]}, {"doc_id": "d:2", "acl": ["group:acme:finance"]},
             {"doc_id": "d:3", "acl": ["user:dana@acme.io", "group:acme:ops"]}]  # fmt: skip
    vectors.upsert(["d:1#0", "d:2#0", "d:3#0"], ["kestrel budget"] * 3, metas)

    def seen(*principals: str) -> set[str]:
        return {h.doc_id for h in vectors.search("kestrel budget", frozenset(principals), 10)}

    assert seen("public") == {"d:1"}
    assert seen("public", "group:acme:finance") == {"d:1", "d:2"}
    assert seen("group:acme:ops") == {"d:3"}
    vectors.delete_docs(["d:2"])
    assert vectors.count() == 2


def test_the_token_is_sent_to_the_server(servers: Servers) -> None:
    database = servers.chroma.database()
    with _auth_proxy(servers.chroma.url) as guarded:
        with pytest.raises(AuthorizationError):  # refused without the token (Chroma opens on first use)
            ChunkVectors(HashEmbedder(), url=guarded, database=database).search(
                "kestrel", frozenset({"public"}), 3
            )
        vectors = ChunkVectors(HashEmbedder(), url=guarded, token=TOKEN, database=database)
        vectors.upsert(["d:1#0"], ["kestrel"], [{"doc_id": "d:1", "acl": ["public"]}])
        assert [h.doc_id for h in vectors.search("kestrel", frozenset({"public"}), 3)] == ["d:1"]
