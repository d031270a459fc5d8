"""Local stand-ins for the outside world (Slack, OAuth) that tests and `sleuth demo` run against.

Import the module you need (`bot.testing.slack_emulator`, `bot.testing.http_server`); this package imports
nothing itself, so one stand-in's dependencies never load with another's.
"""
