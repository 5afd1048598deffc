"""The retrieval quality harness: the metrics on rankings whose figures are worked out by
hand, the questions file, the rankings run through the real hybrid search with fewer
signals, and `manage.py eval_retrieval` on a small workspace ingested through the real
pipeline (extraction by the scripted server that "knows" the entities, so the graph signal
reads what ingestion wrote)."""

from __future__ import annotations

import json
import math
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from knowledge.retrieval import hybrid_search
from knowledge.retrieval.comparison import (
    RANKINGS,
    QuestionResult,
    best_single_signal,
    paired_margins,
)
from knowledge.retrieval.evaluation import (
    PairedDifference,
    Question,
    QuestionFileError,
    Scores,
    documents_in_order,
    first_relevant_rank,
    load_questions,
    mean_scores,
    ndcg_at,
    paired_difference,
    parse_question,
    reciprocal_rank,
    relevance,
    score_ranking,
)
from tests.knowledge.conftest import World
from workspaces.errors import InvalidInput

# --- metrics ------------------------------------------------------------------------------

RELEVANT = {101, 102}


def test_a_perfect_ranking_scores_one_everywhere():
    scores = score_ranking([101, 102, 7, 8, 9], RELEVANT)
    assert scores == Scores(hit_at_1=1.0, hit_at_5=1.0, mrr_at_10=1.0, ndcg_at_10=1.0)
    assert first_relevant_rank([101, 102, 7], RELEVANT) == 1


def test_a_wrong_ranking_scores_the_figures_worked_out_by_hand():
    # Relevant documents at ranks 3 and 10.
    ranking = [1, 2, 101, 4, 5, 6, 7, 8, 9, 102, 11]
    scores = score_ranking(ranking, RELEVANT)
    assert scores.hit_at_1 == 0.0
    assert scores.hit_at_5 == 1.0
    assert scores.mrr_at_10 == pytest.approx(1 / 3)
    # DCG = 1/log2(3+1) + 1/log2(10+1); ideal: both first, 1/log2(2) + 1/log2(3).
    assert scores.ndcg_at_10 == pytest.approx((0.5 + 1 / math.log2(11)) / (1 + 1 / math.log2(3)))
    assert scores.ndcg_at_10 == pytest.approx(0.48381, abs=1e-5)
    assert first_relevant_rank(ranking, RELEVANT) == 3


def test_what_comes_after_rank_ten_or_never_comes_scores_nothing():
    late = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 101]
    assert score_ranking(late, RELEVANT) == Scores(0.0, 0.0, 0.0, 0.0)
    assert first_relevant_rank(late, RELEVANT) is None
    assert score_ranking([1, 2], set()) == Scores(0.0, 0.0, 0.0, 0.0)
    # Relevance flags are cut at ten; the ideal counts at most ten relevant documents.
    assert relevance(late, RELEVANT) == [False] * 10
    assert ndcg_at([True] * 10, relevant_count=25) == pytest.approx(1.0)
    assert reciprocal_rank([False, False, False, True]) == 0.25


def test_a_hit_at_rank_two_to_five_counts_for_hit_at_5_only():
    scores = score_ranking([1, 2, 3, 4, 102], RELEVANT)
    assert (scores.hit_at_1, scores.hit_at_5) == (0.0, 1.0)
    assert scores.mrr_at_10 == pytest.approx(0.2)
    # One of two relevant documents, at rank 5: 1/log2(6) over 1 + 1/log2(3).
    assert scores.ndcg_at_10 == pytest.approx((1 / math.log2(6)) / (1 + 1 / math.log2(3)))


def test_several_chunks_of_one_document_count_once_at_the_rank_of_the_best():
    chunk_documents = [7, 7, 7, 101, 101, 8, 102]
    assert documents_in_order(chunk_documents) == [7, 101, 8, 102]
    scores = score_ranking(documents_in_order(chunk_documents), RELEVANT)
    assert scores.mrr_at_10 == pytest.approx(1 / 2)  # not 1/4: the chunks of 7 are one rank
    assert scores.ndcg_at_10 == pytest.approx(
        (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    )


def test_figures_are_averaged_over_the_questions():
    perfect = Scores(1.0, 1.0, 1.0, 1.0)
    wrong = Scores(0.0, 1.0, 0.25, 0.5)
    assert mean_scores([perfect, wrong]) == Scores(0.5, 1.0, 0.625, 0.75)
    assert mean_scores([]) == Scores(0.0, 0.0, 0.0, 0.0)


# --- paired comparison against the best single signal ---------------------------------------


def test_a_paired_difference_counts_wins_ties_losses_and_bootstraps_the_mean():
    # Reciprocal ranks of five questions: ranks 1, 2, 3, none, 1 against 2, 2, 1, none, none.
    ranking = [1, 1 / 2, 1 / 3, 0, 1]
    baseline = [1 / 2, 1 / 2, 1, 0, 0]
    difference = paired_difference(ranking, baseline)
    assert (difference.wins, difference.ties, difference.losses) == (2, 2, 1)
    assert difference.mean == pytest.approx((0.5 + 0 - 2 / 3 + 0 + 1) / 5)
    # 10,000 resamples from the fixed seed: the 2.5th and 97.5th percentiles of the means.
    assert difference.ci_low == pytest.approx(-0.3, abs=1e-12)
    assert difference.ci_high == pytest.approx(2 / 3, abs=1e-12)
    assert not difference.clear  # the interval holds 0
    assert paired_difference(ranking, baseline) == difference  # repeatable


def test_a_margin_is_clear_only_when_the_whole_interval_is_above_zero():
    always_better = paired_difference([1, 1, 1], [0.5, 0.5, 0.5])
    assert always_better == PairedDifference(0.5, 0.5, 0.5, wins=3, ties=0, losses=0)
    assert always_better.clear
    # As many wins as losses of the same size: the interval spans both ways.
    split = paired_difference([1, 0, 1, 0], [0, 1, 0, 1])
    assert (split.mean, split.ci_low, split.ci_high) == (0.0, -1.0, 1.0)
    assert not split.clear
    assert paired_difference([], []) == PairedDifference(0.0, 0.0, 0.0, 0, 0, 0)
    with pytest.raises(ValueError, match="same questions"):
        paired_difference([1.0], [])


def test_rankings_are_compared_question_by_question_with_the_best_single_signal():
    vector, keyword, hybrid, graph1, graph2 = RANKINGS
    ranks: list[dict[str, int | None]] = [  # first relevant rank per ranking, per question
        {vector.label: 1, keyword.label: None, hybrid.label: 1, graph1.label: 1, graph2.label: 2},
        {vector.label: 2, keyword.label: 1, hybrid.label: 1, graph1.label: 1, graph2.label: 2},
        {vector.label: 4, keyword.label: 3, hybrid.label: 2, graph1.label: 1, graph2.label: None},
    ]
    results = [
        QuestionResult(Question(n, f"q{n}", ("x",), ()), 1, r) for n, r in enumerate(ranks, 1)
    ]
    scored = [
        (vector, Scores(0, 0, (1 + 1 / 2 + 1 / 4) / 3, 0)),
        (keyword, Scores(0, 0, (0 + 1 + 1 / 3) / 3, 0)),
        (hybrid, Scores(0, 0, 0.9, 0)),  # not a single signal: never the baseline
    ]
    assert best_single_signal(scored) == vector
    assert best_single_signal([(hybrid, Scores(1, 1, 1, 1))]) is None

    margins = dict(paired_margins(results, RANKINGS, vector))
    assert list(margins) == [keyword, hybrid, graph1, graph2]
    hybrid_margin = margins[hybrid]  # + 1/2 and + 1/4 on two questions, a tie on one
    assert (hybrid_margin.wins, hybrid_margin.ties, hybrid_margin.losses) == (2, 1, 0)
    assert hybrid_margin.mean == pytest.approx((0 + 1 / 2 + 1 / 4) / 3)
    assert hybrid_margin.ci_low == 0.0  # resamples of the tie alone
    assert not hybrid_margin.clear
    graph2_margin = margins[graph2]  # - 1/2, 0, - 1/4
    assert (graph2_margin.wins, graph2_margin.ties, graph2_margin.losses) == (0, 1, 2)
    assert graph2_margin.mean == pytest.approx(-0.25)
    assert graph2_margin.ci_high == 0.0


# --- the questions file -------------------------------------------------------------------


def test_answers_are_path_substrings_or_snippets_compared_without_case_or_spacing(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(
        json.dumps({"question": " How? ", "answers": ["Library/ASYNCIO-task.html",
                    "snippet:Wrap  the\ncoro"], "snippets": ["  Run   Awaitables "]}) + "\n\n"
        + json.dumps({"question": "Why?", "answers": ["faq"], "extra": 1}) + "\n"
    )  # fmt: skip
    first, second = load_questions(path)
    assert (first.line, first.text) == (1, "How?")
    assert first.locators == ("library/asyncio-task.html",)
    assert first.snippets == ("run awaitables", "wrap the coro")
    assert (second.line, second.locators, second.snippets) == (3, ("faq",), ())


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (["a list"], "expected an object"),
        ({"answers": ["x"]}, "question must be"),
        ({"question": "q", "answers": "x"}, "lists of strings"),
        ({"question": "q", "answers": [1]}, "lists of strings"),
        ({"question": "q", "answers": ["snippet:  "]}, "at least one"),
        ({"question": "q"}, "at least one"),
    ],
)
def test_a_question_without_a_usable_answer_is_refused_with_its_line(raw, message):
    with pytest.raises(QuestionFileError, match=message) as refused:
        parse_question(raw, 7, "q.jsonl")
    assert "q.jsonl:7" in str(refused.value)


# --- the rankings: the real search with fewer signals -------------------------------------

LINK = "Velmora relies on Tarrowind for every release."
# About Tarrowind only, which the graph relates to Velmora; no word in common with the query.
LICHEN = "Tarrowind grows blue lichen on the western cliffs each spring."
DISTRACTORS = [
    "The workshop assembles engines and turbines for river barges.",
    "Their company manufactures cranes, bridges and steel frames.",
    "Carpenters construct cabins from pine logs and stone.",
    "The plant turns out machines that build other machines.",
]
QUESTION = "What does Velmora produce?"


@pytest.fixture
def velmora(llm, ingest_text):
    """Velmora -related_to- Tarrowind (from LINK), LICHEN about Tarrowind, distractors."""
    world = World(
        entities={"Velmora": "organization", "Tarrowind": "organization"},
        relations=[("Velmora", "Tarrowind", "related_to")],
    )
    llm.responder = world
    ingest_text(LINK, title="link")
    ingest_text(LICHEN, title="lichen")
    for n, text in enumerate(DISTRACTORS):
        ingest_text(text, title=f"distractor {n}")
    return world


def test_a_search_can_be_asked_for_some_chunk_signals_only(alice, velmora):
    keyword = hybrid_search(workspace=alice.workspace, query=QUESTION, signals=["keyword"])
    assert [c.text for c in keyword.chunks] == [LINK]  # the only chunk naming Velmora
    assert keyword.signals_used == ["keyword", "recognition"]
    assert keyword.chunks[0].signals.vector is None

    vector = hybrid_search(workspace=alice.workspace, query=QUESTION, signals=["vector"])
    assert len(vector.chunks) == 2 + len(DISTRACTORS)
    assert all(c.signals.keyword is None and c.signals.graph is None for c in vector.chunks)
    assert "graph" not in vector.signals_used and "keyword" not in vector.signals_used

    everything = hybrid_search(workspace=alice.workspace, query=QUESTION, hops=1)
    lichen = next(c for c in everything.chunks if c.text == LICHEN)
    assert lichen.signals.graph is not None
    assert [c.id for c in everything.chunks] != [c.id for c in vector.chunks]

    for wrong in ([], ["bogus"], ["vector", "entity_vector"]):
        with pytest.raises(InvalidInput, match="signals"):
            hybrid_search(workspace=alice.workspace, query=QUESTION, signals=wrong)


# --- the command --------------------------------------------------------------------------

LABELS = ["vector", "keyword", "hybrid", "hybrid+graph (hops 1)", "hybrid+graph (hops 2)"]


@pytest.fixture
def questions(tmp_path):
    path = tmp_path / "questions.jsonl"
    lines = [
        {"question": QUESTION, "answers": ["lichen"]},
        {"question": "Which firm does Velmora count on?", "answers": ["snippet:RELIES on  Tarrowind"]},
        {"question": "Who repaired the lighthouse?", "answers": ["lighthouse.md"]},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_eval_retrieval_scores_the_five_rankings_in_one_run(alice, velmora, questions):
    out, err = StringIO(), StringIO()
    call_command("eval_retrieval", str(questions), "--workspace", "acme", "--json",
                 stdout=out, stderr=err)  # fmt: skip
    body = json.loads(out.getvalue())
    assert (body["workspace"], body["questions"], body["cutoff"]) == ("acme", 3, 10)
    assert body["relevance"] == "document"
    rankings = {r["label"]: r for r in body["rankings"]}
    assert list(rankings) == LABELS
    assert [(r["signals"], r["hops"]) for r in body["rankings"]] == [
        (["vector"], 0), (["keyword"], 0), (["vector", "keyword"], 0),
        (["vector", "keyword", "graph"], 1), (["vector", "keyword", "graph"], 2),
    ]  # fmt: skip

    lichen, link, nowhere = body["per_question"]
    assert (lichen["relevant_documents"], link["relevant_documents"]) == (1, 1)
    # Nothing in LICHEN shares a word with the question: keyword search never finds it;
    # the graph (Velmora -> Tarrowind, mentioned in LICHEN) lifts it above the fusion
    # without the graph.
    ranks = lichen["first_relevant_rank"]
    assert ranks["keyword"] is None
    assert ranks["vector"] is not None
    assert ranks["hybrid+graph (hops 1)"] < ranks["hybrid"]
    assert link["first_relevant_rank"]["keyword"] == 1  # the snippet, any case and spacing
    assert nowhere["relevant_documents"] == 0
    assert set(nowhere["first_relevant_rank"].values()) == {None}
    assert "line 3: no document of the workspace matches its answers" in err.getvalue()

    # keyword: a hit at rank 1 for one question of three, nothing for the others.
    keyword = rankings["keyword"]
    assert (keyword["hit_at_1"], keyword["mrr_at_10"]) == (0.3333, 0.3333)
    assert keyword["ndcg_at_10"] == 0.3333
    # Each ranking against the best single signal, question by question.
    best = max(("vector", "keyword"), key=lambda label: rankings[label]["mrr_at_10"])
    assert body["best_single_signal"] == best
    assert body["bootstrap"] == {"resamples": 10000, "seed": 16, "confidence": 0.95}
    margins = {m["label"]: m for m in body["margins"]}
    assert list(margins) == [label for label in LABELS if label != best]
    for label, margin in margins.items():
        assert margin["against"] == best
        assert margin["wins"] + margin["ties"] + margin["losses"] == 3
        assert margin["ci_low"] <= margin["mean_difference"] <= margin["ci_high"]
        assert margin["clear"] is (margin["ci_low"] > 0)
        assert margin["mean_difference"] == pytest.approx(
            rankings[label]["mrr_at_10"] - rankings[best]["mrr_at_10"], abs=2e-4
        )

    graph = rankings["hybrid+graph (hops 1)"]
    expected_mrr = (1 / ranks["hybrid+graph (hops 1)"] + 1 / link["first_relevant_rank"][
        "hybrid+graph (hops 1)"]) / 3  # fmt: skip
    assert graph["mrr_at_10"] == round(expected_mrr, 4)


def test_eval_retrieval_prints_a_table_of_the_five_rankings(alice, velmora, questions):
    out = StringIO()
    call_command("eval_retrieval", str(questions), "--workspace", "acme", stdout=out,
                 stderr=StringIO())  # fmt: skip
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("3 question(s) on workspace acme: documents ranked by their best")
    assert lines[1].split() == ["ranking", "hit@1", "hit@5", "MRR@10", "nDCG@10"]
    assert [line[:24].strip() for line in lines[2:7]] == LABELS
    keyword_row = lines[3].split()
    assert keyword_row == ["keyword", "0.333", "0.333", "0.333", "0.333"]
    # Then the margins over the best single signal, one row per other ranking.
    best = "vector" if float(lines[2].split()[3]) >= 0.333 else "keyword"
    assert lines[7].startswith(f"against {best} (best single signal)")
    assert "paired bootstrap 95% CI (10000 resamples)" in lines[7]
    assert lines[8].split() == [
        "ranking",
        "MRR",
        "diff",
        "CI",
        "low",
        "CI",
        "high",
        "w/t/l",
        "clear",
    ]
    rows = [line.split() for line in lines[9:]]
    assert [line[:24].strip() for line in lines[9:]] == [x for x in LABELS if x != best]
    for row in rows:
        wins, ties, losses = (int(n) for n in row[-2].split("/"))
        assert wins + ties + losses == 3
        assert row[-1] in {"yes", "no"}


def test_eval_retrieval_exits_2_on_an_unknown_workspace_or_an_unusable_file(alice, tmp_path):
    good = tmp_path / "q.jsonl"
    good.write_text(json.dumps({"question": "q", "answers": ["x"]}) + "\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "q", "answers": ["x"]}) + "\n{not json\n")
    for args, message in (
        ([str(good), "--workspace", "nope"], "Workspace 'nope' not found."),
        ([str(tmp_path / "missing.jsonl"), "--workspace", "acme"], "Cannot read"),
        ([str(bad), "--workspace", "acme"], "bad.jsonl:2: not JSON"),
    ):
        with pytest.raises(CommandError, match=message) as refused:
            call_command("eval_retrieval", *args, stdout=StringIO(), stderr=StringIO())
        assert refused.value.returncode == 2
