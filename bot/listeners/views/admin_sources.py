"""App Home for admins: the sources with their last sync, counts and failures, and an "Add source" modal whose
fields come from the connector's own pydantic config model, so a connector declares its fields once.

Non-admins see the ordinary home and get a clear refusal if they reach an admin action anyway. Secrets typed
into the modal go to the encrypted vault (the catalog keeps a reference) and are never echoed back.
"""

from __future__ import annotations

import functools
import json
import logging
from typing import Any

from pydantic import BaseModel, ValidationError
from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot.deps import BotDeps
from bot.listeners.views.builders import home_view
from bot.model_health import RECENT_ANSWERS, health_text, model_health
from bot.mrkdwn import escape
from connectors.catalog import DuplicateSource
from connectors.registry import connector_classes

log = logging.getLogger(__name__)

ADD_SOURCE = "admin_add_source"  # action_id of the "Add <kind> source" buttons
ADD_SOURCE_VIEW = "admin_add_source_view"  # callback_id of the modal
NAME_BLOCK = "source_name"
NOT_ADMIN = "Only Sleuth admins can add or change sources."
_SKIP_FIELDS = {"oauth", "timeout", "page_size"}  # advanced settings stay in the CLI


def is_admin(deps: BotDeps, user: str) -> bool:
    return user in deps.settings.admin_users


def admin_home(deps: BotDeps, *, linking: bool) -> dict[str, Any]:
    """The home view with admin sections: per source status and one "Add" button per installed kind; the model's
    recent fallback rate."""
    base = home_view([e.name for e in deps.runtime.sources()], linking=linking)
    status = deps.runtime.sync_service.status()
    lines = []
    for entry in deps.runtime.sources():
        s = status.get(entry.name, {})
        failures = len(s.get("failures", []))
        lines.append(
            f"• *{escape(entry.name)}* ({entry.kind}) · {s.get('status', 'never synced')} · "
            f"{s.get('documents', 0)} documents · {failures} failure(s) · last sync {s.get('last_finished') or '-'}"
        )
    blocks = [
        *base["blocks"],
        {"type": "divider"},
        {"type": "section", "text": {"type": "mrkdwn", "text": "*Sources (admin)*\n" + ("\n".join(lines) or "none")}},
        {
            "type": "actions",
            "block_id": "admin_sources",
            "elements": [
                {"type": "button", "action_id": f"{ADD_SOURCE}:{kind}", "value": kind,
                 "text": {"type": "plain_text", "text": f"Add {kind} source"}}
                for kind in sorted(connector_classes())
            ][:25],  # Slack's most elements in one actions block
        },
        {"type": "divider"},
        {"type": "section", "text": {"type": "mrkdwn", "text": _model_section(deps)}},
    ]  # fmt: skip
    return {"type": "home", "blocks": blocks}


def _model_section(deps: BotDeps) -> str:
    """The configured model's recent fallback rate (the answers' saved traces), so quietly-offline shows."""
    health = model_health(deps.jobs.recent_results(RECENT_ANSWERS))
    return health_text(deps.settings.llm_model, health)


def add_source_modal(kind: str) -> dict[str, Any]:
    model: type[BaseModel] = connector_classes()[kind].config_model
    blocks: list[dict[str, Any]] = [
        _input(NAME_BLOCK, "Source name", "letters, digits, - or _", optional=False)
    ]
    for name, field in model.model_fields.items():
        if name in _SKIP_FIELDS:
            continue
        annotation = str(field.annotation)
        hint = (
            "comma-separated"
            if "list" in annotation
            else ("stored encrypted" if "SecretStr" in annotation else "")
        )
        blocks.append(
            _input(name, name.replace("_", " ").capitalize(), hint, optional=not field.is_required())
        )
    return {
        "type": "modal",
        "callback_id": ADD_SOURCE_VIEW,
        "private_metadata": json.dumps({"kind": kind}),
        "title": {"type": "plain_text", "text": f"Add {kind} source"[:24]},
        "submit": {"type": "plain_text", "text": "Add and sync"},
        "blocks": blocks[:50],
    }


def config_from_values(kind: str, values: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    model: type[BaseModel] = connector_classes()[kind].config_model
    raw = {block: next(iter(actions.values())).get("value") for block, actions in values.items()}
    config: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        value = raw.get(name)
        if value in (None, ""):
            continue
        config[name] = (
            [v.strip() for v in value.split(",") if v.strip()] if "list" in str(field.annotation) else value
        )
    return (raw.get(NAME_BLOCK) or kind).strip(), config


def handle_add_source(ack: Ack, body: dict[str, Any], client: WebClient, *, deps: BotDeps) -> None:
    ack()
    user = body["user"]["id"]
    if not is_admin(deps, user):
        dm = client.conversations_open(users=user)["channel"]["id"]
        client.chat_postMessage(channel=dm, text=NOT_ADMIN)
        return
    kind = body["actions"][0]["value"]
    client.views_open(trigger_id=body["trigger_id"], view=add_source_modal(kind))


def handle_add_source_submit(ack: Ack, body: dict[str, Any], client: WebClient, *, deps: BotDeps) -> None:
    user = body["user"]["id"]
    if not is_admin(deps, user):
        ack(response_action="errors", errors={NAME_BLOCK: NOT_ADMIN})
        return
    view = body["view"]
    kind = json.loads(view.get("private_metadata") or "{}").get("kind", "")
    name, config = config_from_values(kind, view["state"]["values"])
    try:
        entry = deps.runtime.catalog.add(name, kind, config, added_by=user)
    except ValidationError as exc:
        ack(response_action="errors", errors=_field_errors(exc))
        return
    except (DuplicateSource, ValueError) as exc:
        ack(response_action="errors", errors={NAME_BLOCK: str(exc)[:150]})
        return
    ack()
    log.info("source added from slack", extra={"source": entry.name, "kind": entry.kind})
    deps.runtime.sync_service.start(
        entry.name,
        then=lambda _summary: client.views_publish(
            user_id=user, view=admin_home(deps, linking=deps.linker is not None)
        ),
    )


def _field_errors(exc: ValidationError) -> dict[str, str]:
    errors: dict[str, str] = {}
    for err in exc.errors():
        field = str(err["loc"][0]) if err.get("loc") else NAME_BLOCK
        errors.setdefault(field, err["msg"][:150])
    return errors


def _input(block_id: str, label: str, hint: str, *, optional: bool) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "input",
        "block_id": block_id,
        "optional": optional,
        "label": {"type": "plain_text", "text": label[:2000]},
        "element": {"type": "plain_text_input", "action_id": "value"},
    }
    if hint:
        block["hint"] = {"type": "plain_text", "text": hint}
    return block


def register(app: App, deps: BotDeps) -> None:
    import re

    app.action(re.compile(rf"^{ADD_SOURCE}:"))(functools.partial(handle_add_source, deps=deps))
    app.view(ADD_SOURCE_VIEW)(functools.partial(handle_add_source_submit, deps=deps))
