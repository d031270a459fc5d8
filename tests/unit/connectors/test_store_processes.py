"""Two processes on one embedded store: what one writes, the other's searches find (the server syncs a source
while a worker process answers from the same data dir)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from connectors.database import make_engine, sqlite_url
from connectors.knowledge.chunks import ChunkVectors
from connectors.knowledge.embedder import HashEmbedder
from connectors.knowledge.store import GENERATION_TTL_S, KnowledgeStore
from connectors.sync import sync_source
from tests.conftest import folder

WRITER = """
import sys
from pathlib import Path
from connectors.database import make_engine, sqlite_url
from connectors.knowledge.chunks import ChunkVectors
from connectors.knowledge.embedder import HashEmbedder
from connectors.knowledge.store import KnowledgeStore
from connectors.sources.folder import FolderConfig, FolderConnector
from connectors.sync import sync_source
root, corpus = Path(sys.argv[1]), Path(sys.argv[2])
store = KnowledgeStore(make_engine(sqlite_url(root)), ChunkVectors(HashEmbedder(), path=root / "chroma"))
sync_source(store, FolderConnector(FolderConfig(path=corpus), name="team"))
"""


def _page(corpus: Path, name: str, title: str, body: str) -> None:
    (corpus / f"{name}.md").write_text(f"---\ntitle: {title}\nacl: [public]\n---\n# {title}\n\n{body}\n")


def test_a_search_finds_what_another_process_wrote_after_it_opened(tmp_path: Path) -> None:
    corpus, root = tmp_path / "corpus", tmp_path / "store"
    corpus.mkdir()
    _page(corpus, "kiln", "Kiln Manual", "The kiln fires at 1,200 degrees.")
    store = KnowledgeStore(make_engine(sqlite_url(root)), ChunkVectors(HashEmbedder(), path=root / "chroma"))
    sync_source(store, folder(corpus, "team"))
    public = frozenset({"public"})
    assert {h.doc_id for h in store.search_text("kiln fires", public, 5, mode="dense")} == {"team:kiln"}

    _page(corpus, "glaze", "Glaze Recipes", "Celadon glaze needs iron oxide and a reduction firing.")
    subprocess.run([sys.executable, "-c", WRITER, str(root), str(corpus)], check=True, cwd=Path.cwd())
    time.sleep(GENERATION_TTL_S + 0.1)  # another process's writes show within the generation's time to live

    found = {h.doc_id for h in store.search_text("celadon glaze iron oxide", public, 5, mode="dense")}
    assert "team:glaze" in found
    assert store.similarity("celadon glaze", ["team:glaze#0"], public)
