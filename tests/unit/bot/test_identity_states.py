from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from bot.identity import InvalidLinkState
from bot.identity.states import StateStore, oauth_states, state_hash
from bot.vault import TokenVault
from connectors.database import make_engine


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store_and_clock(tmp_path: Path) -> tuple[StateStore, Clock]:
    engine = make_engine(f"sqlite:///{tmp_path / 'sleuth.db'}")
    vault = TokenVault.open(engine, TokenVault.generate_key(), production=True)
    clock = Clock()
    return StateStore(engine, vault, clock, ttl_s=600), clock


def test_a_state_is_bound_and_single_use(store_and_clock: tuple[StateStore, Clock]) -> None:
    store, _ = store_and_clock
    state, verifier = store.mint("T1", "U1", "acme")
    assert 43 <= len(verifier) <= 128
    pending = store.consume(state)
    assert (pending.team, pending.user, pending.source, pending.code_verifier) == (
        "T1",
        "U1",
        "acme",
        verifier,
    )
    assert verifier not in repr(pending)
    with pytest.raises(InvalidLinkState):
        store.consume(state)


@pytest.mark.parametrize("age_s", [600, 601, 10_000])
def test_a_state_expires_after_ten_minutes(store_and_clock: tuple[StateStore, Clock], age_s: float) -> None:
    store, clock = store_and_clock
    state, _ = store.mint("T1", "U1", "acme")
    clock.now += age_s
    with pytest.raises(InvalidLinkState):
        store.consume(state)


def test_a_state_is_good_just_before_expiry(store_and_clock: tuple[StateStore, Clock]) -> None:
    store, clock = store_and_clock
    state, _ = store.mint("T1", "U1", "acme")
    clock.now += 599
    assert store.consume(state).user == "U1"


@pytest.mark.parametrize("state", ["", "forged", "x" * 5000])
def test_forged_states_are_refused(store_and_clock: tuple[StateStore, Clock], state: str) -> None:
    store, _ = store_and_clock
    store.mint("T1", "U1", "acme")
    with pytest.raises(InvalidLinkState) as caught:
        store.consume(state)
    assert str(caught.value) == "This sign-in link is invalid or has expired."


def test_only_hashes_and_encrypted_verifiers_are_stored(store_and_clock: tuple[StateStore, Clock]) -> None:
    store, _ = store_and_clock
    state, verifier = store.mint("T1", "U1", "acme")
    with store._engine.connect() as conn:
        [row] = conn.execute(select(oauth_states)).mappings().all()
    assert row["state_hash"] == state_hash(state) != state
    assert verifier.encode() not in row["verifier_ct"]


def test_minting_drops_expired_states(store_and_clock: tuple[StateStore, Clock]) -> None:
    store, clock = store_and_clock
    store.mint("T1", "U1", "acme")
    clock.now += 601
    store.mint("T1", "U2", "acme")
    with store._engine.connect() as conn:
        assert [r.user for r in conn.execute(select(oauth_states))] == ["U2"]


def test_a_proven_link_hands_over_to_a_provider_step_bound_to_that_browser(
    store_and_clock: tuple[StateStore, Clock],
) -> None:
    store, _ = store_and_clock
    link, link_verifier = store.mint("T1", "U1", "acme", "ann@acme.io")
    browser = store.begin_proof(link)
    assert not store.prove(link, "another-browser") and store.prove(link, browser)
    assert not store.prove(link, browser)  # a proof is used once

    step, verifier = store.hand_over(link, browser)

    assert step != link and verifier != link_verifier
    with pytest.raises(InvalidLinkState):
        store.peek(link)  # the link's own state is spent: the provider never sees it
    pending = store.consume(step)
    assert (pending.team, pending.user, pending.slack_email, pending.code_verifier) == (
        "T1",
        "U1",
        "ann@acme.io",
        verifier,
    )
    assert pending.for_browser(browser)
    assert not pending.for_browser("another-browser") and not pending.for_browser(None)
    unbound, _ = store.mint("T1", "U1", "acme")
    assert not store.consume(unbound).for_browser(browser)  # a state minted for no browser fits none
