"""The permission audit's live-check probes (evals.live_check_audit) on the demo corpus: no leaks with the
check, and leaks when fed the behaviour before it (no check: the synced ACL decides)."""

from __future__ import annotations

import pytest

from bot.runtime import Runtime
from evals.audit import _private_flow, _restricted_docs
from evals.live_check_audit import live_check_probes
from tests.conftest import EXAMPLES
from tests.integration.test_permissions_everywhere import synced_runtime

USERS = ("bob@acme.io", "dana@acme.io")


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    return synced_runtime(tmp_path_factory.mktemp("live-audit"), EXAMPLES)


def _probes(runtime: Runtime, **kw: object) -> list[tuple[str, bool, str, str]]:
    users = {e: runtime.principals_for_email(e) for e in USERS}
    flow, _ = _private_flow(runtime)
    docs = _restricted_docs(runtime.store)
    return list(live_check_probes(flow, runtime.store, users, docs, **kw))  # type: ignore[arg-type]


def test_documents_revoked_at_the_source_never_reach_the_answer(runtime: Runtime) -> None:
    probes = _probes(runtime)
    paths = {p for p, _, _, _ in probes}
    assert {"live:gone:answer", "live:gone:trace", "live:gone:followup", "live:unconfirmed:told"} <= paths
    assert len({doc for _, _, _, doc in probes}) >= 3
    assert [p for p in probes if p[1]] == [], [p for p in probes if p[1]]


def test_without_the_live_check_the_probes_report_leaks(runtime: Runtime) -> None:
    probes = _probes(runtime, check_for=lambda doc_id, verdict: None)
    leaked = {p for p, was, _, _ in probes if was}
    assert {"live:gone:answer", "live:unconfirmed:answer"} <= leaked
