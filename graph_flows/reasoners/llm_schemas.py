"""The shapes the model replies in, one per step, read leniently; and the schema the model is shown.

Two views of one shape. The model is given `model_schema(...)`: every field required and nullable, objects
closed, no length caps and no maps, which is what strict structured-output modes accept (OpenAI and vLLM
`json_schema`, Ollama `format`, Anthropic tool input). The reply is then read leniently: unknown keys are
ignored (an extra key can add nothing: the program only reads the fields below), `null` means the default,
long lists and strings are cut, a template copied literally (`"explanation|thing"`) picks its first option,
and evidence ids written `[E1]`, `e1` or `1` become `E1`. What cannot be read this way (no aspects, a
sentence with no text) is rejected and repaired once; inside a list, an item that cannot be read (a null, an
aspect established on no evidence) is dropped and the rest of the reply kept.

These are the model's *proposal*; the LLM reasoner turns them into the dataclasses of `reasoners.base`, and
the nodes validate those exactly as they validate the offline reasoner's.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)

AnswerTypeName = Literal[
    "person", "date", "number", "money", "place", "explanation", "yesno", "choice", "list", "thing"
]
DirectionName = Literal["text", "graph"]
GapKind = Literal["relation", "explanation", "missing_source"]
_ID = re.compile(r"^\[?\s*(?:e|evidence|passage)?\s*[-_#]?\s*(\d{1,4})\s*\]?$", re.I)


def normalise_id(value: Any) -> Any:
    """`[E1]`, `e1`, `E 1`, `1` -> `E1`; anything else is left for the program to reject as unknown."""
    if isinstance(value, int):
        return f"E{value}"
    if isinstance(value, str):
        found = _ID.match(value.strip())
        return f"E{int(found.group(1))}" if found else value.strip()
    return value


def _ids(cap: int) -> Callable[[Any], Any]:
    def read(value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str | int):
            value = [p for p in re.split(r"[,\s]+", str(value)) if p] if isinstance(value, str) else [value]
        return [normalise_id(v) for v in value][:cap] if isinstance(value, list) else value

    return read


def _cap(n: int) -> BeforeValidator:
    """Lists longer than the program reads are cut, not rejected."""
    return BeforeValidator(lambda v: v[:n] if isinstance(v, list) else ([] if v is None else v))


def _valid_items(n: int) -> WrapValidator:
    """A list whose items are read one by one: an item that cannot be read (a null, an aspect established on
    `evidence: []`, a sentence without text) is dropped and the rest kept, instead of the whole reply
    rejected; then the list is cut to `n`."""

    def read(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        if value is None:
            return []
        if not isinstance(value, list):
            return handler(value)
        kept: list[Any] = []
        for item in value:
            if item is None:
                continue
            try:
                kept.extend(handler([item]))
            except ValidationError:
                continue
        return kept[:n] if kept else handler([])  # none readable: the list's own rule (at least one) speaks

    return WrapValidator(read)


def _clip(n: int) -> BeforeValidator:
    return BeforeValidator(lambda v: v.strip()[:n] if isinstance(v, str) else v)


def _choice(options: Any, default: str) -> BeforeValidator:
    """A template copied literally ("text|graph") or a case slip picks the first known option it names."""
    names: tuple[str, ...] = get_args(options)

    def read(value: Any) -> Any:
        if not isinstance(value, str):
            return default
        words = re.split(r"[|/,\s]+", value.strip().lower())
        return next((w for w in words if w in names), default)

    return BeforeValidator(read)


def _unit(value: Any) -> Any:
    """A score outside [0, 1] is clamped, not rejected."""
    try:
        return max(0.0, min(1.0, float(value)))
    except (TypeError, ValueError):
        return value


EvidenceId = Annotated[str, BeforeValidator(normalise_id)]
Ids6 = Annotated[list[str], BeforeValidator(_ids(6))]
Ids4 = Annotated[list[str], BeforeValidator(_ids(4))]
Text300 = Annotated[str, _clip(300)]
Names = Annotated[list[Annotated[str, _clip(120)]], _cap(8)]
Queries = Annotated[list[Annotated[str, _clip(200)]], _cap(4)]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_default(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None}
        return data


class AspectOut(_Lenient):
    text: Text300 = Field(min_length=1)  # one thing that must be known
    entities: Annotated[list[Annotated[str, _clip(120)]], _cap(6)] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _bare_string(cls, data: Any) -> Any:
        return {"text": data} if isinstance(data, str) else data


class PlanOut(_Lenient):
    aspects: Annotated[list[AspectOut], _valid_items(4)] = Field(min_length=1)
    entities: Names = Field(default_factory=list)
    answer_type: Annotated[AnswerTypeName, _choice(AnswerTypeName, "thing")] = "thing"
    comparison: bool = False
    direction: Annotated[DirectionName, _choice(DirectionName, "text")] = "text"
    queries: Queries = Field(default_factory=list)
    followup: bool = False  # continues the thread's previous question
    effective_question: Annotated[str, _clip(400)] = ""  # the question made self-contained
    scope: Annotated[str, _clip(10)] = (
        ""  # "broad": its answer spans many documents of a theme; else "pointed"
    )


class RelevanceOut(_Lenient):
    id: EvidenceId
    score: Annotated[float, BeforeValidator(_unit)] = 0.0


class EstablishedOut(_Lenient):
    aspect: str  # an aspect id from the plan
    evidence: Ids6 = Field(min_length=1)  # the chain, in order


class GapOut(_Lenient):
    kind: Annotated[GapKind, _choice(GapKind, "relation")] = "relation"
    what: Text300 = Field(min_length=1)
    clues: Ids6 = Field(default_factory=list)
    aspect: str | None = None  # required for missing_source: which aspect no passage covers


class EntityOut(_Lenient):
    name: Annotated[str, _clip(120)] = Field(min_length=1)  # quoted verbatim from the passage
    evidence_id: EvidenceId


def _pairs(key: str, value: str) -> Callable[[Any], Any]:
    """A map written where a list of pairs is asked (`{"E1": 0.9}`) is read as the list."""

    def read(data: Any) -> Any:
        if isinstance(data, dict):
            return [{key: k, value: v} for k, v in data.items()]
        return data

    return read


class ReflectOut(_Lenient):
    relevance: Annotated[list[RelevanceOut], BeforeValidator(_pairs("id", "score")), _valid_items(40)] = (
        Field(default_factory=list)
    )
    established: Annotated[
        list[EstablishedOut], BeforeValidator(_pairs("aspect", "evidence")), _valid_items(8)
    ] = Field(default_factory=list)  # question 1
    missing: Annotated[list[GapOut], _valid_items(6)] = Field(default_factory=list)  # question 2
    direction: Annotated[DirectionName, _choice(DirectionName, "text")] = "text"  # question 3
    entities: Annotated[list[EntityOut], _valid_items(8)] = Field(default_factory=list)
    queries: Annotated[list[Annotated[str, _clip(200)]], _cap(3)] = Field(default_factory=list)

    @property
    def relevance_map(self) -> dict[str, float]:
        return {r.id: r.score for r in self.relevance}


class SentenceOut(_Lenient):
    text: Annotated[str, _clip(600)] = Field(min_length=1)
    cites: Ids4 = Field(default_factory=list)
    quote: Annotated[str, _clip(600)] = ""  # verbatim from the first cited passage: what the program checks
    aspect: str | None = None


class ConflictOut(_Lenient):
    about: Annotated[str, _clip(200)] = Field(min_length=1)
    evidence: Ids4 = Field(min_length=2)


class ComposeOut(_Lenient):
    sentences: Annotated[list[SentenceOut], _valid_items(12)] = Field(default_factory=list)
    gaps: Annotated[list[GapOut], _valid_items(6)] = Field(default_factory=list)
    conflicts: Annotated[list[ConflictOut], _valid_items(4)] = Field(default_factory=list)
    answered: bool = False


class PingOut(_Lenient):
    """`sleuth doctor --llm`: the smallest structured reply that proves the model follows a schema."""

    ok: bool


_DROPPED_KEYS = {"title", "default", "minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum"}


def model_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema shown to the model: refs inlined, every property required and nullable, objects
    closed, no caps or defaults (strict modes reject or ignore them; the program enforces them instead)."""
    raw = schema.model_json_schema()
    defs = raw.pop("$defs", {})

    def walk(node: Any, top: bool = False) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return walk(copy.deepcopy(defs[node["$ref"].split("/")[-1]]), top)
        out = {k: walk(v) for k, v in node.items() if k not in _DROPPED_KEYS}
        if out.get("type") == "object" or "properties" in out:
            props = out.get("properties", {})
            out["properties"] = {k: _nullable(v) for k, v in props.items()}
            out["required"] = list(props)
            out["additionalProperties"] = False
        return out

    body = walk(raw, top=True)
    return {"title": schema.__name__, "description": (schema.__doc__ or schema.__name__).strip(), **body}


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """`anyOf: [<the type>, {"type": "null"}]`: every structured-output mode takes it (OpenAI and vLLM strict,
    Ollama, Anthropic), where a type array (`["string", "null"]`) is refused by some."""
    if "anyOf" in node:
        kinds = node["anyOf"]
        return (
            node
            if any(k.get("type") == "null" for k in kinds)
            else {**node, "anyOf": [*kinds, {"type": "null"}]}
        )
    if "type" not in node:
        return node
    described = {k: node[k] for k in ("description",) if k in node}
    inner = {k: v for k, v in node.items() if k != "description"}
    return {**described, "anyOf": [inner, {"type": "null"}]}
