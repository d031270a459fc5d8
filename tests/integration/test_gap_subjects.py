"""Gap subjects through the real store: aliases from the documents' own front matter make two names of one
thing one subject, and a name the asker may not see stays plain words (no document behind it for them)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from connectors.base import PUBLIC
from connectors.knowledge.store import KnowledgeStore
from connectors.sync import sync_source
from graph_flows.gaplog import ENTITY, gap_subject
from graph_flows.knowledge import StoreLexicon
from tests.conftest import EXAMPLES, folder

KESTREL = "acme:wiki/ops/kestrel-motion-systems"  # aliases: S-8, Supplier 8


@pytest.fixture
def store(make_store: Callable[[], KnowledgeStore]) -> KnowledgeStore:
    built = make_store()
    assert sync_source(built, folder(EXAMPLES)).failed == 0
    return built


def test_two_aliases_of_one_document_are_one_subject(store: KnowledgeStore) -> None:
    names = StoreLexicon(store, frozenset({PUBLIC}))
    by_code = gap_subject("What are the payment terms of S-8?", names)
    by_name = gap_subject("supplier 8 payment terms", names)
    assert ENTITY + KESTREL in by_code
    assert sorted(by_code) == sorted(by_name)


def test_a_name_only_restricted_pages_know_is_plain_words_for_everyone_else(store: KnowledgeStore) -> None:
    """ "FIN-7" names a finance-only ticket: for a public asker it resolves to nothing, so no id is logged."""
    question = "what happened with FIN-7"
    subject = gap_subject(question, StoreLexicon(store, frozenset({PUBLIC})))
    assert not any(t.startswith(ENTITY) for t in subject)
    finance = StoreLexicon(store, frozenset({PUBLIC, "group:acme:finance"}))
    assert ENTITY + "acme:FIN-7" in gap_subject(question, finance)
