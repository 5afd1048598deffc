"""Code names: dotted paths, identifiers and what they say about two names ("pickle" /
"pickle.Pickler" are two things, "SkipTest" / "unittest.SkipTest" one written short).

A manual names its API in full where it is defined and shorter where it is used, and its
names embed close because they share a path, a prefix or a member's name: these rules read
the paths themselves, which no letter similarity can.
"""

from __future__ import annotations

import re

from knowledge.consolidation.names.normalise import _bare, _loose, canonical_key

_DOTTED_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def code_paths_differ(a: str, b: str) -> str | None:
    """Why two code names are two things whatever their embeddings say, or None: one is the
    other's dotted parent ("pickle" / "pickle.Pickler"), they are two members of one
    namespace ("itertools.dropwhile" / "itertools.takewhile"), members of two namespaces
    ("asyncio.Queue" / "queue.Queue"), or two other identifiers ("PyObject_GenericGetAttr" /
    "PyObject_GenericSetAttr", "RawIOBase" / "io.RawIOBase.read"). Their names embed close
    because they share a path, a prefix or a member's name; on the Python manual 2,909 of
    the 5,088 pairs the name embedding queued for review were of the first two kinds (bench/
    doc_quality.py review). Still a question: a qualified name and a shorter form of it
    ("Decimal" / "decimal.Decimal", "ConfigParser.read" / "configparser.ConfigParser.read":
    one path ends with the other, ignoring case), and identifiers with the same letters
    once underscores and dots are ignored ("is_alive" / "isAlive")."""
    path_a, path_b = _code_path(a), _code_path(b)
    if path_a is None or path_b is None or path_a == path_b:
        return None
    short, long = sorted((path_a, path_b), key=len)
    if len(long) > 1 and long[: len(short)] == short:
        return "a dotted parent and its member"
    if len(path_a) == len(path_b) > 1 and path_a[:-1] == path_b[:-1]:
        return "two members of one namespace"
    folded = sorted(([p.casefold() for p in path_a], [p.casefold() for p in path_b]), key=len)
    if folded[1][-len(folded[0]) :] == folded[0]:
        return None
    if len(folded[0]) > 1:
        return "members of two namespaces"
    if _is_identifier(_bare(a)) and _is_identifier(_bare(b)) and not _loose_letters(a, b):
        return "two code names"
    return None


def shorter_form(a: str, b: str) -> str | None:
    """The shorter of two code names when the longer is it, qualified: "SkipTest" /
    "unittest.SkipTest", "TarFile.list" / "tarfile.TarFile.list"; else None. A manual writes
    an API name in full where it is defined and shorter where it is used. One word is a
    shorter form only when shaped as an identifier (underscores, a capital inside): "open"
    is the built-in as often as "os.open", "Logger" any logger. On the Python manual, 537
    open review pairs were such (with no other qualified name ending the same way), and
    78 of 80 sampled were one thing ("sysconfig.get_config_var" is not
    "distutils.sysconfig.get_config_var", nor "datetime.tzinfo" "datetime.datetime.tzinfo")."""
    path_a, path_b = _code_path(a), _code_path(b)
    if path_a is None or path_b is None or len(path_a) == len(path_b):
        return None
    short, long = sorted((path_a, path_b), key=len)
    if long[-len(short) :] != short or (len(short) == 1 and not _is_identifier(short[0])):
        return None
    return ".".join(short)


def repeats_its_module(a: str, b: str) -> bool:
    """Whether the longer of two code names is the shorter with the shorter's first part put
    in front again: "datetime.datetime.date" of "datetime.date", "socket.socket.recv" of
    "socket.recv". A module and its class share a name there, so the shorter name is either
    the class's member written short (`socket.recv`, the method) or a member of the module in
    full (the class `datetime.date`, which is not the method `datetime.datetime.date`).
    Callers tell the two apart by whether the shorter name has members of its own."""
    path_a, path_b = _code_path(a), _code_path(b)
    if path_a is None or path_b is None:
        return False
    short, long = sorted((path_a, path_b), key=len)
    return len(short) >= 2 and long == [short[0], *short]


def _loose_letters(a: str, b: str) -> bool:
    return _loose(canonical_key(a)) == _loose(canonical_key(b))


def _code_path(name: str) -> list[str] | None:
    text = _bare(name)
    return text.split(".") if _DOTTED_IDENTIFIER.fullmatch(text) else None


_IDENTIFIER_JOIN = re.compile(r"\w[._]\w|[a-z][A-Z]")


def _is_identifier(name: str) -> bool:
    """One code identifier, dotted, snake_case or CamelCase, written without spaces: its
    parts are not words a longer or shorter name may add or drop."""
    text = name.strip()
    return bool(text) and " " not in text and _IDENTIFIER_JOIN.search(text) is not None


def _spelled_as_code(name: str) -> bool:
    """A name whose underscores, dots or call parentheses are part of it: "get_value" and
    "getvalue", "set_trace" and "settrace", "http.server" and "HTTPServer", "COLOR_GREEN"
    and "Color.GREEN" are two things each (on the Python manual 77 code names had joined an
    entity spelled with other such marks, and about 10 of those were one thing: "is_alive" /
    "isAlive", "latin1" / "latin_1"), so such a pair is a question. A web address
    or a ".js" name is no code path here ("Node.js" / "NodeJS", "Amazon.com" / "Amazon")."""
    text = name.strip()
    if "_" in text or "(" in text:
        return True
    path = _code_path(text)
    return path is not None and len(path) > 1 and path[-1].casefold() not in _WEB_ENDINGS


_WEB_ENDINGS = frozenset({"js", "com", "org", "net", "io"})


QUALIFIED_REASON = "a qualified name and its shorter form"
# The score of a qualified name and its shorter form (`shorter_form`): at or above every
# type's automatic merge (see TYPE_THRESHOLDS).
QUALIFIED_SCORE = 0.95
