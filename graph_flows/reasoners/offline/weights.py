"""Every number the offline reasoner decides with, in one place. Each line says what it trades off; they are
hand-set, the part of reading the learned reader (graph_flows/reader) is to replace; a change here is checked
on every kind of question, never one question.

Support is the reasoner's score for "this passage (or chain) states what the aspect asks":
    support = LEXICAL_SHARE * lexical + (1 - LEXICAL_SHARE) * dense_support(cosine)
where lexical is the IDF-weighted share of the aspect's terms found in the unit, its heading and its title.
"""

from __future__ import annotations

from graph_flows.config import THRESHOLDS

# --- relevance and establishment --------------------------------------------------------------------------
RELEVANT = THRESHOLDS.relevant  # shared with the nodes: relevant passages feed the graph and the next round
ESTABLISHED = 0.55  # a chain at or above this establishes its aspect; lower -> more answers, more wrong ones
SURE = 0.8  # one passage this strong settles an aspect even if its answer names someone not yet read
LEXICAL_SHARE = (
    0.6  # lexical vs dense in support; dense carries paraphrase, lexical carries names and numbers
)
DENSE_FLOOR, DENSE_SPAN = 0.2, 0.45  # MiniLM cosine: ~0.2 unrelated, ~0.65 and above on topic
ENTITY_BONUS = 0.25  # the named entity's own passage is read as about it even where a sentence omits the name
STRONG_LEXICAL = 0.6  # a passage covering this much of the aspect's terms is relevant whatever dense says

# --- chains (multi-hop) --------------------------------------------------------------------------------------
MAX_CHAIN = 4  # links followed back through `parent`
INFORMATIVE = 0.5  # relation words weighing >= half the heaviest must all occur along the chain
KEY_TERM = 0.9  # with no name in the question, its words weighing >= this share of the heaviest ...
PARAPHRASE_DENSE = 0.75  # ... must be in the answering unit, unless the unit's own dense support reaches this
DENSE_READ_PASSAGES = (
    3  # passages read unit by unit with the embedder per aspect (cost: their units embedded)
)
DENSE_TIE = 0.02  # units this close in cosine to the closest one are as close: the question's words decide
CARRY_DENSE = 0.88  # a unit this close in meaning (cosine ~0.6) carries the question's words no page uses
MEANING_ALONE = 0.55  # a unit this close in meaning (cosine ~0.45) may answer a question no page words ...
MEANING_MARGIN = 0.05  # ... when it is this much closer than any other document's closest unit
WEAK_BRIDGE = 0.35  # a chain through a bridge this weak says no hop is missing: meaning may still answer
SAME_STATEMENT = 0.6  # ... saying something else: units sharing this share of their words state one fact
STATEMENT_WORDS = 5  # a unit shorter than this is a heading or a label: it states nothing
COMMON_NAME = 2.0  # idf of a name's rarest word below this (one page in seven says it): it bridges nothing
NAMED_PAIR = 0.9  # a pair joined only by a name must beat a single passage by this margin to be chosen
HOP_RELATION_SHARE = 0.0  # after a hop, the chain must still hold this share of the relation's weight
MENTION_RELATION_SHARE = 0.5  # ... and after a pair joined only by a proper name both passages say ("Velden")
SHAPE_PENALTY = 0.7  # the answering unit lacks the expected answer's shape (no name for "who")
SHAPELESS_FACT = 0.5  # ... no date for "when", no quantity for "how many": never established
CAUSE_BONUS = 0.1  # a "why" question met by a unit that states a cause ("blocked by", "because", "due to")
UNANCHORED = 0.8  # the chain never names what the question names
OFF_ROOT = 0.7  # the question names an entity whose own passage is not the chain's root
UNCONSTRAINED = (
    ESTABLISHED - 0.05
)  # cap when a name or code the question insists on is absent: never established

# --- reading sentences for the answer ---------------------------------------------------------------------
MAX_UNITS = 40  # units of one passage read densely (a chunk holds ten sentences or a table of rows)
RUNNER_UP = 0.75  # a second unit is quoted when it scores this share of the best (questions ask two things)
HEADING_ONLY = 0.3  # penalty for a unit of fewer than five words: a heading or a label, not an answer
SHAPE_BONUS = 0.15  # the unit holds a span of the expected type
SHAPELESS = 0.5  # a unit without the span a typed question asks for (a date, a number) is quoted last
CHOSEN_PASSAGE = 0.2  # units of the passage that established the aspect, over its document's other passages
RELATED_MIN = 0.45  # a closest-passage unit (shown when nothing answers) must score at least this
COVER_GAIN = 0.15  # a further unit is quoted when it covers this share of the question left unsaid
ROW_LABEL = 0.3  # a table row whose first cell is the asked name, over rows that merely mention it
SECTION_PROSE = 2  # sentences of a listed section's prose kept with its list (its rule, its condition)
TABLE_ATTRIBUTE = 0.5  # a comparison is read off one table when a row or column names this share of the asked
ALIGNED_SECTIONS = 3  # "how do X and Y differ": sections both pages have, shown side by side
MAX_LIST_ITEMS = 25  # items of a list answer; the rest are counted, not shown
