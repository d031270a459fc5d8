"""The composition root: builds the store, the source catalog and (later) the flow from one `Settings`.

The CLI and `sleuth serve` build one `Runtime`; nothing else reads settings or wires objects together.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from bot.settings import Settings
from bot.vault import TokenVault
from connectors.base import PUBLIC, Connector, LinkedIdentity, user_principal
from connectors.catalog import SourceCatalog, SourceEntry
from connectors.database import make_engine

if TYPE_CHECKING:  # the store, the flow and OAuth are imported when first used: `sleuth --help` stays fast
    from bot.identity import AccountLinker
    from connectors.knowledge.embedding import Embedder
    from connectors.knowledge.store import KnowledgeStore
    from connectors.sync_hints import SyncHints
    from connectors.sync_service import SyncService
    from graph_flows.flow import Investigator
    from graph_flows.gaplog import GapLog
    from graph_flows.reasoners.base import Reasoner

log = logging.getLogger(__name__)

DEFAULT_SOURCE = "acme"
DEMO_ASKER = "carol@acme.io"  # the embedded default's asker when SLEUTH_DEFAULT_ASKER is unset


@dataclass
class Runtime:
    settings: Settings
    _connectors: dict[str, Connector] = field(default_factory=dict)
    stamp_new: bool = True  # False where the command runs the migrations itself (serve, worker, db upgrade)

    @cached_property
    def engine(self) -> Engine:
        """The database at the newest schema: a new one is stamped at the newest revision (its features create
        their tables as this code declares them), one an earlier Sleuth stamped is migrated, so a CLI command
        run after an upgrade (`sleuth ask`, `sleuth gaps`) never fails on a column the new code writes."""
        from bot.schema import bring_to_head

        engine = make_engine(self.settings.db_url)
        bring_to_head(engine, stamp_new=self.stamp_new)
        return engine

    @cached_property
    def embedder(self) -> Embedder:
        from connectors.knowledge.embedder import build_embedder

        cfg = self.settings.embedder
        options: dict[str, object] = {}
        if cfg.kind == "minilm":
            options = {"precision": cfg.precision, "cache_dir": self.settings.data_dir / "models"}
        if cfg.kind == "openai":
            options = {
                "base_url": cfg.base_url,
                "model": cfg.model,
                "api_key": cfg.api_key.get_secret_value() if cfg.api_key else None,
            }
        return build_embedder(cfg.kind, **options)

    @cached_property
    def store(self) -> KnowledgeStore:
        from connectors.knowledge.chunks import ChunkVectors
        from connectors.knowledge.store import KnowledgeStore

        s = self.settings
        token = s.chroma_token.get_secret_value() if s.chroma_token else None
        vectors = ChunkVectors(
            self.embedder, path=s.chroma_path, url=s.chroma_url, token=token, database=s.chroma_database
        )
        return KnowledgeStore(self.engine, vectors)

    @cached_property
    def sync_service(self) -> SyncService:
        from connectors.sync_service import SyncService

        return SyncService(
            self.store,
            self.sources,
            self.connector,
            permissions_interval_s=self.settings.permission_sync_interval_s,
        )

    @cached_property
    def sync_hints(self) -> SyncHints:
        """The threads Slack's events named as changed, which the Slack sources' next sync re-reads."""
        from connectors.sync_hints import SyncHints

        return SyncHints(self.engine)

    @cached_property
    def vault(self) -> TokenVault:
        key = self.settings.vault_key
        return TokenVault.open(self.engine, key, self.settings.production, data_dir=self.settings.data_dir)

    @cached_property
    def catalog(self) -> SourceCatalog:
        return SourceCatalog(self.engine, self.vault)

    def sources(self) -> list[SourceEntry]:
        """The configured sources; with none configured, the embedded default (a folder source on the
        examples), which is never written to the catalog, so it disappears once an admin adds a real one."""
        entries = self.catalog.entries()
        if entries or not self.settings.examples_dir.is_dir():
            return entries
        default = {"path": str(self.settings.examples_dir)}
        return [SourceEntry(DEFAULT_SOURCE, "folder", default, interval_s=3600, added_by="default")]

    @cached_property
    def linker(self) -> AccountLinker | None:
        """Account linking for the configured OAuth sources; None when no source needs a user's own login."""
        if not self.settings.oauth_sources:
            return None
        from bot.identity import AccountLinker

        public = self.settings.public_url.rstrip("/")
        signin = None
        if self.settings.slack_client_id and self.settings.slack_client_secret:
            from bot.identity.slack_signin import SlackSignIn, SlackSignInConfig

            api = self.settings.slack_api_url
            signin = SlackSignIn(
                SlackSignInConfig(
                    client_id=self.settings.slack_client_id,
                    client_secret=self.settings.slack_client_secret,
                    redirect_uri=f"{public}/oauth/slack/callback",
                    start_url=f"{public}/oauth/slack/start",
                    authorize_url=api.rstrip("/").removesuffix("/api") + "/openid/connect/authorize",
                    api_url=api,
                )
            )
        return AccountLinker(
            self.engine,
            self.vault,
            self.settings.oauth_sources,
            redirect_uri=f"{public}/oauth/callback",
            slack_signin=signin,
        )

    @cached_property
    def reasoner(self) -> Reasoner:
        if self.settings.llm_model:  # SLEUTH_LLM_MODEL set -> the LLM reasoner (offline fallback per step)
            from graph_flows.reasoners.llm import build_reasoner

            return build_reasoner(self.settings)
        from graph_flows.reasoners.offline import OfflineReasoner

        return OfflineReasoner(gate=self.settings.flow.reader_gate)

    @cached_property
    def gap_log(self) -> GapLog:
        from graph_flows.gaplog import GapLog

        return GapLog(self.engine)

    @cached_property
    def investigator(self) -> Investigator:
        from graph_flows.flow import Investigator, build_flow, postgres_checkpointer, sqlite_checkpointer

        if self.engine.dialect.name == "postgresql":  # thread state next to everything else, for every worker
            checkpointer = postgres_checkpointer(self.engine.url.render_as_string(hide_password=False))
        else:
            checkpointer = sqlite_checkpointer(self.settings.data_dir / "threads.db")
        flow = build_flow(
            self.store,
            self.reasoner,
            self.settings.flow,
            checkpointer=checkpointer,
            gap_log=self.gap_log,
        )
        return Investigator(flow=flow, flow_settings=self.settings.flow)

    def connector(self, name: str) -> Connector:
        if name not in self._connectors:
            entry = next((e for e in self.sources() if e.name == name), None)
            if entry is None:
                raise KeyError(name)
            from connectors.sync_hints import HINTED_KINDS

            extra = {"hints": self.sync_hints} if entry.kind in HINTED_KINDS else {}
            self._connectors[name] = self.catalog.connector(entry, **extra)
        return self._connectors[name]

    def connectors(self) -> list[Connector]:
        return [self.connector(e.name) for e in self.sources()]

    def default_asker(self) -> str | None:
        """Whom CLI questions are asked as without --as: SLEUTH_DEFAULT_ASKER, or the demo's asker while the
        embedded demo corpus is the only source; otherwise nobody (the CLI then asks for --as)."""
        if self.settings.default_asker:
            return self.settings.default_asker.strip().lower()
        demo = [e.name for e in self.sources()] == [DEFAULT_SOURCE] and self.sources()[
            0
        ].added_by == "default"
        return DEMO_ASKER if demo else None

    def known_people(self) -> list[str]:
        """Accounts the directory-trusted sources know (for audits); Slack users are resolved separately."""
        people: set[str] = set()
        for connector in self.connectors():
            people.update(getattr(connector, "people", lambda: [])())
        return sorted(people)

    def principals_for_email(self, email: str) -> frozenset[str]:
        """Principals of a verified email on sources that trust the directory (auth kind "none", or a
        connector marked `trusts_directory`: Google Drive, whose Workspace accounts are the emails Slack verifies).

        Other sources that need OAuth contribute only through a linked identity (bot.identity), never from here.
        """
        found = {PUBLIC, user_principal(email)}
        for connector in self.connectors():
            if connector.auth_kind == "none" or getattr(connector, "trusts_directory", False):
                found |= connector.principals(LinkedIdentity(source=connector.name, account=email))
        return frozenset(found)
