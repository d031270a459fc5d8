"""The Postgres checkpointer on a fresh database, opened by several processes' worth of callers at once (`serve`
and its workers start side by side): each one gets a working saver, and the migrations ran once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import psycopg

from connectors.local_servers import Servers
from graph_flows.flow import postgres_checkpointer


def test_checkpointers_opened_at_once_on_a_fresh_database_all_work(servers: Servers) -> None:
    url = servers.postgres.database()
    with ThreadPoolExecutor(max_workers=4) as pool:
        savers = list(pool.map(lambda _: postgres_checkpointer(url, pool_size=2), range(4)))
    config = {"configurable": {"thread_id": "T:C:1", "checkpoint_ns": ""}}
    assert all(s.get_tuple(config) is None for s in savers)  # each one reads its tables
    conninfo = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(conninfo) as conn:
        versions = [v for (v,) in conn.execute("SELECT v FROM checkpoint_migrations ORDER BY v")]
    assert versions == list(range(len(versions))) and versions  # every migration once
