"""`sleuth` starts fast because importing the CLI imports no heavy package: the store, the flow, Slack and
OAuth load inside the commands that use them. Checked by what a fresh interpreter has imported (behaviour),
not by timing; the measured times are in `sleuth bench`'s notes and the README."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
HEAVY = [
    "authlib",
    "chromadb",
    "httpx",
    "langchain",
    "langchain_core",
    "langgraph",
    "llama_index",
    "nltk",
    "numpy",
    "onnxruntime",
    "slack_bolt",
    "tokenizers",
]
PROBE = """
import json, sys
from typer.testing import CliRunner
from bot.cli import app
result = CliRunner().invoke(app, sys.argv[1:])
loaded = sorted({name.split(".")[0] for name in sys.modules} & set(json.loads(%r)))
print(json.dumps({"exit": result.exit_code, "loaded": loaded}))
"""


def _probe(*args: str, data_dir: Path) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE % json.dumps(HEAVY), *args],
        cwd=REPO,
        env={
            "SLEUTH_DATA_DIR": str(data_dir),
            "PATH": "/usr/bin:/bin",
            "XDG_CONFIG_HOME": str(data_dir / "cfg"),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_help_imports_no_heavy_package(tmp_path: Path) -> None:
    assert _probe("--help", data_dir=tmp_path) == {"exit": 0, "loaded": []}


def test_a_mistyped_asker_is_refused_before_anything_heavy_loads(tmp_path: Path) -> None:
    assert _probe("ask", "why?", "--as", "nobody@acme.io", data_dir=tmp_path) == {"exit": 2, "loaded": []}
