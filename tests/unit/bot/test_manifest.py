"""bot/manifest.yaml against Slack's published manifest schema (vendored from slackapi/manifest-schema v0.5.0),
and against the code: every Web API method Sleuth calls is served by the emulator and covered by a manifest
scope, and every URL in the manifest is a route `sleuth serve` serves."""

from __future__ import annotations

import ast
import inspect
import json
import re
from functools import cache
from pathlib import Path

import pytest
from jsonschema import Draft7Validator
from referencing import Registry, Resource
from slack_sdk import WebClient

from bot.manifest import (
    EXAMPLE_URL,
    bot_events,
    bot_scopes,
    load_manifest,
    redirect_urls,
    request_paths,
    request_urls,
    socket_mode_variant,
    user_scopes,
)
from bot.oauth_routes import SLACK_CALLBACK_PATH
from bot.server import build_asgi
from bot.testing.slack_emulator import SlackEmulator
from bot.testing.slack_scopes import METHOD_SCOPES

ROOT = Path(__file__).resolve().parents[3]
SCHEMAS = ROOT / "tests" / "fixtures" / "slack" / "manifest-schema"
SCHEMA_URL = "https://raw.githubusercontent.com/slackapi/manifest-schema/v0.5.0/schemas/"
CODE = [ROOT / "bot", ROOT / "connectors", ROOT / "graph_flows", ROOT / "evals"]
NOT_APP_CODE = ROOT / "bot" / "testing"  # the emulator itself
# Calls Bolt makes for us: `App(...)` checks the token; `say(...)` posts in the event's channel.
BOLT_CALLS = {"auth.test", "chat.postMessage"}
# Called with the app-level token (its scope, connections:write, is no bot scope); the emulator serves it apart.
APP_TOKEN_METHODS = {"apps.connections.open"}


def _validator() -> Draft7Validator:
    resources = [
        (SCHEMA_URL + path.name, Resource.from_contents(json.loads(path.read_text())))
        for path in SCHEMAS.glob("manifest.schema.*.json")
    ]
    root = json.loads((SCHEMAS / "manifest.schema.json").read_text())
    return Draft7Validator(root, registry=Registry().with_resources(resources))


def _errors(manifest: dict) -> list[str]:
    """Schema errors as `path: message`, descending into `oneOf` branches so the real cause is named."""
    found: list[str] = []
    pending = list(_validator().iter_errors(manifest))
    while pending:
        error = pending.pop()
        if error.context:
            pending.extend(error.context)
        elif "_metadata" not in error.message:
            found.append(f"{'/'.join(map(str, error.absolute_path))}: {error.message}")
    return sorted(set(found))


@pytest.mark.parametrize("variant", ["http", "socket"])
def test_the_manifest_passes_slacks_schema(variant: str) -> None:
    manifest = load_manifest()
    if variant == "socket":
        manifest = socket_mode_variant(manifest)
        assert not request_urls(manifest)
    assert _errors(manifest) == []


def test_the_schema_rejects_what_slack_rejects() -> None:
    """The vendored schema is strict where Slack is: `description` is not a field of `agent_view`."""
    manifest = load_manifest()
    manifest["features"]["agent_view"]["description"] = "not allowed"
    assert _errors(manifest) == [
        "features/agent_view: Additional properties are not allowed ('description' was unexpected)"
    ]


@cache
def _api_name(client_method: str) -> str | None:
    """The Web API method a WebClient method calls (`users_info` -> `users.info`), or None."""
    func = getattr(WebClient, client_method, None)
    if func is None or not callable(func) or client_method.startswith("_"):
        return None
    found = re.search(r'api_call\(\s*"([\w.]+)"', inspect.getsource(func))
    return found.group(1) if found else None


def _called_methods() -> dict[str, set[str]]:
    """Web API method -> the files that call it through a WebClient method."""
    calls: dict[str, set[str]] = {}
    for root in CODE:
        for path in root.rglob("*.py"):
            if NOT_APP_CODE in path.parents:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    method = _api_name(node.func.attr)
                    if method is not None:
                        calls.setdefault(method, set()).add(str(path.relative_to(ROOT)))
    for method in BOLT_CALLS:
        calls.setdefault(method, set()).add("slack_bolt")
    return calls


def test_the_code_calls_the_methods_we_expect() -> None:
    """Guards the scan itself: these calls exist, so an empty or broken scan cannot pass the next test."""
    assert {"users.info", "conversations.members", "conversations.open", "chat.update"} <= set(
        _called_methods()
    )


def test_every_method_the_code_calls_is_served_and_granted_by_the_manifest() -> None:
    served = set(SlackEmulator().api.methods)
    scopes = bot_scopes(load_manifest())
    problems = []
    for method, where in sorted(_called_methods().items()):
        if method in APP_TOKEN_METHODS:
            continue  # test_socket_mode.py and test_slack_doctor.py call the emulator's
        if method not in served:
            problems.append(f"{method} (called in {sorted(where)}) is not served by the emulator")
        elif method not in METHOD_SCOPES:
            problems.append(f"{method} has no entry in the emulator's scope table")
        elif METHOD_SCOPES[method] and not set(METHOD_SCOPES[method]) & scopes:
            problems.append(f"{method} (called in {sorted(where)}) needs one of {METHOD_SCOPES[method]}")
    assert problems == []


def test_every_emulated_method_has_its_scopes() -> None:
    served = set(SlackEmulator().api.methods)
    assert served == set(METHOD_SCOPES)


def test_every_manifest_url_is_a_route_sleuth_serves() -> None:
    manifest = load_manifest()
    assert all(url.startswith(EXAMPLE_URL) for url in request_urls(manifest))

    class _NoApp:  # build_asgi only closes over the app; routes are what we read
        def dispatch(self, request: object) -> None: ...

    served = {route.path for route in build_asgi(_NoApp(), signing_secret=None).routes}  # type: ignore[arg-type, attr-defined]
    assert request_paths(manifest)
    assert request_paths(manifest) <= served


def test_the_manifest_covers_sign_in_with_slack() -> None:
    """`"binding": "slack"` sources send the browser through Sign in with Slack (OpenID Connect): Slack wants the
    redirect URL registered and the OpenID scopes granted, in HTTP and Socket Mode alike."""
    for manifest in (load_manifest(), socket_mode_variant(load_manifest())):
        assert redirect_urls(manifest) == [EXAMPLE_URL + SLACK_CALLBACK_PATH]
        assert user_scopes(manifest) == {"openid", "email", "profile"}


def _registered_events() -> set[str]:
    """Event types the listeners register with `app.event(...)` (a string or a `{"type": ...}` matcher)."""
    found: set[str] = set()
    for path in (ROOT / "bot" / "listeners").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr != "event" or not node.args:
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Constant):
                found.add(str(arg.value))
            elif isinstance(arg, ast.Dict):
                found |= {
                    str(v.value)
                    for k, v in zip(arg.keys, arg.values, strict=True)
                    if isinstance(k, ast.Constant) and k.value == "type" and isinstance(v, ast.Constant)
                }
    return found


def test_the_manifest_subscribes_to_exactly_the_events_the_app_listens_for() -> None:
    subscribed = {event.split(".")[0] for event in bot_events(load_manifest())}  # message.im -> message
    assert subscribed == _registered_events()
    assert "assistant_thread_started" not in subscribed  # legacy; agent_view opens the Messages tab instead
