"""The LLM reasoner: the model proposes plan, reflection and composition as JSON; the program validates them.

`llm_mapping` checks what the nodes cannot (plan entities named in the question, gaps tied to the material,
composed sentences grounded in their passages); evidence ids, clues and entity quotes are checked by the
nodes exactly as for the offline reasoner, so the output stays in the same dataclasses. Any step the model
fails (a reply unreadable after one repair, transport errors after retries, the question's calls, tokens or
time spent) gets the offline reasoner's decision, and the notes say "fallback: offline (reason)".

A prompt too long for the model's window is asked again with half the passages (twice at most). Composed
sentences the program rejects (not grounded in their quote, unknown ids) are listed back to the model once;
when none survives although aspects are established, the step falls back, so a model's failure never reads
as "not found". The offline reader runs beside the model as a second reader (`llm_merge`), and the merged
answer is kept only where the learned reader supports it (`llm_relevance`).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

from pydantic import SecretStr

from graph_flows.reasoners import prompts
from graph_flows.reasoners.base import (
    BadModelOutput,
    Composition,
    Lexicon,
    PlanProposal,
    Reasoner,
    ReasonerError,
    ReflectionProposal,
)
from graph_flows.reasoners.llm_client import (
    BudgetSpent,
    ContextTooLong,
    Ledger,
    Ledgers,
    LLMLimits,
    ModelClient,
    ModelUnavailable,
)
from graph_flows.reasoners.llm_mapping import (
    composition_from,
    instruction_like,
    plan_from,
    reflection_from,
    shown_passages,
)
from graph_flows.reasoners.llm_merge import merge_composition, merge_plan, merge_reflection
from graph_flows.reasoners.llm_partial import GroundedDrafts, SentenceSink
from graph_flows.reasoners.llm_relevance import held_open, supported, without_instructions
from graph_flows.reasoners.llm_schemas import ComposeOut, PingOut, PlanOut, ReflectOut
from graph_flows.reasoners.offline import OfflineReasoner
from graph_flows.reasoners.offline.reflect import dense_support
from graph_flows.state import Established, Evidence, Plan, TurnRecord

log = logging.getLogger(__name__)

R = TypeVar("R")
PROMPT_OVERHEAD_TOKENS = 900  # system prompt, plan fields and the JSON around passages
SHRINKS = 2  # times a step is asked again with half the passages after a context-length error


class LLMSettings(Protocol):
    llm_model: str | None
    llm_base_url: str | None
    llm_api_key: SecretStr | None
    # `llm: LLMLimits` too, where the settings carry limits (bot.settings.Settings does)


@dataclass
class LLMPlanProposal(PlanProposal):
    """A plan carrying its question's run id (into state["plan"]) so reflect and compose find the ledger."""

    llm_run: str = ""
    notes: list[str] = field(default_factory=list)


class LLMReasoner:
    name = "llm"

    def __init__(
        self, client: ModelClient, *, model: str = "", fallback: OfflineReasoner | None = None
    ) -> None:
        self.client = client
        self.model = model
        self.limits: LLMLimits = client.limits
        self.fallback = fallback or OfflineReasoner()
        self.ledgers = Ledgers()
        self._latest = "-"

    def ledger(self, plan: dict[str, Any]) -> Ledger:
        return self.ledgers.get(str(plan.get("llm_run") or "-"))

    def usage(self, plan: dict[str, Any]) -> dict[str, Any]:
        """Calls, tokens, retries and fallbacks of the question `plan` belongs to."""
        return self.ledger(plan).usage()

    def latest_usage(self) -> dict[str, Any]:
        """The usage of the question planned last: for the bench, which asks one question at a time."""
        return self.ledgers.get(self._latest).usage()

    # ------------------------------------------------------------------ plan
    def plan(self, question: str, *, history: Sequence[TurnRecord], lexicon: Lexicon) -> PlanProposal:
        run = uuid.uuid4().hex[:12]
        ledger = self.ledgers.get(run)
        self._latest = run
        self.client.start(ledger)
        previous = history[-1] if history else None
        notes: list[str] = []

        def ask() -> PlanProposal:
            message = prompts.plan_message(question, previous["question"] if previous else None)
            try:
                out = self.client.ask(ledger, _system(ledger, "plan"), message, PlanOut, step="plan")
            except ContextTooLong as exc:
                if ledger.compact:
                    raise BadModelOutput(f"{exc}; still too long with the step's own instructions") from exc
                ledger.compact = True
                ledger.notes.append(f"plan: {exc}; asked again with the step's own instructions")
                out = self.client.ask(ledger, _system(ledger, "plan"), message, PlanOut, step="plan")
            return plan_from(out, question, previous, lexicon, notes)

        def offline() -> PlanProposal:
            return self.fallback.plan(question, history=history, lexicon=lexicon)

        fallbacks = len(ledger.fallbacks)
        proposal, step_notes = self._step(ledger, "plan", ask, offline, notes)
        if len(ledger.fallbacks) == fallbacks:  # both readers judge the same aspects
            proposal, added = merge_plan(proposal, offline())
            ledger.notes.extend(added)
            step_notes = [*step_notes, *added]
        fields = {k: getattr(proposal, k) for k in PlanProposal.__dataclass_fields__ if k != "notes"}
        return LLMPlanProposal(**fields, llm_run=run, notes=step_notes)

    # ------------------------------------------------------------------ reflect
    def reflect(
        self, plan: Plan, evidence: Sequence[Evidence], *, new_ids: Sequence[str], lexicon: Lexicon
    ) -> ReflectionProposal:
        ledger, ranked, notes = self._passages(plan, evidence, first=new_ids)

        def ask() -> ReflectionProposal:
            def once(shown: list[Evidence], budget: int) -> ReflectionProposal:
                message = prompts.step_message(
                    plan, shown, {"new_passages": list(new_ids)}, budget_tokens=budget
                )
                out = self.client.ask(ledger, _system(ledger, "reflect"), message, ReflectOut, step="reflect")
                return reflection_from(out, plan, {e["id"] for e in shown}, notes)

            return self._fitted(ledger, "reflect", ranked, once)

        def offline() -> ReflectionProposal:
            return self.fallback.reflect(plan, evidence, new_ids=new_ids, lexicon=lexicon)

        fallbacks = len(ledger.fallbacks)
        proposal, step_notes = self._step(ledger, "reflect", ask, offline, notes)
        if len(ledger.fallbacks) == fallbacks:  # the model's reflection, with what only the offline one finds
            second = offline()
            ledger.offline_established = second.established
            proposal, added = merge_reflection(proposal, second, plan)
            ledger.offline_added += len(added)
            proposal, held = held_open(proposal, second, plan, ledger.held)
            ledger.notes.extend([*added, *held])
            step_notes = [*step_notes, *added, *held]
        else:  # the step's reflection is the offline reading's own
            ledger.offline_established = proposal.established
        proposal.notes = [*proposal.notes, *step_notes]
        return proposal

    # ------------------------------------------------------------------ compose
    def compose(
        self,
        plan: Plan,
        evidence: Sequence[Evidence],
        established: Established,
        *,
        lexicon: Lexicon,
        on_sentences: SentenceSink | None = None,
    ) -> Composition:
        """`on_sentences`: handed the grounded sentences while the model writes them (`llm_partial`)."""
        chains = [eid for chain in established.values() for eid in chain]
        ledger, ranked, notes = self._passages(plan, evidence, first=chains)

        def similar(question: str, text: str) -> float:
            return dense_support(lexicon.similarity(question, [text])[0])

        drafts = GroundedDrafts(plan, evidence, on_sentences, similar) if on_sentences else None

        def ask() -> Composition:
            def once(shown: list[Evidence], budget: int) -> Composition:
                message = prompts.step_message(
                    plan, shown, {"established": established}, budget_tokens=budget, step="compose"
                )
                out = self.client.ask(
                    ledger, _system(ledger, "compose"), message, ComposeOut, step="compose", on_text=drafts
                )
                composition, rejected = composition_from(out, plan, evidence, notes, similar)
                if rejected:
                    notes.append(f"compose: {len(rejected)} sentence(s) rejected; one repair asked")
                    again = f"{message}\n\n{prompts.REGROUND.format(rejected=chr(10).join(rejected))}"
                    try:
                        out = self.client.ask(
                            ledger, _system(ledger, "compose"), again, ComposeOut, step="compose",
                            on_text=drafts,
                        )  # fmt: skip
                    except ReasonerError as exc:  # the grounded sentences of the first reply still stand
                        notes.append(f"compose: the repair failed ({exc})")
                    else:
                        repaired, _ = composition_from(out, plan, evidence, notes, similar)
                        if len(repaired.sentences) >= len(composition.sentences):
                            composition = repaired
                if established and not composition.sentences and not composition.related:
                    raise BadModelOutput("no grounded sentence although aspects are established")
                return composition

            return self._fitted(ledger, "compose", ranked, once)

        def offline() -> Composition:
            return self.fallback.compose(plan, evidence, established, lexicon=lexicon)

        fallbacks = len(ledger.fallbacks)
        composition, step_notes = self._step(ledger, "compose", ask, offline, notes)
        if len(ledger.fallbacks) == fallbacks:
            composition, added = self._second_reader(plan, evidence, established, composition, lexicon)
            step_notes = [*step_notes, *added]
        elif established != ledger.offline_established:
            composition, added = self._on_model_chains(plan, evidence, composition, lexicon)
            step_notes = [*step_notes, *added]
        composition, dropped = without_instructions(composition, evidence)
        ledger.notes.extend(dropped)
        step_notes = [*step_notes, *dropped]
        u = ledger.usage()
        total = (
            f"usage: {u['calls']} call(s), {u['tokens']} tokens, {u['retries']} retries, "
            f"{len(u['fallbacks'])} fallback(s) in {u['steps']} step(s) this question "
            f"(fallback rate {u['fallback_rate']:.0%}), {u['offline_added']} addition(s) by the offline reader"
        )
        composition.notes = [*composition.notes, *step_notes, total]
        return composition

    def _second_reader(
        self,
        plan: Plan,
        evidence: Sequence[Evidence],
        established: Established,
        composition: Composition,
        lexicon: Lexicon,
    ) -> tuple[Composition, list[str]]:
        """The model's composition merged with the offline one (`llm_merge`), kept where the learned reader
        supports it (`llm_relevance`); returns it and the notes, also in the question's ledger."""
        ledger = self.ledger(plan)
        # never less than the offline reader answers on its own chains, and where the model established an
        # aspect but wrote nothing grounded, on the model's chains too
        own = self.fallback.compose(plan, evidence, ledger.offline_established, lexicon=lexicon)
        wider = own
        chains = {**established, **ledger.offline_established}
        if not composition.sentences and chains != ledger.offline_established:
            wider = self.fallback.compose(plan, evidence, chains, lexicon=lexicon)
        merged, added, count = merge_composition(composition, wider)
        merged, judged = supported(plan, evidence, merged, own, lexicon)
        if (
            wider.answered and wider.sentences
        ):  # a follow-up resolves "it" as after the offline reader's answer
            merged = replace(merged, referents=list(wider.sentences))
        ledger.offline_added += count
        ledger.notes.extend([*added, *judged])
        return merged, [*added, *judged]

    def _on_model_chains(
        self, plan: Plan, evidence: Sequence[Evidence], composition: Composition, lexicon: Lexicon
    ) -> tuple[Composition, list[str]]:
        """The offline composition the compose step fell back to, written on chains the model established:
        the model's reading, so it is kept only where the learned reader supports it (`llm_relevance`), as
        the model's own answer is; returns it and the notes, also in the question's ledger."""
        ledger = self.ledger(plan)
        own = self.fallback.compose(plan, evidence, ledger.offline_established, lexicon=lexicon)
        kept, judged = supported(plan, evidence, composition, own, lexicon)
        ledger.notes.extend(judged)
        return kept, judged

    # ------------------------------------------------------------------ shared
    def _passages(
        self, plan: dict[str, Any], evidence: Sequence[Evidence], *, first: Sequence[str]
    ) -> tuple[Ledger, list[Evidence], list[str]]:
        """The question's ledger, the passages to show (`first` in front) and notes on instruction-like ones."""
        ledger = self.ledger(plan)
        ranked = shown_passages(evidence, first=first, limit=self.limits.max_passages)
        return ledger, ranked, instruction_like(ranked, ledger.flagged)

    def _fitted(
        self, ledger: Ledger, step: str, ranked: list[Evidence], once: Callable[[list[Evidence], int], R]
    ) -> R:
        """Asks with the passages that fit the window; on a context-length error, again with half of them."""
        budget = max(
            200,
            min(
                self.limits.passage_tokens,
                self.limits.context_tokens - self.limits.max_output_tokens - PROMPT_OVERHEAD_TOKENS,
            ),
        )
        shown = ranked
        for shrink in range(SHRINKS + 1):
            try:
                return once(shown, budget)
            except ContextTooLong as exc:
                ledger.compact = True  # the shared system prompt gives way to the step's own, too
                if shrink == SHRINKS or len(shown) <= 1:
                    raise BadModelOutput(f"{exc}; still too long with {len(shown)} passage(s)") from exc
                shown, budget = shown[: max(1, len(shown) // 2)], max(200, budget // 2)
                ledger.notes.append(f"{step}: {exc}; asked again with {len(shown)} passage(s)")
        raise AssertionError("unreachable")  # pragma: no cover

    def _step(
        self, ledger: Ledger, step: str, ask: Callable[[], R], offline: Callable[[], R], notes: list[str]
    ) -> tuple[R, list[str]]:
        """Runs the model's version of a step, or the offline one; returns it with the step's notes."""
        start = len(ledger.notes)
        reason = (
            f"model unavailable earlier in this question: {ledger.unavailable}" if ledger.unavailable else ""
        )
        ledger.steps += 1
        if not reason:
            calls, tokens = ledger.calls, ledger.tokens
            try:
                result = ask()
            except BudgetSpent as exc:
                reason = f"budget spent: {exc}"
            except ContextTooLong as exc:
                reason = f"invalid reply: {exc}"
            except ModelUnavailable as exc:
                reason = f"model unavailable: {exc}"
            except BadModelOutput as exc:
                reason = f"invalid reply: {exc}"
            else:
                notes.append(f"llm {step}: {ledger.calls - calls} call(s), {ledger.tokens - tokens} tokens")
                ledger.notes.extend(notes)
                return result, ledger.notes[start:]
        ledger.fallbacks.append(f"{step}: {reason}")
        notes.append(f"fallback: offline ({reason})")
        ledger.notes.extend(notes)
        log.warning(
            "llm step fell back to offline", extra={"step": step, "run": ledger.run, "reason": reason}
        )
        return offline(), ledger.notes[start:]


def _system(ledger: Ledger, step: str) -> str:
    return prompts.compact(step) if ledger.compact else prompts.SYSTEM


def build_reasoner(
    settings: LLMSettings, *, limits: LLMLimits | None = None, sleep: Callable[[float], None] | None = None
) -> Reasoner:
    """The LLM reasoner when `llm_model` is set, else the offline rule reasoner. The model string is
    `<provider>:<model name>`: `openai:gpt-4o-mini` (any OpenAI-compatible server with `llm_base_url`: vLLM,
    llama.cpp, LM Studio), `ollama:llama3.1:8b`, `anthropic:claude-sonnet-4-5`; a bare name means openai."""
    if not settings.llm_model:
        return OfflineReasoner()
    return LLMReasoner(model_client(settings, limits=limits, sleep=sleep), model=settings.llm_model)


def model_client(
    settings: LLMSettings, *, limits: LLMLimits | None = None, sleep: Callable[[float], None] | None = None
) -> ModelClient:
    """The model's client with the preset's limits filled in (`llm_presets`) and its slots on this host."""
    from graph_flows.reasoners.llm_client import build_chat_model, provider_of
    from graph_flows.reasoners.llm_presets import resolved
    from graph_flows.reasoners.llm_slots import Slots

    if not settings.llm_model:
        raise ValueError("no model configured (SLEUTH_LLM_MODEL)")
    provider, name = provider_of(settings.llm_model)
    limits = resolved(
        limits or getattr(settings, "llm", None) or LLMLimits(), provider, settings.llm_base_url
    )
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    chat = build_chat_model(settings.llm_model, base_url=settings.llm_base_url, api_key=key, limits=limits)
    slots = Slots(
        f"{settings.llm_model}@{settings.llm_base_url or provider}",
        limits.max_in_flight,
        folder=limits.slots_dir,
    )
    options: dict[str, Any] = {"provider": provider, "name": name, "slots": slots}
    if sleep is not None:
        options["sleep"] = sleep
    return ModelClient(chat, limits, **options)


def check_model(settings: LLMSettings, *, limits: LLMLimits | None = None) -> str:
    """One small structured call, for `sleuth doctor --llm`: a wrong key, model name or URL shows at start
    instead of turning every answer offline. Returns what worked; raises ReasonerError with what failed."""
    client = model_client(settings, limits=limits)
    ledger = Ledger(run="doctor")
    client.start(ledger)
    out = client.ask(ledger, prompts.PING, "ping", PingOut, step="compose")
    if not out.ok:
        raise BadModelOutput("the model answered the check with ok=false")
    return f"{settings.llm_model} answered in structured output ({client.method}), {ledger.tokens} tokens"


def measure_model(settings: LLMSettings, *, limits: LLMLimits | None = None) -> Any:
    """`sleuth doctor --llm`: the real steps on a fixture, timed (`llm_doctor.Measured`)."""
    from graph_flows.reasoners.llm_doctor import measure

    return measure(model_client(settings, limits=limits))
