"""The `sleuth` command. Only wiring: every command builds a Runtime and calls into the packages.

Start-up stays short: importing this module imports typer and rich only; every heavy package (the store,
the flow, Slack, the bench) is imported inside the command that needs it, so `sleuth --help` and a mistyped
`--as` answer at once (tests/unit/bot/test_cli_startup.py keeps it so).
"""

from __future__ import annotations

import functools
import json
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bot.channels_cli import channels_app
from bot.cli_options import Verbose, configure_logging

if TYPE_CHECKING:
    from bot.insights import Viewer
    from bot.runtime import Runtime
    from bot.settings import Settings
    from connectors.sync import SyncSummary

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="Sleuth: answers from your wiki and tickets."
)
console = Console()


def _runtime(*, migrates: bool = False) -> Runtime:
    """`migrates`: the command runs the migrations itself (serve, worker, db upgrade), so a new database is
    built by them rather than stamped."""
    from bot.runtime import Runtime
    from bot.settings import Settings

    return Runtime(Settings(), stamp_new=not migrates)


@app.callback()
def _main(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log at INFO to stderr")] = False,
) -> None:
    configure_logging(verbose)


@app.command()
def sync(
    source: Annotated[str | None, typer.Argument(help="Source name; default all")] = None,
    permissions: Annotated[
        bool, typer.Option("--permissions", help="Only re-read current ACLs (no content, no embedding)")
    ] = False,
    verbose: Verbose = False,
) -> None:
    """Pull every source (or one) into the knowledge store, incrementally."""
    rt = _runtime()
    names = [source] if source else [e.name for e in rt.sources()]
    failed = False
    if permissions:
        for name in names:
            result = rt.sync_service.run_permissions(name)
            typer.echo(
                f"permissions {name}: {result.status}  checked {result.checked}  changed {result.changed}"
                + (f"  failed {result.failed}" if result.failed else "")
                + (f"  ({result.error})" if result.error else "")
            )
            failed |= not result.ok
        raise typer.Exit(1 if failed else 0)
    for name in names:
        summary = run_sync(rt, name)
        failed |= not summary.ok
    raise typer.Exit(1 if failed else 0)


def run_sync(rt: Runtime, name: str, *, quiet: bool = False) -> SyncSummary:
    """One source's sync through the sync service, with a progress bar and a summary table."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("written {task.fields[written]}"),
        TimeElapsedColumn(),
        console=console,
        transient=quiet,
        disable=quiet,
    ) as bar:
        task = bar.add_task(f"sync {name}", total=None, written=0)

        def progress(event: str, n: int) -> None:
            if event == "seen":
                bar.advance(task, n)
            else:
                bar.update(task, written=bar.tasks[task].fields["written"] + n)

        summary = rt.sync_service.run(name, progress=progress)
    if not quiet:
        _print_summary(summary)
    return summary


SHOWN_FAILURES = 20  # the rest: `sleuth sources failures NAME`


def _print_summary(s: SyncSummary) -> None:
    table = Table(title=f"sync {s.source}: {s.status}", show_header=True)
    for col in ("added", "updated", "unchanged", "deleted", "failed", "chunks embedded", "seconds"):
        table.add_column(col, justify="right")
    table.add_row(
        *(
            str(v)
            for v in (s.added, s.updated, s.unchanged, s.deleted, s.failed, s.chunks_embedded, s.seconds)
        )
    )
    console.print(table)
    from bot.sync_report import summary_lines

    for line in summary_lines(s, shown=SHOWN_FAILURES):
        console.print(line, highlight=False)


AS_HELP = "Ask as this person (email); default SLEUTH_DEFAULT_ASKER. See `sleuth people`"


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question")],
    as_user: Annotated[str | None, typer.Option("--as", help=AS_HELP)] = None,
    thread: Annotated[str | None, typer.Option("--thread", help="Thread id to continue")] = None,
    trace: Annotated[bool, typer.Option("--trace", help="Show every round")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    verbose: Verbose = False,
) -> None:
    """Ask one question (a new thread unless --thread names one)."""
    rt, asker, principals = _asking(as_user)
    thread_id = thread or _new_thread("cli")
    out = rt.investigator.ask(thread_id, question, asker=asker, principals=principals)
    if as_json:
        typer.echo(json.dumps(out, default=str))
        return
    print_answer(out, show_trace=trace)
    console.print(f"[dim]thread {thread_id} as {asker}[/]")


@app.command()
def chat(
    as_user: Annotated[str | None, typer.Option("--as", help=AS_HELP)] = None,
    verbose: Verbose = False,
) -> None:
    """An interactive thread: every line is a turn of the same investigation; an empty line or Ctrl-D ends it."""
    rt, asker, principals = _asking(as_user)
    thread_id = _new_thread("chat")
    console.print(f"[dim]thread {thread_id} as {asker}; empty line to quit[/]")
    while True:
        try:
            question = console.input("[bold]you>[/] ").strip()
        except EOFError:
            break
        if not question:
            break
        print_answer(rt.investigator.ask(thread_id, question, asker=asker, principals=principals))


def _asking(as_user: str | None) -> tuple[Runtime, str, frozenset[str]]:
    """What `ask` and `chat` start from: the runtime with its sources synced, the asker and their principals."""
    rt = _runtime()
    asker = _asker(rt, as_user)
    principals = rt.principals_for_email(asker)
    _ensure_synced(rt)
    return rt, asker, principals


def _new_thread(prefix: str) -> str:
    return f"{prefix}:{uuid.uuid4().hex[:8]}:{int(time.time())}"


def _asker(rt: Runtime, as_user: str | None) -> str:
    """The person a CLI question is asked as; an unknown or missing one is a usage error (exit 2)."""
    from bot.people import AskerError, resolve_asker

    try:
        return resolve_asker(rt, as_user)
    except AskerError as exc:
        console.print(f"[red]--as:[/] {exc}", highlight=False)
        raise typer.Exit(2) from exc


@app.command()
def people(as_json: Annotated[bool, typer.Option("--json")] = False, verbose: Verbose = False) -> None:
    """Who Sleuth knows (from the people files of folder sources), with their groups and principals."""
    from bot.people import directory

    rt = _runtime()
    found = directory(rt)
    if as_json:
        typer.echo(json.dumps([p.as_dict() for p in found]))
        return
    if not found:
        console.print(
            "Nobody yet: add a people file to a folder source (see README, 'Try it on your own folder')."
        )
        return
    table = Table("email", "name", "source", "groups")
    table.add_column("principals", overflow="fold")
    for p in found:
        table.add_row(p.email, p.name, ", ".join(p.sources), ", ".join(p.groups), "\n".join(p.principals))
    console.print(table)
    default = rt.default_asker()
    console.print(f"[dim]default --as: {default or 'none (set SLEUTH_DEFAULT_ASKER)'}[/]")


@app.command()
def themes(
    as_user: Annotated[str | None, typer.Option("--as", help=AS_HELP)] = None,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Cluster every chunk again first")] = False,
    name: Annotated[
        bool, typer.Option("--name", help="Have the configured model name and summarise the themes first")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    verbose: Verbose = False,
) -> None:
    """What is in the knowledge base: its themes with sizes, labels and key terms, as the given person sees them.

    Themes are numbered in the order this person sees them: a theme with no chunk they may read is absent, and
    leaves no gap in the numbers (the store's own theme ids are not shown)."""
    rt, asker, principals = _asking(as_user)
    if rebuild:
        rt.store.themes.refresh(full=True)
    if name:
        if not rt.settings.llm_model:
            console.print("[red]--name:[/] no model configured: set SLEUTH_LLM_MODEL (and _BASE_URL)")
            raise typer.Exit(2)
        from graph_flows.reasoners.llm import model_client
        from graph_flows.reasoners.theme_namer import ModelThemeNamer

        named = rt.store.themes.name_themes(ModelThemeNamer(model_client(rt.settings)))
        console.print(f"[dim]{named} themes named by {rt.settings.llm_model}[/]", highlight=False)
    views = rt.store.themes.views(principals)
    if as_json:
        typer.echo(json.dumps([theme_row(v, n) for n, v in enumerate(views, 1)]))
        return
    if not views:
        console.print("No themes yet: run `sleuth sync` (themes are built from the synced chunks).")
        return
    table = Table("theme", "chunks", "docs", "label", title=f"Themes as {asker} sees them")
    table.add_column("key terms and entities", overflow="fold")
    for n, v in enumerate(views, 1):
        extra = ", ".join(v.terms[3:]) + (f"  [dim]({'; '.join(v.entities[:4])})[/]" if v.entities else "")
        table.add_row(str(n), str(v.size), str(len(v.docs)), escape(v.summary or v.label), extra)
    console.print(table)


def theme_row(view: Any, n: int) -> dict[str, Any]:
    """One theme as a person sees it, numbered `n` in their own list."""
    return {
        "n": n,
        "label": view.label,
        "size": view.size,
        "documents": len(view.docs),
        "terms": list(view.terms),
        "entities": list(view.entities),
        "summary": view.summary,
    }


@app.command()
def whoami(
    as_user: Annotated[str | None, typer.Option("--as", help=AS_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    verbose: Verbose = False,
) -> None:
    """Who a question would be asked as, with which principals, and how many documents they may see."""
    from bot.people import visible_documents

    rt = _runtime()
    asker = _asker(rt, as_user)
    principals = sorted(rt.principals_for_email(asker))
    visible, total = visible_documents(rt, principals)
    if as_json:
        typer.echo(json.dumps({"email": asker, "principals": principals, "visible": visible, "total": total}))
        return
    console.print(f"[bold]{asker}[/]", highlight=False)
    console.print("principals: " + ", ".join(principals), highlight=False)
    console.print(f"may see {visible} of {total} indexed documents")


def _ensure_synced(rt: Runtime) -> None:
    if rt.store.stats()["documents"] == 0:
        for entry in rt.sources():
            run_sync(rt, entry.name, quiet=True)


def print_answer(out: dict, *, show_trace: bool = False) -> None:
    from bot.terminal import render_answer

    console.print(render_answer(out, show_trace=show_trace))


@app.command()
def demo(verbose: Verbose = False) -> None:
    """Index the demo corpus and play a scripted thread, offline (what `make demo` runs)."""
    from bot.demo_slack import run_slack_demo

    rt = _runtime()
    for entry in rt.sources():
        run_sync(rt, entry.name)
    run_slack_demo(rt, console)


@app.command()
def gaps(
    days: Annotated[int, typer.Option(help="Look back this many days")] = 30,
    as_user: Annotated[str | None, typer.Option("--as", help=READER_HELP)] = None,
    export: Annotated[
        Path | None, typer.Option("--export", help="Write dated gaps-YYYY-MM-DD.md notes here")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    verbose: Verbose = False,
) -> None:
    """Recurring open gaps, grouped by what is missing, with where the closest passages were."""
    from datetime import UTC, datetime, timedelta

    from bot.insights import recurring_gaps
    from bot.mrkdwn import plain
    from bot.render_insights import NO_GAPS, gap_line

    rt = _runtime()
    since = datetime.now(UTC) - timedelta(days=days)
    if export is not None:
        title_of = _reader(rt, as_user).title_of
        written = rt.gap_log.export(export, since=since, can_open=lambda doc: title_of(doc) is not None)
        console.print(f"wrote {len(written)} note(s) to {export}")
        return
    reports = recurring_gaps(rt.gap_log, _reader(rt, as_user), since=since, top=50)
    if as_json:
        typer.echo(json.dumps([_jsonable(r) for r in reports]))
        return
    for report in reports:
        console.print(f"• {plain(gap_line(report, days))}", highlight=False, soft_wrap=True)
    if not reports:
        console.print(NO_GAPS)


@app.command()
def feedback(
    since: Annotated[str, typer.Option(help="Look back this long: 7d, 2w, 24h")] = "7d",
    as_user: Annotated[str | None, typer.Option("--as", help=READER_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    verbose: Verbose = False,
) -> None:
    """Answers marked not helpful (newest first), and the helpful rate per week and per source."""
    from bot.feedback import FeedbackLog
    from bot.insights import feedback_items, helpful_rates
    from bot.jobs import JobQueue
    from bot.mrkdwn import plain
    from bot.render_insights import NO_FEEDBACK, feedback_line, rates_text

    rt = _runtime()
    start = time.time() - _duration_s(since)
    log, jobs, reader = FeedbackLog(rt.engine), JobQueue(rt.engine), _reader(rt, as_user)
    items = feedback_items(log, jobs, reader, since=start)
    weeks, sources = helpful_rates(log, jobs, reader, since=start)
    if as_json:
        rates = {"weeks": [_jsonable(r) for r in weeks], "sources": [_jsonable(r) for r in sources]}
        typer.echo(json.dumps({"not_helpful": [_jsonable(i) for i in items], "helpful_rate": rates}))
        return
    for item in items:
        console.print(
            f"• {plain(feedback_line(item))} · trace {item.trace_id}", highlight=False, soft_wrap=True
        )
    if not items:
        console.print(NO_FEEDBACK)
    console.print(plain(rates_text(weeks, sources)), highlight=False, soft_wrap=True)


READER_HELP = (
    "Read as this admin: documents they cannot open are counted, not named (default: SLEUTH_DEFAULT_ASKER)"
)
_UNITS = {"h": 3600, "d": 86400, "w": 7 * 86400}


def _duration_s(text: str) -> float:
    """ "7d", "2w", "24h" -> seconds; anything else is a usage error (exit 2)."""
    value, unit = text.strip()[:-1], text.strip()[-1:].lower()
    if unit not in _UNITS or not value.isdigit():
        console.print(
            f"[red]--since:[/] use a number and h, d or w (7d, 2w, 24h), not {text!r}", highlight=False
        )
        raise typer.Exit(2)
    return int(value) * _UNITS[unit]


def _reader(rt: Runtime, as_user: str | None) -> Viewer:
    """The CLI reads as an admin, with the permissions of --as (or the default asker); with neither, with
    what anyone may open."""
    from bot.insights import Viewer, store_titles
    from connectors.base import PUBLIC

    principals = frozenset({PUBLIC})
    if as_user or rt.default_asker():
        principals = rt.principals_for_email(_asker(rt, as_user))
    return Viewer(user="", admin=True, title_of=store_titles(rt.store, principals))


def _jsonable(value: object) -> object:
    from dataclasses import asdict

    return json.loads(json.dumps(asdict(value), default=str))  # type: ignore[call-overload]


audit_app = typer.Typer(help="Check Sleuth against your own data.", no_args_is_help=True)
app.add_typer(audit_app, name="audit")


@audit_app.command("permissions")
def audit_permissions_command(
    probes: Annotated[int | None, typer.Option("--probes", help="Stop after this many probes")] = None,
    verbose: Verbose = False,
) -> None:
    """Run the permission-leak matrix (users x restricted documents x paths); exit 1 on any leak."""
    from rich.progress import MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from bot.admin_views import AdminViews
    from bot.identity.linking import would_link
    from bot.render import progress_text
    from evals.audit import audit_permissions

    rt = _runtime()
    _ensure_synced(rt)
    users = {email: rt.principals_for_email(email) for email in rt.known_people()}
    with Progress(
        SpinnerColumn(), TextColumn("[bold]audit"), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as bar:
        task = bar.add_task("audit", total=probes)
        report = audit_permissions(
            rt,
            users,
            max_probes=probes,
            progress=lambda n: bar.advance(task, n),
            status_text=progress_text,
            link_check=would_link,
            admin_views=AdminViews(rt.store),
        )
    table = Table("path", "probes")
    for path, n in sorted(report.by_path.items()):
        table.add_row(path, str(n))
    console.print(table)
    for leak in report.leaks[:20]:
        console.print(f"[red]leak[/] {leak}")
    typer.echo(f"probes: {report.probes}  leaks: {len(report.leaks)}")
    raise typer.Exit(1 if report.leaks else 0)


vault_app = typer.Typer(help="The token vault (admins).", no_args_is_help=True)
app.add_typer(vault_app, name="vault")


@vault_app.command("rotate")
def vault_rotate(verbose: Verbose = False) -> None:
    """Re-encrypt every stored token and secret with the first key of SLEUTH_VAULT_KEY.

    Rotation: set SLEUTH_VAULT_KEY="<new>,<old>", run this, then set it to "<new>" alone."""
    rt = _runtime()
    key = rt.settings.vault_key
    if key is None or len([k for k in key.get_secret_value().split(",") if k.strip()]) < 2:
        typer.echo(
            'Only one vault key is configured: put the new key first, SLEUTH_VAULT_KEY="<new>,<old>", '
            "then run this again."
        )
        raise typer.Exit(1)
    count = rt.vault.rotate()
    typer.echo(
        f"re-encrypted {count} stored value{'s' if count != 1 else ''} with the first key; "
        "you can now drop the older keys from SLEUTH_VAULT_KEY"
    )


sources_app = typer.Typer(help="Manage sources (admins).", no_args_is_help=True)
app.add_typer(sources_app, name="sources")


# Convenience flags -> config fields of the built-in connectors; anything else goes through --set key=value.
_FLAG_FIELDS = {"url": "base_url", "project": "projects", "space": "spaces", "repo": "repos", "path": "path"}
_SECRET_FIELD = {
    "jira": "api_token",
    "confluence": "api_token",
    "github": "token",
    "slack": "token",
    "google_drive": "service_account_key",  # the key file's JSON: --token-env GOOGLE_SA_KEY
}


@sources_app.command("add")
def sources_add(
    kind: Annotated[
        str,
        typer.Argument(
            help="folder, jira, confluence, github, slack, google_drive, or an installed connector"
        ),
    ],
    name: Annotated[str | None, typer.Option(help="Source name (default: the kind)")] = None,
    url: Annotated[str | None, typer.Option(help="Site or API base URL")] = None,
    project: Annotated[list[str] | None, typer.Option(help="Jira project key (repeatable)")] = None,
    space: Annotated[list[str] | None, typer.Option(help="Confluence space key (repeatable)")] = None,
    repo: Annotated[list[str] | None, typer.Option(help="GitHub owner/repo (repeatable)")] = None,
    path: Annotated[
        str | None,
        typer.Option(help="Folder path (folder sources): markdown pages and tickets, exports, people.json"),
    ] = None,
    email: Annotated[str | None, typer.Option(help="Account email for API-token auth")] = None,
    token_env: Annotated[
        str | None, typer.Option(help="Read the API token from this environment variable")
    ] = None,
    setting: Annotated[
        list[str] | None, typer.Option("--set", help="Any config field: key=value (repeatable)")
    ] = None,
    interval: Annotated[int, typer.Option(help="Seconds between scheduled syncs")] = 3600,
    verbose: Verbose = False,
) -> None:
    """Add a source. Secrets go to the encrypted vault; the catalog keeps only a reference.

    A folder: markdown pages (front matter `title:`) and tickets (`key:`), Jira CSV, Confluence HTML export.
    ACLs (`acl:`) list `public`, `user:<email>` or `group:<name>`; people.json names who is in which group.
    See "Try it on your own folder" in the README."""
    import os

    rt = _runtime()
    values = {"url": url, "project": project, "space": space, "repo": repo, "path": path}
    config: dict[str, object] = {_FLAG_FIELDS[k]: v for k, v in values.items() if v}
    if email:
        config["email"] = email
    if token_env:
        token = os.environ.get(token_env)
        if not token:
            raise typer.BadParameter(f"environment variable {token_env} is empty", param_hint="--token-env")
        config[_SECRET_FIELD.get(kind, "api_token")] = token
    for item in setting or []:
        key, _, value = item.partition("=")
        config[key.strip()] = value
    try:
        entry = rt.catalog.add(name or kind, kind, config, interval_s=interval, added_by="cli")
    except ValueError as exc:  # pydantic's ValidationError is a ValueError: it names the bad field
        console.print(f"[red]not added:[/] {exc}")
        raise typer.Exit(2) from exc
    console.print(f"added source [bold]{entry.name}[/] ({entry.kind}); run `sleuth sync {entry.name}`")


@sources_app.command("remove")
def sources_remove(name: Annotated[str, typer.Argument()], verbose: Verbose = False) -> None:
    """Remove a source, its secrets and everything indexed from it."""
    rt = _runtime()
    if not rt.catalog.remove(name):
        console.print(f"[red]no source named {name}[/]")
        raise typer.Exit(2)
    removed = rt.store.delete_source(name)
    console.print(f"removed {name} and {removed} document(s)")


@sources_app.command("sync")
def sources_sync(name: Annotated[str, typer.Argument()], verbose: Verbose = False) -> None:
    """Sync one source now."""
    summary = run_sync(_runtime(), name)
    raise typer.Exit(0 if summary.ok else 1)


@sources_app.command("failures")
def sources_failures(
    name: Annotated[str, typer.Argument()],
    as_json: Annotated[bool, typer.Option("--json")] = False,
    verbose: Verbose = False,
) -> None:
    """Every item the last sync of a source could not read, with the reason."""
    rt = _runtime()
    if name not in {e.name for e in rt.sources()}:
        console.print(f"[red]no source named {name}[/]")
        raise typer.Exit(2)
    status = rt.sync_service.status().get(name)
    failures = status["failures"] if status else []
    if as_json:
        typer.echo(json.dumps(failures))
        return
    for f in failures:
        typer.echo(f"{f['id']}\t{f['reason']}")
    console.print(f"[dim]{len(failures)} failure(s) in the last sync of {name}[/]")


@sources_app.command("list")
def sources_list(as_json: Annotated[bool, typer.Option("--json")] = False, verbose: Verbose = False) -> None:
    """Configured sources with their last sync, counts and failures."""
    rt = _runtime()
    status = rt.sync_service.status()
    rows = [
        {
            "name": e.name,
            "kind": e.kind,
            "interval_s": e.interval_s,
            **status.get(e.name, {"status": "never"}),
        }
        for e in rt.sources()
    ]
    if as_json:
        typer.echo(json.dumps(rows, default=str))
        return
    table = Table("name", "kind", "status", "documents", "failures", "last sync")
    for r in rows:
        table.add_row(
            r["name"],
            r["kind"],
            r["status"],
            str(r.get("documents", 0)),
            str(len(r.get("failures", []))),
            str(r.get("last_finished") or "-"),
        )
    console.print(table)


@app.command()
def doctor(
    as_json: Annotated[bool, typer.Option("--json")] = False,
    slack: Annotated[
        bool, typer.Option("--slack", help="Check the live Slack setup (token, scopes, secret, public URL)")
    ] = False,
    llm: Annotated[
        bool,
        typer.Option(
            "--llm", help="Also check the configured model: one small question, then the real steps timed"
        ),
    ] = False,
    verbose: Verbose = False,
) -> None:
    """Which reasoner, embedder, store and Slack mode this configuration runs (contacts nothing); with --slack,
    checks the Slack setup against Slack and the public URL, and says what to fix; with --llm, one structured
    call shows at start whether the model, its URL and its key work, then plan, reflect and compose run on a
    fixture: measured speed, the budget verdict and the preset that fits (exit code 1 if a step fails)."""
    if slack:
        _doctor_slack(as_json)
        return
    rt = _runtime()
    s = rt.settings
    try:
        reasoner = rt.reasoner.name
    except (ImportError, ValueError) as exc:  # a provider package missing, an unknown provider
        reasoner = f"unusable ({type(exc).__name__}: {str(exc).splitlines()[0]})"
    if s.llm_model:
        reasoner += f" · model {s.llm_model}" + (f" at {s.llm_base_url}" if s.llm_base_url else "")
    else:
        reasoner += " (SLEUTH_LLM_MODEL unset)"
    from sqlalchemy.engine import make_url

    slack = "not configured"
    if s.slack_bot_token:
        slack = "socket mode" if s.slack_app_token else "http (events api)"
    rows = {
        "reasoner": reasoner,
        "embedder": s.embedder.kind + (f" · {s.embedder.model}" if s.embedder.model else ""),
        "vectors": f"chroma at {s.chroma_url}" if s.chroma_url else f"embedded chroma in {s.chroma_path}",
        "database": make_url(s.db_url).render_as_string(hide_password=True),
        "slack": slack,
    }
    failed = False
    if llm:
        rows["model check"], failed = _check_model(s)
        if not failed:
            measured, failed = _measure_model(s)
            rows |= measured
    if as_json:
        typer.echo(json.dumps(rows))
        raise typer.Exit(1 if failed else 0)
    table = Table("part", "active", show_header=False)
    for part, active in rows.items():
        table.add_row(part, active)
    console.print(table)
    if failed:
        raise typer.Exit(1)


def _check_model(s: Settings) -> tuple[str, bool]:
    if not s.llm_model:
        return "no model configured (SLEUTH_LLM_MODEL unset)", True
    from graph_flows.reasoners.base import ReasonerError
    from graph_flows.reasoners.llm import check_model

    try:
        return f"ok: {check_model(s)}", False
    except (ReasonerError, ImportError, ValueError) as exc:
        return f"failed: {exc}", True


def _measure_model(s: Settings) -> tuple[dict[str, str], bool]:
    """The plan, reflect and compose schemas on a fixture: speed, the budget verdict, the preset that fits."""
    from graph_flows.reasoners.llm import measure_model

    measured = measure_model(s)
    return measured.lines(), not all(step.accepted for step in measured.steps)


def _doctor_slack(as_json: bool) -> None:
    from bot.channel_doctor import check_question_channels
    from bot.channels import ChannelSettings
    from bot.settings import Settings
    from bot.slack_doctor import check_slack

    settings = Settings()
    checks = check_slack(settings)
    asking = ChannelSettings(_runtime().engine).answering_questions()
    checks += check_question_channels(settings, asking)
    if as_json:
        typer.echo(json.dumps([c.as_dict() for c in checks]))
    else:
        colour = {"ok": "green", "warn": "yellow", "fail": "red"}
        for c in checks:
            console.print(f"[{colour[c.status]}]{c.status:>4}[/] {c.name}: {c.detail}", highlight=False)
            if c.fix:
                console.print(f"      fix: {c.fix}", highlight=False)
    raise typer.Exit(1 if any(c.status == "fail" for c in checks) else 0)


@app.command()
def bench(
    sets: Annotated[list[str] | None, typer.Option("--set", help="2wiki musique hotpotqa acme all")] = None,
    modes: Annotated[
        list[str] | None, typer.Option("--mode", help="bm25 dense hybrid naive-hop loop-text loop-graph")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="First N questions per set")] = None,
    questions: Annotated[Path | None, typer.Option("--questions", help="A question file to run")] = None,
    corpus: Annotated[Path | None, typer.Option("--corpus", help="Its corpus (default: contexts)")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="2wiki | musique | hotpotqa")] = None,
    embedder: Annotated[
        str, typer.Option("--embedder", help="minilm (int8) | minilm-fp32 | hash")
    ] = "minilm",
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="Index caches go here")] = None,
    bench_data: Annotated[
        Path | None, typer.Option("--bench-data", envvar="SLEUTH_BENCH_DATA", help="The bench data folder")
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Where result files go")] = Path("bench-results"),
    eval_folder: Annotated[
        list[Path] | None,
        typer.Option("--eval-folder", help="Another folder corpus with its own eval.jsonl (repeatable)"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the records to stdout as JSON")] = False,
    slack: Annotated[
        int | None,
        typer.Option(
            "--slack",
            help="Instead: ack, first visible sign and answer latency for N concurrent Slack questions",
        ),
    ] = None,
    slack_latency_ms: Annotated[
        int, typer.Option("--slack-latency-ms", help="With --slack: each Web API call answers this late")
    ] = 0,
    scale: Annotated[
        str | None,
        typer.Option("--scale", help="Instead: synthetic corpora of these sizes, e.g. 1000,10000,100000"),
    ] = None,
    stack: Annotated[
        str,
        typer.Option(
            "--stack",
            help="With --scale: embedded (SQLite + embedded Chroma) or servers (PostgreSQL + a Chroma server; "
            "local ones in a temporary folder unless --database-url and --chroma-url name running ones)",
        ),
    ] = "embedded",
    database_url: Annotated[
        str | None,
        typer.Option(
            "--database-url", help="With --stack servers: a PostgreSQL database (role with CREATEDB)"
        ),
    ] = None,
    chroma_url: Annotated[
        str | None, typer.Option("--chroma-url", help="With --stack servers: a Chroma server")
    ] = None,
    verbose: Verbose = False,
) -> None:
    """Multi-hop retrieval benchmark (and the acme eval): recall, answer-in-evidence, latency, memory."""
    from datetime import UTC, datetime

    if scale:
        _bench_scale(
            scale,
            modes,
            embedder,
            data_dir,
            as_json,
            kind=stack,
            database_url=database_url,
            chroma_url=chroma_url,
        )
        return
    if slack:
        from bot.bench_slack import bench_slack_ack

        numbers = bench_slack_ack(slack, api_latency_s=slack_latency_ms / 1000)
        table = Table(
            "metric", "value", title=f"Slack latency under {slack} concurrent questions (local emulator)"
        )
        for key, value in numbers.items():
            table.add_row(key, f"{value:.1f}" if isinstance(value, float) else str(value))
        console.print(table)
        if as_json:
            typer.echo(json.dumps(numbers))
        return

    from bot.settings import Settings
    from evals import DEFAULT_BENCH_DATA
    from evals.loaders import BenchDataError
    from evals.report import present, progress_bars, write_results
    from evals.suite import BenchRequest, make_request, run_suite

    settings = Settings()
    llm_reasoner = None
    if settings.llm_model:
        from graph_flows.reasoners.llm import build_reasoner

        llm_reasoner = functools.partial(build_reasoner, settings)
    shown = Console(stderr=True) if as_json else console
    try:
        # The options as typed, one keyword per field (alike in shape to folder_eval's ItemResult, a record too);
        # make_request checks them and settles the sets and modes.
        request = make_request(
            BenchRequest(
                sets=tuple(sets or ()),
                modes=tuple(modes or ()),
                embedder=embedder,
                data_dir=data_dir or settings.data_dir,
                bench_data=bench_data or DEFAULT_BENCH_DATA,
                examples_dir=settings.examples_dir,
                limit=limit,
                questions=questions,
                corpus=corpus,
                format=fmt,
                llm_reasoner=llm_reasoner,
                eval_folders=tuple(eval_folder or ()),
            )
        )
        started = datetime.now(UTC)
        if "llm" not in request.modes and not settings.llm_model:
            shown.print("[dim]no model configured (SLEUTH_LLM_MODEL unset): the llm mode is left out[/]")
        with progress_bars(shown) as tracker:
            result = run_suite(request, tracker=tracker)
    except BenchDataError as exc:
        shown.print(f"[red]bench:[/] {exc}", highlight=False)
        raise typer.Exit(2) from exc
    paths = write_results(out, result.records, result.details, embedder=embedder, started=started)
    present(shown, result.records, paths, title=f"sleuth bench ({embedder})")
    if as_json:
        typer.echo(json.dumps([r.as_dict() for r in result.records]))
    raise typer.Exit(1 if result.forbidden or result.errors else 0)


def _bench_scale(
    sizes: str,
    modes: list[str] | None,
    embedder: str,
    data_dir: Path | None,
    as_json: bool,
    *,
    kind: str = "embedded",
    database_url: str | None = None,
    chroma_url: str | None = None,
) -> None:
    """The Chroma server's token, if it needs one, comes from the settings (SLEUTH_CHROMA_TOKEN)."""
    from bot.settings import Settings
    from evals.report import progress_bars
    from evals.scale import DEFAULT_MODE, run_scale
    from evals.stacks import make_stack
    from evals.suite import bench_embedder, split_names

    try:
        numbers = [int(n) for n in split_names([sizes])]
    except ValueError as exc:
        raise typer.BadParameter(f"--scale takes sizes like 1000,10000: {exc}") from exc
    mode = (split_names(modes) or [DEFAULT_MODE])[0]
    settings = Settings()
    root = data_dir or settings.data_dir
    try:
        where = make_stack(
            kind,
            root,
            database_url=database_url,
            chroma_url=chroma_url,
            chroma_token=settings.chroma_token.get_secret_value() if settings.chroma_token else None,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    shown = Console(stderr=True) if as_json else console
    with progress_bars(shown) as tracker:
        rows = run_scale(
            numbers, bench_embedder(embedder, root), root, mode=mode, tracker=tracker, stack=where
        )
    table = Table(title=f"sleuth bench --scale ({embedder}, {mode}, {where.name})")
    columns = (
        "passages",
        "index_pps",
        "p50_ms",
        "p95_ms",
        "p50_cpu_ms",
        "p50_cpu_one_hop_ms",
        "p50_cpu_two_hop_ms",
        "recall_at_5",
        "peak_rss_mb",
        *(("servers_peak_mb",) if kind == "servers" else ()),
        "disk_mb",
    )
    for column in columns:
        table.add_column(column, justify="right")
    for row in rows:
        cached = " (cached)" if row.index_cached else ""
        values = row.as_dict()
        table.add_row(*[str(values[c]) + (cached if c == "index_pps" else "") for c in columns])
    shown.print(table)
    if as_json:
        typer.echo(json.dumps([r.as_dict() for r in rows]))


@app.command("train-reader")
def train_reader(
    data: Annotated[
        Path,
        typer.Option("--data", envvar="SLEUTH_TRAINING_DATA", help="The public QA data (docs/reader.md)"),
    ] = Path("../shared/training"),
    out: Annotated[Path, typer.Option("--out", help="Where the fitted scorer goes")] = Path(
        "graph_flows/reader/answer_scorer.json"
    ),
    calibration_out: Annotated[
        Path, typer.Option("--calibration-out", help="Where the fitted answer calibration goes")
    ] = Path("graph_flows/reader/answer_calibration.json"),
    stage: Annotated[str, typer.Option("--stage", help="all | scorer | cross | calibration")] = "all",
    reuse: Annotated[
        bool, typer.Option("--reuse-read", help="Refit the calibration on the last run's reading")
    ] = False,
    verbose: Verbose = False,
) -> None:
    """Fit the answer-unit scorer, fine-tune the answer cross-encoder, then calibrate stated answers read
    through the flow, on public QA data (needs the `train` extra: scikit-learn, torch, transformers)."""
    from contextlib import contextmanager

    from rich.progress import Progress

    from connectors.knowledge.minilm import MiniLMEmbedder
    from evals.reader_calibration import calibrate
    from graph_flows.reader import model
    from graph_flows.reader.fitting import split_for_calibration, train, training_records

    def bar(label: str):
        @contextmanager
        def factory(total: int):
            with Progress(console=console) as progress:
                task = progress.add_task(label, total=total)
                yield lambda n: progress.update(task, completed=n)

        return factory

    if stage not in {"all", "scorer", "cross", "calibration"}:
        raise typer.BadParameter(f"{stage!r}: one of all, scorer, cross, calibration", param_hint="--stage")
    embedder = MiniLMEmbedder(precision="int8")
    records, dropped = training_records(
        data,
        shared=Path("../shared"),
        examples=Path("examples"),
        hashes_out=Path("docs/reader-training-questions.sha256"),
    )
    scorer_records, calibration_records = split_for_calibration(records)
    if stage in {"all", "scorer"}:
        card = train(
            scorer_records, dropped, out, embed=embedder.embed, progress_factory=bar("featurising questions")
        )
        measured = card["metrics"]["cross_validated"]
        console.print(
            f"wrote {out}: {measured['questions']} questions, unit AUC {measured['unit_auc']}, "
            f"ECE {measured['ece']}"
        )
        model.load.cache_clear()
    if stage in {"all", "cross"}:
        from graph_flows.reader.cross_fitting import train_cross_encoder

        card = train_cross_encoder(
            scorer_records, calibration_records, embedder.embed, bar("fine-tuning the cross-encoder")
        )
        console.print(f"wrote the cross-encoder: {card['pairs']} pairs, held out {card['held_out']}")
    if stage in {"all", "calibration"}:
        work = Path(".sleuth") / "reader-calibration"  # the corpus's index and what was read, kept
        work.mkdir(parents=True, exist_ok=True)
        measured = calibrate(
            records,
            calibration_records,
            embedder,
            work,
            calibration_out,
            bar("reading questions"),
            reuse=reuse,
        )
        console.print(
            f"wrote {calibration_out}: {measured['proposed']} stated of {measured['asked']} asked, "
            f"AUC {measured['auc']}, ECE {measured['ece']}, threshold {measured['threshold']} "
            f"(precision {measured['precision_at_threshold']} on {measured['stated_at_threshold']})"
        )


@app.command()
def serve(
    workers: Annotated[
        int,
        typer.Option(
            "--workers", help="Job threads per answering process (0: separate `sleuth worker`s answer)"
        ),
    ] = 4,
    worker_processes: Annotated[
        int,
        typer.Option(
            "--worker-processes",
            help="Answering processes started beside the server (0: the job threads run in the server itself)",
        ),
    ] = 1,
    verbose: Verbose = False,
) -> None:
    """Run the Slack bot: HTTP on SLEUTH_HOST:SLEUTH_PORT, or Socket Mode when SLEUTH_SLACK_APP_TOKEN is set."""
    from bot.logcontext import install
    from bot.schema import upgrade
    from bot.server import serve as serve_bot

    install()
    rt = _runtime(migrates=True)
    upgrade(rt.engine)
    _ensure_synced(rt)
    serve_bot(rt, workers=workers, processes=worker_processes, linker=rt.linker)


@app.command()
def worker(
    processes: Annotated[int, typer.Option("--processes", "-n", help="Worker processes to run")] = 1,
    threads: Annotated[int, typer.Option("--threads", help="Job threads in each process")] = 4,
    parent: Annotated[
        int | None,
        typer.Option("--parent", hidden=True, help="Exit when this process (sleuth serve) is gone"),
    ] = None,
    verbose: Verbose = False,
) -> None:
    """Answer questions that `sleuth serve` queued: claims jobs from the shared database (no HTTP)."""
    from bot.logcontext import install

    install()
    if processes > 1:
        from bot.supervisor import supervise, worker_command

        raise typer.Exit(supervise(worker_command(threads, verbose=verbose), processes))
    from bot.schema import upgrade
    from bot.server import work

    rt = _runtime(migrates=True)
    upgrade(rt.engine)
    work(rt, threads=threads, parent=parent)


db_app = typer.Typer(help="The database's schema.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(channels_app, name="channels")


@db_app.command("upgrade")
def db_upgrade(verbose: Verbose = False) -> None:
    """Migrate the database (SLEUTH_DATABASE_URL, or the SQLite file) to the newest schema."""
    from bot.schema import upgrade

    before, after = upgrade(_runtime(migrates=True).engine)
    said = f"already at {after}" if before == after else f"migrated {before or 'empty'} -> {after}"
    console.print(f"database {said}", highlight=False)


@db_app.command("current")
def db_current(verbose: Verbose = False) -> None:
    """Print the database's schema revision and the newest one."""
    from bot.schema import current, head

    console.print(f"database at {current(_runtime().engine) or 'none'}; newest {head()}", highlight=False)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
