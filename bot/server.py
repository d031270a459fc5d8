"""The running bot: `SlackBot` wires a Runtime into the Bolt app, the job queue and the workers; `build_asgi`
serves it over HTTP (Starlette + uvicorn); `serve` is what `sleuth serve` runs (HTTP, or Socket Mode when an
app-level token is set).

Bolt's own Starlette handler calls the synchronous `App.dispatch` on the event loop, which would serialise every
request; here dispatch runs in Starlette's threadpool so many deliveries are acked at once. All state lives in
the database, so several `sleuth serve` processes can sit behind one load balancer.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn
from slack_bolt import App
from slack_bolt.adapter.starlette.handler import to_starlette_response
from slack_sdk import WebClient
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from bot.answering import Answerer
from bot.app import build_app, make_client
from bot.askers import AskerDirectory
from bot.audience import ChannelAudience
from bot.channel_activity import ChannelActivity
from bot.channels import ChannelSettings
from bot.deps import BotDeps
from bot.digest import AdminDigest
from bot.feedback import FeedbackLog
from bot.identity import AccountLinker, PrincipalResolver
from bot.insights import slack_viewer
from bot.intake import ignore_reason
from bot.jobs import DEFAULT_LEASE_S, Clock, JobQueue
from bot.oauth_routes import oauth_routes
from bot.receipt import Receipts, intake_client
from bot.request_guard import Rejected, bolt_request, parse_body, verify_signature
from bot.runtime import Runtime
from bot.scheduler import SyncScheduler
from bot.settings import Settings
from bot.source_events import SourceEvents
from bot.status import StatusBoard
from bot.supervisor import exit_with_parent, supervise, worker_command
from bot.worker import WorkerPool
from connectors.base import LinkedIdentity
from connectors.leases import Leases
from connectors.live_access import LiveCheck
from connectors.sync_trigger import Kind, SyncTrigger

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
DEFAULT_WORKERS = 4
DEFAULT_WORKER_PROCESSES = 1


def build_asgi(app: App, *, signing_secret: str | None, linker: AccountLinker | None = None) -> Starlette:
    """POST /slack/events (events, interactivity, commands), GET /healthz, and /oauth/callback when linking.

    Each request passes `bot.request_guard` first (signature, then shape): what fails never reaches Bolt.
    Without a signing secret (Socket Mode) the route refuses everything.
    """

    async def slack_events(request: Request) -> Response:
        body = await request.body()
        try:
            if signing_secret is None:
                raise Rejected(401, "HTTP events are off (Socket Mode)")
            verify_signature(signing_secret, request.headers, body)
            payload = parse_body(request.headers.get("content-type", ""), body)
        except Rejected as exc:
            log.warning("slack request rejected", extra={"status": exc.status, "reason": exc.reason})
            return Response(status_code=exc.status)
        reason = ignore_reason(payload, team=None, now=time.time())  # Bolt can't even parse some of these
        if reason:
            log.info("delivery ignored", extra={"reason": reason})
            return Response(status_code=200)
        checked = bolt_request(body.decode("utf-8"), request.headers, request.url.query, payload)
        bolt_response = await run_in_threadpool(app.dispatch, checked)
        return to_starlette_response(bolt_response)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"ok": True})

    routes: list[BaseRoute] = [
        Route(EVENTS_PATH, slack_events, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
    ]
    if linker is not None:
        routes += oauth_routes(linker)
    return Starlette(routes=routes)


class SlackBot:
    """Everything `sleuth serve`, the demo and the tests run; `pool` is not started until asked."""

    def __init__(
        self,
        rt: Runtime,
        *,
        linker: AccountLinker | None = None,
        resolver: PrincipalResolver | None = None,
        client: WebClient | None = None,
        settings: Settings | None = None,
        workers: int = DEFAULT_WORKERS,
        clock: Clock = time.time,
        lease_s: float = DEFAULT_LEASE_S,
        pool_size: int | None = None,
    ) -> None:
        """`workers`: the job threads answering this bot's questions (what a "Queued" placeholder counts);
        `pool_size`: how many of them `pool` runs in this process (default all; 0 when other processes
        answer)."""
        self.runtime = rt
        self._team: str | None = None
        linker = linker if linker is not None else rt.linker
        self.settings = settings = settings or rt.settings  # the demo overrides the Slack part
        self.client = client or make_client(settings)
        self.jobs = JobQueue(rt.engine, clock=clock, lease_s=lease_s)
        self.feedback = FeedbackLog(rt.engine)
        self.channels = ChannelSettings(rt.engine)
        self.activity = ChannelActivity(rt.engine, clock=clock)
        if resolver is None and linker is not None:
            resolver = PrincipalResolver(linker, _principals_for(rt))
        askers = AskerDirectory(self.client, rt.principals_for_email, resolver, linker)
        is_bot = (lambda user: False) if settings.answer_bots else askers.is_bot
        known_bot = (lambda user: False) if settings.answer_bots else askers.known_bot
        # With no workers here (`serve --workers 0`), `sleuth worker` processes answer: assume one is free.
        self.receipts = Receipts(
            intake_client(self.client), self.jobs, workers=max(workers, 1), is_bot=is_bot, known_bot=known_bot
        )
        self.sync_trigger = SyncTrigger(rt.sync_service, delay_s=_event_delays(settings))
        events = SourceEvents(
            rt.sources,
            lambda: rt.sync_hints,
            self.sync_trigger,
            content_sync=settings.slack_event_content_sync,
        )
        self.deps = BotDeps(
            settings=settings,
            jobs=self.jobs,
            receipts=self.receipts,
            feedback=self.feedback,
            runtime=rt,
            linker=linker,
            channels=self.channels,
            activity=self.activity,
            source_events=events,
        )
        self.app = build_app(settings, self.deps, client=self.client)
        self.audience = ChannelAudience(rt.engine, self.client, askers, _is_public(rt))
        self.deps.audience = self.audience
        self.deps.askers = askers
        self.digest = AdminDigest(
            rt.engine,
            self.client,
            config=settings.digest,
            admins=lambda: settings.admin_users,
            viewer_of=lambda admin: slack_viewer(rt.store, askers, settings.admin_users, self.team(), admin),
            gaps=rt.gap_log,
            feedback=self.feedback,
            jobs=self.jobs,
        )
        self.status = StatusBoard(self.client, interval_s=settings.slack_status_interval_s)
        self.answerer = Answerer(
            self.client,
            self.jobs,
            rt.investigator,
            askers,
            self.audience,
            status=self.status,
            stream=settings.slack_stream_answers,
            access_for=_live_access(rt, linker),
            channels=self.channels,
            activity=self.activity,
        )
        self.pool = WorkerPool(self.jobs, self.answerer, size=workers if pool_size is None else pool_size)
        secret = settings.slack_signing_secret
        self.asgi = build_asgi(
            self.app, signing_secret=secret.get_secret_value() if secret else None, linker=linker
        )

    def team(self) -> str:
        """The workspace this bot is installed in (asked of Slack once)."""
        if self._team is None:
            self._team = str(self.client.auth_test()["team_id"])
        return self._team


def _event_delays(settings: Settings) -> dict[Kind, float]:
    return {
        "permissions": settings.slack_event_permission_delay_s,
        "content": settings.slack_event_content_delay_s,
    }


def _is_public(rt: Runtime) -> Any:
    public = frozenset({"public"})

    def is_public(doc_id: str) -> bool:
        return rt.store.document(doc_id, public) is not None

    return is_public


def _principals_for(rt: Runtime) -> Any:
    def principals_for(source: str, identity: LinkedIdentity) -> set[str]:
        return set(rt.connector(source).principals(identity))

    return principals_for


def _live_access(rt: Runtime, linker: AccountLinker | None) -> Callable[[str, str], LiveCheck | None]:
    """The live access check for one Slack user: their linked tokens (read only when an answer shows a
    document of a source that can be asked), the configured connectors."""
    config = rt.settings.live_check

    def connector_of(source: str) -> object | None:
        try:
            return rt.connector(source)
        except KeyError:
            return None

    def access_for(team: str, user: str) -> LiveCheck | None:
        if not config.enabled:
            return None

        def tokens() -> dict[str, str]:
            if linker is None:
                return {}
            identities, _ = linker.identities(team, user)
            return {i.source: i.access_token for i in identities if i.access_token}

        return LiveCheck(connector_of, tokens, config)

    return access_for


def _scheduler(rt: Runtime, bot: SlackBot) -> SyncScheduler:
    """The sync scheduler (and the admin digest) every process runs; the database lease elects the one that
    ticks."""
    holder = f"{socket.gethostname()}:{os.getpid()}"
    return SyncScheduler(rt.sync_service, also=[bot.digest.run_due], leases=Leases(rt.engine), holder=holder)


@contextlib.contextmanager
def _worker_processes(processes: int, threads: int) -> Iterator[None]:
    """`processes` child `sleuth worker`s of `threads` job threads each, tied to this process's life; they
    log as this process does (`-v`)."""
    if not processes or not threads:
        yield
        return
    stop = threading.Event()
    verbose = logging.getLogger().isEnabledFor(logging.INFO)
    command = worker_command(threads, verbose=verbose, parent=os.getpid())
    supervisor = threading.Thread(
        target=supervise,
        args=(command, processes),
        kwargs={"stop": stop, "signals": False},
        name="sleuth-worker-processes",
    )
    supervisor.start()
    log.info("worker processes started", extra={"processes": processes, "threads": threads})
    try:
        yield
    finally:
        stop.set()
        supervisor.join()


def serve(
    rt: Runtime,
    *,
    workers: int = DEFAULT_WORKERS,
    processes: int = DEFAULT_WORKER_PROCESSES,
    linker: AccountLinker | None = None,
) -> None:
    """Runs until interrupted: HTTP on settings.host:port (Socket Mode adds a websocket) and the answering.

    Questions are answered by `processes` child `sleuth worker` processes of `workers` threads each, so this
    process only verifies, queues and acknowledges: an investigation holding a GIL never delays Slack's ack or
    the placeholder; scheduled sync and the digest then run in those processes. `processes=0` runs the
    `workers` threads in this process instead; `workers=0` answers nowhere (separately started `sleuth worker`s
    answer)."""
    settings = rt.settings
    here = workers if processes == 0 else 0
    children = processes if workers and not here else 0
    bot = SlackBot(
        rt, linker=linker, workers=workers * max(children, 1), lease_s=settings.job_lease_s, pool_size=here
    )
    # Scheduled sync runs where the answering does: an embedded Chroma sees its own process's writes at once.
    scheduler = contextlib.nullcontext() if children else _scheduler(rt, bot)
    with (
        bot.pool,
        _worker_processes(children, workers),
        scheduler,
        contextlib.closing(bot.status),
        contextlib.closing(bot.receipts),
        contextlib.closing(bot.sync_trigger),
    ):
        if settings.slack_app_token is None:
            log.info("serving slack over http", extra={"host": settings.host, "port": settings.port})
            uvicorn.run(bot.asgi, host=settings.host, port=settings.port, log_level="warning")
            return
        from bot.socket_mode import socket_mode_handler

        handler = socket_mode_handler(bot.app, settings.slack_app_token.get_secret_value())
        handler.connect()
        log.info("connected to slack in socket mode", extra={"host": settings.host, "port": settings.port})
        try:  # HTTP still serves /healthz and the OAuth callback
            uvicorn.run(bot.asgi, host=settings.host, port=settings.port, log_level="warning")
        finally:
            handler.close()


def work(
    rt: Runtime,
    *,
    threads: int = DEFAULT_WORKERS,
    stop: threading.Event | None = None,
    parent: int | None = None,
) -> None:
    """What one `sleuth worker` process runs until SIGTERM/SIGINT (or `stop`): claims jobs from the database
    and answers them, and takes its turn at scheduled sync. No HTTP: `sleuth serve` takes Slack's deliveries.
    `parent`: the `sleuth serve` that started it; this process exits with it."""
    stop = stop or threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    if parent is not None:
        exit_with_parent(parent)
    bot = SlackBot(rt, workers=threads, lease_s=rt.settings.job_lease_s)
    with (
        bot.pool,
        _scheduler(rt, bot),
        contextlib.closing(bot.status),
        contextlib.closing(bot.receipts),
        contextlib.closing(bot.sync_trigger),
    ):
        log.info("worker ready", extra={"threads": threads})
        stop.wait()
