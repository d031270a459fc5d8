"""Named leases in the shared database: how many processes elect one of them to do a singleton task.

`sleuth serve` and every `sleuth worker` run the sync scheduler, but only the holder of the `scheduled-sync`
lease ticks it, so each due source is synced once however many processes run. A holder renews its lease on
every tick; when it dies, the lease runs out and another process takes over. Taking or renewing is one
conditional UPDATE, atomic on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import Column, Engine, Float, String, insert, select, update
from sqlalchemy.exc import IntegrityError

from connectors.database import create_tables, owned_table

leases = owned_table(
    "leases",
    Column("name", String(64), primary_key=True),
    Column("holder", String(128), nullable=False),
    Column("until", Float, nullable=False),
)


class Leases:
    def __init__(self, engine: Engine, *, clock: Callable[[], float] = time.time) -> None:
        self._engine, self._clock = engine, clock
        create_tables(leases.metadata, engine)

    def hold(self, name: str, holder: str, ttl_s: float) -> bool:
        """Takes the lease, or renews it when `holder` has it; False while another holder's lease runs."""
        now = self._clock()
        try:
            with self._engine.begin() as conn:
                conn.execute(insert(leases).values(name=name, holder=holder, until=now + ttl_s))
            return True
        except IntegrityError:  # the lease exists: take it over only if it is ours or ran out
            pass
        with self._engine.begin() as conn:
            taken = conn.execute(
                update(leases)
                .where(leases.c.name == name, (leases.c.holder == holder) | (leases.c.until < now))
                .values(holder=holder, until=now + ttl_s)
            ).rowcount
        return bool(taken)

    def release(self, name: str, holder: str) -> None:
        """Gives the lease up at once (a clean shutdown), so another process need not wait it out."""
        with self._engine.begin() as conn:
            conn.execute(
                update(leases).where(leases.c.name == name, leases.c.holder == holder).values(until=0.0)
            )

    def holder(self, name: str) -> str | None:
        """Who holds the lease now (None when nobody does)."""
        with self._engine.connect() as conn:
            row = conn.execute(select(leases.c.holder, leases.c.until).where(leases.c.name == name)).first()
        return row.holder if row is not None and row.until >= self._clock() else None
