"""The messages sent to the LLM for an answer, a global map step and a community summary.

Document text is hostile: a passage may say "ignore previous instructions". So the rules
live in the system message only, every quoted text sits inside numbered delimiters it
cannot forge (delimiter look-alikes in it are defused, control characters dropped), each
is bounded and so is the whole, and the user message says again that what is inside the
blocks is data. The system prompt is never part of anything returned (guard.py).

The texts are files of knowledge/prompts/v1/ (`answer_*.txt`, `community_summary_*.txt`),
read once at import; this module frames and bounds what fills them.
"""

from __future__ import annotations

from collections.abc import Sequence

from knowledge.answering.types import Passage
from knowledge.prompts import load_prompt, render
from system.llm.quoted_text import strip_invisible

PASSAGE_CHARS = 1500
CONTEXT_CHARS = 12000
SUMMARY_CHARS = 1500
QUESTION_CHARS = 2000

# What the model says, and what the answer says, when the passages do not answer.
NOT_IN_DOCUMENTS = "The documents do not answer this question."
# A map step's reply when a community summary holds nothing for the question.
NOTHING_RELEVANT = "NOTHING RELEVANT"

# The answer's prompts are not configurable (EXTRACTION_PROMPT_VERSION chooses extraction's
# and review's): always these files of knowledge/prompts/.
PROMPT_VERSION = "v1"


SYSTEM_PROMPT = render(
    load_prompt("answer_system", version=PROMPT_VERSION).strip(),
    not_in_documents=NOT_IN_DOCUMENTS,
)
MAP_SYSTEM_PROMPT = render(
    load_prompt("answer_map_system", version=PROMPT_VERSION).strip(),
    nothing_relevant=NOTHING_RELEVANT,
)
SUMMARY_SYSTEM_PROMPT = load_prompt("community_summary_system", version=PROMPT_VERSION).strip()
_ANSWER = load_prompt("answer_user", version=PROMPT_VERSION).strip()
_NOTES = load_prompt("answer_notes", version=PROMPT_VERSION).strip()
_NO_PASSAGES = load_prompt("answer_no_passages", version=PROMPT_VERSION).strip()
_MAP = load_prompt("answer_map_user", version=PROMPT_VERSION).strip()
_SUMMARY = load_prompt("community_summary_user", version=PROMPT_VERSION).strip()
# Delimiter look-alikes in quoted text become guillemets, which no block boundary uses.
_DEFUSED = {"<<<": "\u2039\u2039\u2039", ">>>": "\u203a\u203a\u203a"}


def clean(text: str, limit: int) -> str:
    """Quoted text made safe inside a block: control and format characters out (line
    breaks kept), the block delimiters defused, bounded with "…"."""
    out = strip_invisible(text, keep="\n\t")
    for delimiter, defused in _DEFUSED.items():
        out = out.replace(delimiter, defused)
    if len(out) > limit:
        out = out[: limit - 1].rstrip() + "…"
    return out


def passage_block(passage: Passage, limit: int = PASSAGE_CHARS) -> str:
    title = clean(" ".join((passage.document_title or passage.path).split()), 200)
    return (
        f"<<<PASSAGE {passage.n}>>>\n(from: {title})\n{clean(passage.text, limit)}\n"
        f"<<<END PASSAGE {passage.n}>>>"
    )


def passage_blocks(passages: Sequence[Passage], total: int = CONTEXT_CHARS) -> tuple[str, int]:
    """The passages' blocks within `total` characters, and how many made it in."""
    blocks: list[str] = []
    size = 0
    for passage in passages:
        block = passage_block(passage)
        if size + len(block) > total:
            break
        blocks.append(block)
        size += len(block) + 2
    return "\n\n".join(blocks), len(blocks)


def answer_messages(
    question: str, passages: Sequence[Passage], notes: Sequence[str] = ()
) -> list[dict[str, str]]:
    """System rules, then the passages (and, in global mode, the notes of the map step)
    as data, then the question."""
    blocks, _ = passage_blocks(passages)
    noted = "\n\n".join(
        f"<<<NOTE>>>\n{clean(note, SUMMARY_CHARS)}\n<<<END NOTE>>>" for note in notes
    )
    user = render(
        _ANSWER,
        passages=blocks or _NO_PASSAGES,
        notes=f"\n\n{render(_NOTES, notes=noted)}" if notes else "",
        question=_question(question),
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def map_messages(question: str, title: str, summary: str) -> list[dict[str, str]]:
    body = f"{clean(title, 200)}\n{clean(summary, SUMMARY_CHARS)}"
    return [
        {"role": "system", "content": MAP_SYSTEM_PROMPT},
        {"role": "user", "content": render(_MAP, summary=body, question=_question(question))},
    ]


def summary_messages(entities: Sequence[str], relations: Sequence[str]) -> list[dict[str, str]]:
    lines = ["Entities:"] + [f"- {clean(e, 400)}" for e in entities]
    if relations:
        lines += ["Relations:"] + [f"- {clean(r, 300)}" for r in relations]
    data = clean("\n".join(lines), 6000)
    return [
        {"role": "system", "content": SUMMARY_SYSTEM_PROMPT},
        {"role": "user", "content": render(_SUMMARY, data=data)},
    ]


def _question(question: str) -> str:
    return clean(" ".join(question.split()), QUESTION_CHARS)


def split_summary(reply: str) -> tuple[str, str]:
    """The title (first line) and the summary (the rest) of a summary reply."""
    text = clean(reply.strip(), SUMMARY_CHARS + 200)
    title, _, rest = text.partition("\n")
    title = title.strip().strip("#*").strip()[:200]
    return title or "Untitled community", rest.strip() or title
