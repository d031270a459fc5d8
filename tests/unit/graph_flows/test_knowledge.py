"""The flow reads the store through typed records: no public read method of `KnowledgeReader` or `ThemeReader`
(nor the store that implements them) takes or returns `Any`, and the store's signatures match the protocol's."""

from __future__ import annotations

import inspect
import typing
from typing import Any

import pytest

from connectors.knowledge.store import KnowledgeStore
from connectors.knowledge.themes import ThemeIndex
from graph_flows.broad import ThemeReader
from graph_flows.knowledge import KnowledgeReader

READERS = [(KnowledgeReader, KnowledgeStore), (ThemeReader, ThemeIndex)]


def _public_methods(cls: type) -> list[str]:
    return sorted(n for n in vars(cls) if not n.startswith("_") and callable(getattr(cls, n)))


def _mentions_any(hint: object) -> bool:
    return hint is Any or any(_mentions_any(arg) for arg in typing.get_args(hint))


def _untyped(fn: object) -> list[str]:
    hints = typing.get_type_hints(fn)
    params = [p for p in inspect.signature(fn).parameters if p != "self"]  # type: ignore[arg-type]
    missing = [f"{p} (no annotation)" for p in [*params, "return"] if p not in hints]
    return missing + [f"{name}: {hint}" for name, hint in hints.items() if _mentions_any(hint)]


@pytest.mark.parametrize(
    ("protocol", "method"),
    [(protocol, m) for protocol, _ in READERS for m in _public_methods(protocol)],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_protocol_methods_are_typed_without_any(protocol: type, method: str) -> None:
    assert _untyped(getattr(protocol, method)) == []


@pytest.mark.parametrize(("protocol", "store"), READERS, ids=lambda v: v.__name__)
def test_store_matches_the_protocol_it_serves(protocol: type, store: type) -> None:
    for method in _public_methods(protocol):
        assert typing.get_type_hints(getattr(store, method)) == typing.get_type_hints(
            getattr(protocol, method)
        ), method


@pytest.mark.parametrize("method", _public_methods(KnowledgeStore))
def test_store_public_methods_are_typed_without_any(method: str) -> None:
    assert _untyped(getattr(KnowledgeStore, method)) == []


def test_the_check_sees_any_nested_in_a_result() -> None:
    def loose(self: object, query: str) -> list[tuple[Any, float]]:  # what KnowledgeReader used to return
        raise NotImplementedError

    assert _untyped(loose) == ["return: list[tuple[typing.Any, float]]"]
