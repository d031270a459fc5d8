"""What the listeners need, built once by `bot.server.SlackBot` and bound into each handler."""

from __future__ import annotations

from dataclasses import dataclass

from bot.askers import AskerDirectory
from bot.audience import ChannelAudience
from bot.channel_activity import ChannelActivity
from bot.channels import ChannelSettings
from bot.feedback import FeedbackLog
from bot.identity import AccountLinker
from bot.jobs import JobQueue
from bot.receipt import Receipts
from bot.runtime import Runtime
from bot.settings import Settings
from bot.source_events import SourceEvents


@dataclass
class BotDeps:
    settings: Settings
    jobs: JobQueue
    receipts: Receipts  # queues a question; acknowledges it visibly in the background
    feedback: FeedbackLog
    runtime: Runtime  # `/sleuth sources` and `gaps` read the catalog, sync status and gap log through it
    linker: AccountLinker | None = None  # None: no OAuth sources to link
    audience: ChannelAudience | None = None  # per-channel answer audience (admins set it)
    askers: AskerDirectory | None = None  # who a Slack user is and may see (App Home, traces, forget, links)
    channels: ChannelSettings | None = None  # per-channel setup (answer mode, sources, escalation, reply)
    activity: ChannelActivity | None = None  # what happened to questions in channels, for the insights
    source_events: SourceEvents | None = (
        None  # Slack's events -> the Slack sources' syncs (bot.source_events)
    )
