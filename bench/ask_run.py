"""The ask benchmark's body; see bench/ask.py."""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.db import connection

from bench.retrieval_run import (
    RANDOM_MODEL,
    bench_workspace,
    drop,
    make_queries,
    percentile,
    query_vectors,
)
from knowledge.actions.ask import prepare_ask
from knowledge.answering.citations import validate_answer
from knowledge.answering.prompt import answer_messages
from knowledge.retrieval import close_retrieval_pool
from workspaces.models import Workspace

ROOT = Path(__file__).resolve().parent.parent
REPLY = "The passages name it [1]. They relate the two [1, 2]. Nothing contradicts it [2]."


def start_llm(delay: float, piece_delay: float) -> tuple[subprocess.Popen[str], str]:
    """The scripted server in its own process (it must not share this one's GIL)."""
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "llm_server.py"), "--delay", str(delay),
         "--responder", "bench.ask:respond"],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "BENCH_PIECE_DELAY": str(piece_delay)},
    )  # fmt: skip
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def without_llm(workspace: Workspace, questions: list[str], vectors: list[Any]) -> dict[str, Any]:
    """prepare_ask + prompt + citation check, per question, in ms."""
    totals, search_ms, check_ms = [], [], []
    for question, vector in zip(questions, vectors, strict=True):
        started = time.perf_counter()
        plan = prepare_ask(workspace=workspace, question=question, query_vector=vector)
        searched = time.perf_counter()
        answer_messages(question, plan.answer.passages)
        validate_answer(REPLY, plan.answer.passages)
        done = time.perf_counter()
        totals.append((done - started) * 1000)
        search_ms.append((searched - started) * 1000)
        check_ms.append((done - searched) * 1000)
    return {
        "questions": len(questions),
        "p50_ms": percentile(totals, 50),
        "p95_ms": percentile(totals, 95),
        "retrieval_p50_ms": percentile(search_ms, 50),
        "retrieval_p95_ms": percentile(search_ms, 95),
        "prompt_and_citations_p50_ms": percentile(check_ms, 50),
        "prompt_and_citations_p95_ms": percentile(check_ms, 95),
    }


def first_token(
    workspace: Workspace, questions: list[str], vectors: list[Any], delay: float
) -> dict[str, Any]:
    """From the start of an ask to its first streamed delta, in ms."""
    firsts, wholes = [], []
    for question, vector in zip(questions, vectors, strict=True):
        started = time.perf_counter()
        plan = prepare_ask(workspace=workspace, question=question, query_vector=vector)
        first = None
        for name, _ in plan.events():
            if name == "delta" and first is None:
                first = (time.perf_counter() - started) * 1000
        wholes.append((time.perf_counter() - started) * 1000)
        firsts.append(first if first is not None else wholes[-1])
    return {
        "questions": len(questions),
        "llm_delay_ms": round(delay * 1000),
        "first_token_p50_ms": percentile(firsts, 50),
        "first_token_p95_ms": percentile(firsts, 95),
        "first_token_less_llm_delay_p50_ms": round(percentile(firsts, 50) - delay * 1000, 2),
        "first_token_less_llm_delay_p95_ms": round(percentile(firsts, 95) - delay * 1000, 2),
        "whole_answer_p50_ms": percentile(wholes, 50),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Ask benchmark; see bench/ask.py.")
    parser.add_argument("--chunks", type=int, default=100000)
    parser.add_argument("--entities", type=int, default=50000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--stream-questions", type=int, default=50)
    parser.add_argument("--llm-delay", type=float, default=0.2)
    parser.add_argument("--piece-delay", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--reuse", action="store_true")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    workspace = bench_workspace(
        chunks=args.chunks, entities=args.entities, seed=args.seed, reuse=args.reuse
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT embedding_model FROM ingest_chunk WHERE workspace_id = %s LIMIT 1",
            [workspace.pk],
        )
        row = cursor.fetchone()
    model = row[0] if row else RANDOM_MODEL
    queries = make_queries(workspace, args.questions, random.Random(args.seed))
    questions = [q for _, q in queries]
    vectors = query_vectors(queries, model)
    settings.LLM_BASE_URL = ""
    settings.LLM_MODEL = ""
    prepare_ask(workspace=workspace, question=questions[0], query_vector=vectors[0])  # warm
    print(json.dumps({"ask_without_llm": without_llm(workspace, questions, vectors)}), flush=True)
    server, base_url = start_llm(args.llm_delay, args.piece_delay)
    try:
        settings.LLM_BASE_URL = base_url
        settings.LLM_MODEL = "scripted-model"
        n = args.stream_questions
        row_out = first_token(workspace, questions[:n], vectors[:n], args.llm_delay)
        row_out["piece_delay_ms"] = round(args.piece_delay * 1000)
        print(json.dumps({"first_token": row_out}), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=10)
        close_retrieval_pool()
    if not args.keep:
        drop(workspace)
