"""Sleuth's Slack app manifest (`bot/manifest.yaml`) as data: the scopes and URLs the app is created with.

The manifest is the one place scopes are declared: the local Slack emulator's bot token carries exactly these
scopes, and `sleuth doctor --slack` compares a live token's granted scopes against them.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

MANIFEST_PATH = Path(__file__).resolve().parent / "manifest.yaml"
EXAMPLE_URL = "https://sleuth.example.com"  # replaced by SLEUTH_PUBLIC_URL before pasting (HTTP mode)

Manifest = dict[str, Any]


def load_manifest(path: Path = MANIFEST_PATH) -> Manifest:
    return dict(yaml.safe_load(path.read_text(encoding="utf-8")))


def socket_mode_variant(manifest: Manifest) -> Manifest:
    """The manifest as docs/slack.md tells Socket Mode users to edit it: no request URLs, socket mode on."""
    out = copy.deepcopy(manifest)
    settings = out.setdefault("settings", {})
    settings["socket_mode_enabled"] = True
    for section in ("event_subscriptions", "interactivity"):
        settings.get(section, {}).pop("request_url", None)
    for command in out.get("features", {}).get("slash_commands", []):
        command.pop("url", None)
    return out


def bot_scopes(manifest: Manifest) -> frozenset[str]:
    return frozenset(manifest.get("oauth_config", {}).get("scopes", {}).get("bot", []))


def bot_events(manifest: Manifest) -> frozenset[str]:
    return frozenset(manifest.get("settings", {}).get("event_subscriptions", {}).get("bot_events", []))


def request_urls(manifest: Manifest) -> list[str]:
    """Every URL Slack will call: event and interactivity request URLs and slash command URLs."""
    settings = manifest.get("settings", {})
    urls = [settings.get(s, {}).get("request_url") for s in ("event_subscriptions", "interactivity")]
    urls += [c.get("url") for c in manifest.get("features", {}).get("slash_commands", [])]
    return [u for u in urls if u]


def redirect_urls(manifest: Manifest) -> list[str]:
    """Where Slack may send a browser back after Sign in with Slack (OpenID Connect)."""
    return list(manifest.get("oauth_config", {}).get("redirect_urls", []))


def user_scopes(manifest: Manifest) -> frozenset[str]:
    return frozenset(manifest.get("oauth_config", {}).get("scopes", {}).get("user", []))


def request_paths(manifest: Manifest) -> set[str]:
    return {urlsplit(url).path for url in request_urls(manifest)}
