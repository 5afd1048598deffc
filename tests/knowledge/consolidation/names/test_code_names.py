"""Code names (knowledge/consolidation/names/code_names.py): dotted paths that are two
things, qualified names and their shorter forms. Pure functions: no database."""

from __future__ import annotations

import pytest

from knowledge.consolidation.names.code_names import (
    code_paths_differ,
    repeats_its_module,
    shorter_form,
)


@pytest.mark.parametrize(
    ("a", "b", "why"),
    [
        ("pickle", "pickle.Pickler", "a dotted parent and its member"),
        ("tarfile.TarFile", "tarfile.TarFile.getnames()", "a dotted parent and its member"),
        ("itertools.dropwhile", "itertools.takewhile", "two members of one namespace"),
        ("asyncio.Queue", "queue.Queue", "members of two namespaces"),
        ("asyncio.Lock()", "threading.Lock", "members of two namespaces"),
        ("asyncio.TimeoutError", "concurrent.futures.TimeoutError", "members of two namespaces"),
        ("Decimal", "decimal.Decimal", None),  # qualified and unqualified: may be one
        ("ConfigParser.read", "configparser.ConfigParser.read()", None),  # more qualified
        ("Queue.Queue", "queue.Queue", None),  # another case of one path
        ("PyObject_GenericGetAttr", "PyObject_GenericSetAttr", "two code names"),
        ("RawIOBase", "io.RawIOBase.read", "two code names"),
        ("SkipTest", "unittest.SkipTest", None),
        ("is_alive", "isAlive", None),  # the same letters: the spelling tier asks
        ("PostgreSQL", "Postgres", None),  # one word is no identifier
        ("os.path", "os.path()", None),
        ("Western Europe", "Eastern Europe", None),  # not code
    ],
)
def test_dotted_code_names_that_are_two_things(a, b, why):
    assert code_paths_differ(a, b) == why


@pytest.mark.parametrize(
    ("a", "b", "short"),
    [
        ("SkipTest", "unittest.SkipTest", "SkipTest"),
        ("tarfile.TarFile.list", "TarFile.list", "TarFile.list"),
        ("sched_getaffinity", "os.sched_getaffinity()", "sched_getaffinity"),
        ("open", "os.open", None),  # one plain word: the built-in is not os.open
        ("Logger", "logging.Logger", None),
        ("Decimal.sqrt", "decimal.Context.sqrt", None),  # another parent
        ("queue.Queue", "asyncio.Queue", None),
        ("Queue.put", "queue.Queue.put", "Queue.put"),
    ],
)
def test_shorter_form_of_a_qualified_code_name(a, b, short):
    assert shorter_form(a, b) == short
    assert shorter_form(b, a) == short


@pytest.mark.parametrize(
    ("a", "b", "repeats"),
    [
        ("datetime.date", "datetime.datetime.date", True),
        ("socket.socket.recv()", "socket.recv", True),
        ("Queue.put", "queue.Queue.put", False),  # another case: the module is not repeated
        ("recv", "socket.recv", False),  # one part: no module to repeat
        ("a.b", "x.a.b", False),
        ("a.b", "a.a.a.b", False),
    ],
)
def test_a_longer_code_name_that_repeats_its_module(a, b, repeats):
    assert repeats_its_module(a, b) is repeats
    assert repeats_its_module(b, a) is repeats
