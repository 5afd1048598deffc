"""Fixtures shared by every suite: people, workspaces, tokens and API clients.

Everything here is real: the embedded PostgreSQL (or DATABASE_URL), real users, real
hashed tokens. Nothing of our own is mocked.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.test import Client

from knowledge.retrieval import close_retrieval_pool
from tests.timing import (  # noqa: F401  (the run's order and timing report: tests/timing.py)
    pytest_collection_modifyitems,
    pytest_runtest_logreport,
    pytest_runtest_setup,
    pytest_terminal_summary,
)
from workspaces.actions.tokens import do_create_api_token
from workspaces.actions.workspaces import do_create_workspace, do_set_membership
from workspaces.models import ApiToken, Role, Workspace

# Python writes its bytecode caches (__pycache__, ignored by git) during the run even where
# the environment says PYTHONDONTWRITEBYTECODE: a run starts dozens of interpreters (xdist
# workers, task workers, servers, management commands), and without the caches each one
# compiled every module of the project and every test module's rewritten asserts from
# source, about a CPU-second a process. Set here, before xdist starts its workers, it
# reaches them and every process a test starts.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# One torch thread per process unless the environment says otherwise: the run has two
# xdist workers and their task workers embedding on the same cores, and torch's threads
# spin while they wait, taking the core another process needs. Two processes encoding at
# once each took 2.4x as long on two threads as on one (bench/encode_threads.py), and the
# whole run used 0.93x the CPU (docs/BENCHMARKS.md, "The suite's time, seventh pass").
# Set before any process imports torch; tests that are about thread counts set their own.
os.environ.setdefault("OMP_NUM_THREADS", "1")


@dataclass
class Member:
    user: User
    workspace: Workspace
    token: ApiToken
    plaintext: str

    def client(self) -> Client:
        """An API client authenticating with this member's bearer token."""
        return Client(headers={"Authorization": f"Bearer {self.plaintext}"})


def create_member(username: str, *, workspace: str = "acme", role: str = Role.ADMIN) -> Member:
    """A user with `role` in `workspace` (created if missing) and a token for it."""
    ws = Workspace.objects.filter(slug=workspace).first() or do_create_workspace(
        slug=workspace, name=workspace.title()
    )
    user = User.objects.create_user(username=username, password="not-used-here-1")
    do_set_membership(workspace=ws, username=username, role=role)
    issued = do_create_api_token(workspace=ws, user=user, name=f"{username}-token")
    return Member(user=user, workspace=ws, token=issued.token, plaintext=issued.plaintext)


@pytest.fixture
def make_member(db) -> Callable[..., Member]:
    """Create a user with `role` in `workspace` (created if missing) and a token for it."""
    return create_member


@pytest.fixture
def alice(make_member) -> Member:
    """Admin of workspace "acme"."""
    return make_member("alice", workspace="acme", role=Role.ADMIN)


@pytest.fixture
def bob(make_member) -> Member:
    """Admin of workspace "globex": a stranger to acme."""
    return make_member("bob", workspace="globex", role=Role.ADMIN)


@pytest.fixture(autouse=True)
def retrieval_pool_closed() -> Iterator[None]:
    """Searches made outside a transaction (live servers, transactional tests) run parts on
    a thread pool with its own connections; close them so the test database can be
    dropped and the next test starts from the settings it sets."""
    yield
    close_retrieval_pool()


@pytest.fixture(autouse=True)
def no_llm_from_the_environment(settings):
    """In-process tests use the offline extractor unless a test configures an LLM (the
    `llm` fixture): a developer's own LLM_* variables never reach a test."""
    settings.LLM_BASE_URL = ""
    settings.LLM_MODEL = ""
    settings.LLM_API_KEY = ""
