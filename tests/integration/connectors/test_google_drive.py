"""The Google Drive connector against the local Drive + Directory emulator over real HTTP: a service account
signs in by the JWT-bearer grant, reads the picked folders, maps Drive's sharing to principals, follows the
Changes API, and permission sync applies Drive's sharing changes without re-reading content."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from pydantic import SecretStr

from connectors.acl_sync import sync_permissions
from connectors.base import PUBLIC, AuthExpired, Deleted, LinkedIdentity, RateLimited, Skipped, user_principal
from connectors.knowledge.acl import can_see
from connectors.knowledge.store import KnowledgeStore
from connectors.sources.google_drive import GoogleDriveConfig, GoogleDriveConnector
from connectors.sources.google_drive.client import DriveClient
from connectors.sources.google_drive.connector import GROUP_UNLISTED
from connectors.sources.rest import RetryPolicy
from connectors.sync import sync_source
from tests.integration.connectors.conftest import SleepLog, drain, visible_ids
from tests.integration.connectors.drive_data import PEOPLE, acme_drive
from tests.servers.google_drive import DOC, FakeDrive, serve_drive

IN_SCOPE = {"runbook", "rates", "link-only", "travel", "onboarding"}
CONTENT_CALLS = ("/export", "alt=media")


@pytest.fixture
def fake() -> FakeDrive:
    return acme_drive()


@pytest.fixture
def api(fake: FakeDrive) -> Iterator[str]:
    with serve_drive(fake) as url:
        yield url


def drive_config(api: str, fake: FakeDrive, **extra: object) -> GoogleDriveConfig:
    fields: dict[str, object] = {
        "folders": ["eng"],
        "domains": ["acme.io"],
        "service_account_key": SecretStr(fake.account.key_json()),
        "delegated_user": "admin@acme.io",
        "api_url": api,
        "directory_url": api,
        "token_url": f"{api}/token",
        "page_size": 2,
    }
    return GoogleDriveConfig.model_validate(fields | extra)


@pytest.fixture
def make_connector(
    api: str, fake: FakeDrive, sleeps: SleepLog
) -> Iterator[Callable[..., GoogleDriveConnector]]:
    built: list[GoogleDriveConnector] = []

    def build(**extra: object) -> GoogleDriveConnector:
        config = drive_config(api, fake, **extra)
        client = DriveClient.from_config(config, name="drive", retry=RetryPolicy(attempts=4), sleep=sleeps)
        built.append(GoogleDriveConnector(config, name="drive", client=client))
        return built[-1]

    yield build
    for connector in built:
        connector.close()


@pytest.fixture
def connector(make_connector: Callable[..., GoogleDriveConnector]) -> GoogleDriveConnector:
    return make_connector()


def asker(connector: GoogleDriveConnector, email: str) -> frozenset[str]:
    """What `Runtime.principals_for_email` gives a Slack-verified email on a directory-trusted source."""
    found = connector.principals(LinkedIdentity(source="drive", account=email))
    return frozenset(found | {PUBLIC, user_principal(email)})


def contents(fake: FakeDrive) -> list[str]:
    return [
        p + ("?alt=media" if "alt" in q else "")
        for m, p, q in fake.requests
        if p.endswith("/export") or "alt" in q
    ]


def test_reads_every_format_under_the_picked_folder(connector: GoogleDriveConnector, fake: FakeDrive) -> None:
    run = drain(connector.pull(None))
    docs = {d.id.removeprefix("drive:"): d for d in run.docs}
    assert set(docs) == IN_SCOPE  # salaries sits outside the picked folder; the logo is not a document
    assert [i.id for i in run.items if isinstance(i, Skipped)] == ["drive:logo"]
    assert "## Escalation" in docs["runbook"].text  # the Doc's markdown export keeps its headings
    assert (
        docs["runbook"].url == "https://docs.google.com/d/runbook/view"
        and docs["runbook"].title == "Pager runbook"
    )
    assert docs["rates"].text.startswith("| Region | Rate | Owner |\n|---|---|---|\n| Region 0 | 100 EUR |")
    assert docs["travel"].text == "Travel is booked through Navan." and docs["travel"].kind == "pdf"
    assert (
        docs["onboarding"].text.startswith("# Onboarding\n\nBadges are issued")
        and "## Laptops" in docs["onboarding"].text
    )
    assert fake.paths("/token") == ["/token"] and len(fake.issued) == 1  # one token for the whole run
    assert len(fake.paths("/drive/v3/files")) > len(IN_SCOPE)  # listings paged at two files a page


def test_a_sheet_is_chunked_in_row_groups_that_keep_the_header(
    connector: GoogleDriveConnector, make_store: Callable[..., KnowledgeStore]
) -> None:
    store = make_store()
    sync_source(store, connector)
    ann = asker(connector, "ann@acme.io")
    hits = [h for h in store.search_text("Region 41 rate", ann, 20, mode="bm25") if h.doc_id == "drive:rates"]
    assert hits and all(
        h.text.lstrip().startswith("| Region | Rate | Owner |") or "| Region | Rate | Owner |" in h.text
        for h in hits
    )
    assert len({h.chunk_id for h in store.search_text("Region EUR owner", ann, 50, mode="bm25")}) > 1


@pytest.mark.parametrize(
    ("file", "visible_to"),
    [
        ("runbook", {"ann@acme.io", "cy@acme.io"}),  # group eng@: ann directly, cy through the nested sre@
        ("rates", {"ann@acme.io"}),  # shared with ann alone
        ("travel", {"ann@acme.io", "cy@acme.io", "bob@acme.io", "dan@acme.io"}),  # the acme.io domain
        ("link-only", {"dan@acme.io"}),  # anyone with the link: nobody but its owner
    ],
    ids=["group", "user", "domain", "link-shared"],
)
def test_who_sees_each_file_through_every_store_path(
    connector: GoogleDriveConnector,
    make_store: Callable[..., KnowledgeStore],
    file: str,
    visible_to: set[str],
) -> None:
    store = make_store()
    sync_source(store, connector)
    doc = store.document(f"drive:{file}", frozenset({PUBLIC, *store.acls("drive")[f"drive:{file}"]}))
    assert doc is not None
    for email in PEOPLE:
        principals = asker(connector, email)
        expected = {"document", "bm25", "dense"} if email in visible_to else set()
        assert visible_ids(store, f"drive:{file}", principals, doc.title) == expected, email
        assert can_see(principals, store.acls("drive")[f"drive:{file}"]) is (email in visible_to)


def test_link_shared_files_reach_the_domain_when_the_setting_says_so(
    make_connector: Callable[..., GoogleDriveConnector],
) -> None:
    connector = make_connector(treat_link_shared_as="domain")
    (doc,) = [d for d in drain(connector.pull(None)).docs if d.id == "drive:link-only"]
    assert can_see(asker(connector, "bob@acme.io"), doc.acl)
    assert not can_see(asker(connector, "erin@other.io"), doc.acl)


def test_an_unchanged_source_costs_one_change_listing_and_no_export(
    connector: GoogleDriveConnector, fake: FakeDrive, make_store: Callable[..., KnowledgeStore]
) -> None:
    store = make_store()
    assert sync_source(store, connector).added == len(IN_SCOPE)
    fake.requests.clear()
    again = sync_source(store, connector)
    assert (again.added, again.updated, again.deleted) == (0, 0, 0)
    assert fake.paths("/drive/v3/changes") == ["/drive/v3/changes"]
    assert contents(fake) == [] and not [p for p in fake.paths() if p.endswith("/permissions")]


def test_an_edit_is_read_again_and_a_file_moved_out_of_the_folder_disappears(
    connector: GoogleDriveConnector, fake: FakeDrive, make_store: Callable[..., KnowledgeStore]
) -> None:
    store = make_store()
    sync_source(store, connector)
    ann = asker(connector, "ann@acme.io")
    fake.edit(
        "runbook", b"# Pager runbook\n\n## Escalation\n\nPage the incident commander after 5 minutes.\n"
    )
    fake.move("rates", "other")
    fake.requests.clear()
    summary = sync_source(store, connector)
    assert (summary.updated, summary.deleted) == (1, 1)
    assert contents(fake) == ["/drive/v3/files/runbook/export"]  # only the edited file's content was read
    assert "incident commander" in " ".join(h.text for h in store.chunks_of("drive:runbook", ann))
    assert visible_ids(store, "drive:rates", ann, "Regional rates") == set()
    assert "drive:rates" not in store.acls("drive")


def test_a_folder_moved_out_takes_its_files_and_a_trashed_file_goes(
    connector: GoogleDriveConnector, fake: FakeDrive, make_store: Callable[..., KnowledgeStore]
) -> None:
    store = make_store()
    sync_source(store, connector)
    fake.move("policies", "other")
    fake.trash("link-only")
    summary = sync_source(store, connector)
    assert summary.deleted == 3 and set(store.acls("drive")) == {"drive:runbook", "drive:rates"}
    fake.move("policies", "eng")  # and back in: its files are read again from the change of the folder alone
    fake.add("new", "New page", DOC, "policies", b"# New\n\nA page added while away.\n")
    summary = sync_source(store, connector)
    assert summary.added == 3 and {"drive:travel", "drive:onboarding", "drive:new"} <= set(
        store.acls("drive")
    )


def test_a_permission_removed_in_drive_is_applied_by_permission_sync_without_reembedding(
    connector: GoogleDriveConnector, fake: FakeDrive, make_store: Callable[..., KnowledgeStore]
) -> None:
    store = make_store()
    sync_source(store, connector)
    ann, cy = asker(connector, "ann@acme.io"), asker(connector, "cy@acme.io")
    assert visible_ids(store, "drive:runbook", cy, "Pager runbook") == {"document", "bm25", "dense"}
    fake.unshare("rates", "ann@acme.io")
    fake.groups["sre@acme.io"] = []  # cy leaves the nested group: no file changes at all
    fake.requests.clear()
    summary = sync_permissions(store, connector)
    assert (summary.status, summary.changed) == ("ok", 2)
    assert contents(fake) == []  # nothing read again, so nothing re-embedded
    assert visible_ids(store, "drive:rates", ann, "Regional rates") == set()
    assert visible_ids(store, "drive:runbook", cy, "Pager runbook") == set()
    assert visible_ids(store, "drive:runbook", ann, "Pager runbook") == {"document", "bm25", "dense"}


def test_without_directory_access_a_group_share_reaches_no_one_and_says_so(
    connector: GoogleDriveConnector, fake: FakeDrive
) -> None:
    fake.directory_forbidden = True
    run = drain(connector.pull(None))
    (runbook,) = [d for d in run.docs if d.id == "drive:runbook"]
    assert runbook.acl == {"group:drive:eng@acme.io"}
    assert not any(can_see(asker(connector, email), runbook.acl) for email in PEOPLE)
    assert [f.reason for f in run.failures] == [GROUP_UNLISTED]


def test_a_linked_google_account_counts_for_files_shared_with_it_directly(
    connector: GoogleDriveConnector, fake: FakeDrive
) -> None:
    fake.directory_forbidden = True
    fake.share("runbook", "user", email="ann.lee@gmail.com")  # Ann's Google account is not her Slack email
    fake.user_tokens["ann-token"] = "ann.lee@gmail.com"
    (runbook,) = [d for d in drain(connector.pull(None)).docs if d.id == "drive:runbook"]
    linked = LinkedIdentity(source="drive", account="ann.lee@gmail.com", access_token="ann-token")
    assert not can_see(asker(connector, "ann@acme.io"), runbook.acl)
    assert can_see(asker(connector, "ann@acme.io") | connector.principals(linked), runbook.acl)
    assert fake.paths("/drive/v3/about") == ["/drive/v3/about"]


def test_a_shared_drive_gives_its_files_the_drive_members(
    make_connector: Callable[..., GoogleDriveConnector], fake: FakeDrive
) -> None:
    fake.add_drive("sd1", "Platform")
    fake.share("sd1", "user", role="organizer", email="bob@acme.io")
    fake.add(
        "arch", "Architecture", DOC, "sd1", b"# Architecture\n\nEvents flow through Kafka.\n", drive="sd1"
    )
    fake.share("arch", "user", email="cy@acme.io")
    connector = make_connector(folders=[], shared_drive="sd1")
    (arch,) = drain(connector.pull(None)).docs
    assert {e for e in PEOPLE if can_see(asker(connector, e), arch.acl)} == {"bob@acme.io", "cy@acme.io"}


def test_rate_limits_and_server_errors_are_retried_with_retry_after_honoured(
    connector: GoogleDriveConnector, fake: FakeDrive, sleeps: SleepLog
) -> None:
    fake.fail_next(1, 429, retry_after="3", path="/drive/v3/files")
    fake.fail_next(1, 403, reason="userRateLimitExceeded", path="/drive/v3/files")
    fake.fail_next(1, 503, reason="backendError", path="/drive/v3/files")
    assert {d.id for d in drain(connector.pull(None)).docs} == {f"drive:{f}" for f in IN_SCOPE}
    assert sleeps.waits[0] == 3.0 and len(sleeps.waits) == 3


def test_a_rate_limit_that_outlasts_the_budget_stops_the_run(
    connector: GoogleDriveConnector, fake: FakeDrive
) -> None:
    fake.fail_next(4, 403, reason="rateLimitExceeded", path="/drive/v3/files")
    with pytest.raises(RateLimited):
        drain(connector.pull(None))


def test_a_service_account_without_delegation_is_refused(
    make_connector: Callable[..., GoogleDriveConnector], fake: FakeDrive
) -> None:
    fake.delegated = set()
    with pytest.raises(AuthExpired, match="domain-wide delegation"):
        drain(make_connector().pull(None))


def test_changes_are_paged_and_checkpointed_and_deletions_come_through(
    connector: GoogleDriveConnector, fake: FakeDrive
) -> None:
    first = drain(connector.pull(None))
    for n in range(3):
        fake.add(f"page{n}", f"Page {n}", DOC, "eng", b"# Page\n\nBody.\n")
    fake.delete("runbook")
    second = drain(connector.pull(first.cursor))
    assert {d.id for d in second.docs} == {"drive:page0", "drive:page1", "drive:page2"}
    assert [i.id for i in second.items if isinstance(i, Deleted)] == ["drive:runbook"]
    assert len(second.checkpoints) == 2  # two changes a page
    assert drain(connector.pull(second.cursor)).docs == []
