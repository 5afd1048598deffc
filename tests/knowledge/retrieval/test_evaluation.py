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
    FULL_SUPPORT,
    RANKINGS,
    QuestionResult,
    best_single_signal,
    fusion_without_graph,
    paired_margins,
)
from knowledge.retrieval.evaluation import (
    PairedDifference,
    Question,
    QuestionFileError,
    Required,
    Scores,
    Support,
    documents_in_order,
    first_relevant_rank,
    full_support,
    load_questions,
    mean_scores,
    mean_support,
    ndcg_at,
    paired_difference,
    parse_question,
    partial_support,
    reciprocal_rank,
    relevance,
    requirements_met,
    score_ranking,
    score_support,
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


# --- multi-hop questions: full-support recall ------------------------------------------------

# Two required documents: the first matched by 101 alone, the second by 102 or 103 (an entry
# matching several documents, as a locator like "asyncio" would).
REQUIRED = [{101}, {102, 103}]


def test_full_support_needs_every_required_document_in_the_first_ten():
    both = [7, 103, 8, 101]
    assert requirements_met(both, REQUIRED) == 2
    assert score_support(both, REQUIRED) == Support(full_at_10=1.0, partial_at_10=1.0)
    # One of two: no full support, half the support.
    one = [101, 1, 2, 3, 4, 5, 6, 7, 8, 9, 102]  # 102 at rank 11
    assert requirements_met(one, REQUIRED) == 1
    assert score_support(one, REQUIRED) == Support(full_at_10=0.0, partial_at_10=0.5)
    assert score_support([1, 2], REQUIRED) == Support(0.0, 0.0)
    # Two documents matching the same entry meet it once.
    assert score_support([102, 103], REQUIRED) == Support(0.0, 0.5)
    # A required entry no document matches can never be met.
    unmet = score_support([101, 102], [{101}, {102}, set()])
    assert (unmet.full_at_10, unmet.partial_at_10) == (0.0, pytest.approx(2 / 3))


def test_hit_and_mrr_of_a_multi_hop_question_count_any_required_document():
    ranking = [1, 2, 102, 4, 101]
    relevant = set().union(*REQUIRED)
    scores = score_ranking(ranking, relevant)
    assert (scores.hit_at_1, scores.hit_at_5, scores.mrr_at_10) == (0.0, 1.0, pytest.approx(1 / 3))
    assert score_support(ranking, REQUIRED).full_at_10 == 1.0


def test_support_is_averaged_over_the_multi_hop_questions():
    assert (full_support(2, 2), full_support(1, 2), full_support(0, 0)) == (1.0, 0.0, 0.0)
    assert (partial_support(1, 4), partial_support(0, 0)) == (0.25, 0.0)
    supports = [Support(1.0, 1.0), Support(0.0, 0.5), Support(0.0, 0.0)]
    mean = mean_support(supports)
    assert (mean.full_at_10, mean.partial_at_10) == (pytest.approx(1 / 3), 0.5)
    assert mean_support([]) == Support(0.0, 0.0)
    assert Support(1 / 3, 0.5).as_dict() == {
        "full_support_recall_at_10": 0.3333,
        "partial_support_recall_at_10": 0.5,
    }


def test_full_support_is_compared_question_by_question_against_the_fusion_without_graph():
    vector, keyword, hybrid, graph1, graph2 = RANKINGS
    assert fusion_without_graph(RANKINGS) == hybrid
    assert fusion_without_graph([vector, keyword, graph1]) is None
    needs_two = (Required(("a.html",)), Required(snippets=("b",)))
    # Required documents found per ranking, per question (two needed each time).
    met = [
        {vector.label: 1, keyword.label: 2, hybrid.label: 1, graph1.label: 2, graph2.label: 2},
        {vector.label: 2, keyword.label: 0, hybrid.label: 1, graph1.label: 2, graph2.label: 1},
        {vector.label: 2, keyword.label: 1, hybrid.label: 2, graph1.label: 2, graph2.label: 1},
        {vector.label: 0, keyword.label: 0, hybrid.label: 1, graph1.label: 2, graph2.label: 2},
    ]
    results = [
        QuestionResult(Question(n, f"q{n}", (), (), needs_two), 2, {}, m)
        for n, m in enumerate(met, 1)
    ]
    assert [r.full_support(hybrid.label) for r in results] == [0.0, 0.0, 1.0, 0.0]
    margins = dict(paired_margins(results, RANKINGS, hybrid, figure=FULL_SUPPORT))
    assert list(margins) == [vector, keyword, graph1, graph2]
    # hops 1 has full support on all four, hybrid on one: three wins, one tie.
    graph = margins[graph1]
    assert (graph.wins, graph.ties, graph.losses) == (3, 1, 0)
    assert graph.mean == 0.75
    assert graph.ci_low > 0 and graph.clear
    # hops 2: a win (question 1), a tie, a loss (question 3), a win (question 4).
    assert (margins[graph2].wins, margins[graph2].ties, margins[graph2].losses) == (2, 1, 1)
    assert margins[graph2].mean == 0.25
    assert not margins[graph2].clear
    # A single-page question has no full support, whatever its ranks.
    single = QuestionResult(Question(9, "q", ("x",), ()), 1, {hybrid.label: 1})
    assert single.full_support(hybrid.label) == 0.0


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


def test_a_multi_hop_line_lists_every_required_document_each_matched_like_an_answer(tmp_path):
    path = tmp_path / "mixed.jsonl"
    lines = [
        {"question": "single", "answers": ["faq.html"]},
        {"question": "two pages", "requires": ["Page-A.html", "snippet:Grows  BLUE lichen",
                                               "page-a.html"]},
        {"question": "with answers too", "answers": ["overview"],
         "requires": ["a.html", "b.html"]},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    single, two_pages, with_answers = load_questions(path)
    assert (single.requires, single.multi_hop, single.kind) == ((), False, "single_page")
    assert (two_pages.multi_hop, two_pages.kind) == (True, "multi_hop")
    # The same entry twice is one required document.
    assert two_pages.requires == (
        Required(locators=("page-a.html",)),
        Required(snippets=("grows blue lichen",)),
    )
    assert [r.entry for r in two_pages.requires] == ["page-a.html", "snippet:grows blue lichen"]
    assert (two_pages.locators, two_pages.snippets) == ((), ())
    assert with_answers.locators == ("overview",)
    assert len(with_answers.requires) == 2


@pytest.mark.parametrize(
    ("requires", "message"),
    [
        ([], "requires must be a non-empty list of strings"),
        (["a.html", 2], "requires must be a non-empty list of strings"),
        ("a.html", "requires must be a non-empty list of strings"),
        (None, "requires must be a non-empty list of strings"),
        (["a.html", "snippet:  "], "requires has a blank entry"),
        (["a.html", "A.HTML "], "at least two different documents"),
    ],
)
def test_a_malformed_requires_is_refused_with_its_line(requires, message):
    with pytest.raises(QuestionFileError, match=message) as refused:
        parse_question({"question": "q", "answers": ["x"], "requires": requires}, 4, "q.jsonl")
    assert "q.jsonl:4" in str(refused.value)


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


@pytest.mark.slow(reason="setup: a workspace ingested with real embeddings")
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


MULTI_HOP_QUESTIONS = [
    {"question": "Which firm does Velmora count on?", "answers": ["snippet:relies on"]},
    # Needs both pages: LINK (Velmora relies on Tarrowind) and LICHEN (what Tarrowind
    # grows). Only LINK shares a word with the question: keyword search never brings LICHEN.
    {"question": QUESTION, "requires": ["link", "snippet:grows blue lichen"]},
    # A required page the workspace does not hold: never fully supported.
    {"question": "Who keeps Velmora's lighthouse?", "requires": ["link", "lighthouse.md"]},
]


@pytest.fixture
def multi_hop_questions(tmp_path):
    path = tmp_path / "multi.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in MULTI_HOP_QUESTIONS))
    return path


def test_eval_retrieval_scores_multi_hop_questions_by_full_support(
    alice, velmora, multi_hop_questions
):
    out, err = StringIO(), StringIO()
    call_command("eval_retrieval", str(multi_hop_questions), "--workspace", "acme", "--json",
                 stdout=out, stderr=err)  # fmt: skip
    body = json.loads(out.getvalue())
    assert (body["questions"], body["single_page_questions"], body["multi_hop_questions"]) == (
        3, 1, 2,
    )  # fmt: skip
    single, both, missing = body["per_question"]
    assert single["kind"] == "single_page" and "full_support_recall_at_10" not in single
    assert (both["kind"], both["required_documents"], both["relevant_documents"]) == (
        "multi_hop", 2, 2,
    )  # fmt: skip
    # Keyword search finds LINK only; the vector signal ranks all six documents, so both.
    assert both["required_found"]["keyword"] == 1
    assert both["full_support_recall_at_10"]["keyword"] == 0
    assert both["required_found"]["vector"] == 2
    assert both["full_support_recall_at_10"]["vector"] == 1
    assert set(missing["full_support_recall_at_10"].values()) == {0}
    assert "line 3: no document of the workspace matches required entry 'lighthouse.md'" in (
        err.getvalue()
    )

    # Beside hit@k and MRR, over the multi-hop questions; and each kind apart.
    rankings = {r["label"]: r for r in body["rankings"]}
    assert list(rankings) == LABELS
    assert (rankings["keyword"]["full_support_recall_at_10"], rankings["vector"]["full_support_recall_at_10"]) == (
        0.0, 0.5,
    )  # fmt: skip
    assert rankings["keyword"]["partial_support_recall_at_10"] == 0.5  # 1 of 2, twice
    assert rankings["vector"]["partial_support_recall_at_10"] == 0.75  # 2 of 2, 1 of 2
    kinds = body["by_kind"]
    assert [r["label"] for r in kinds["single_page"]] == LABELS
    single_keyword = kinds["single_page"][1]
    assert single_keyword["label"] == "keyword"
    assert (single_keyword["hit_at_1"], single_keyword["mrr_at_10"]) == (1.0, 1.0)
    assert "full_support_recall_at_10" not in single_keyword
    multi_vector = kinds["multi_hop"][0]
    assert (multi_vector["full_support_recall_at_10"], multi_vector["partial_support_recall_at_10"]) == (
        0.5, 0.75,
    )  # fmt: skip
    # LINK, relevant to both multi-hop questions, is keyword search's first document.
    assert kinds["multi_hop"][1]["hit_at_1"] == 1.0

    # Every ranking against hybrid on full support, multi-hop question by question.
    assert body["full_support_baseline"] == "hybrid"
    margins = {m["label"]: m for m in body["full_support_margins"]}
    assert list(margins) == [label for label in LABELS if label != "hybrid"]
    for label, margin in margins.items():
        assert margin["against"] == "hybrid"
        assert margin["wins"] + margin["ties"] + margin["losses"] == 2
        assert margin["mean_difference"] == pytest.approx(
            rankings[label]["full_support_recall_at_10"]
            - rankings["hybrid"]["full_support_recall_at_10"],
            abs=2e-4,
        )
    # The MRR margins stay over every question; each kind also has its own, against its
    # own best single signal.
    assert all(m["wins"] + m["ties"] + m["losses"] == 3 for m in body["margins"])
    for kind, count in (("single_page", 1), ("multi_hop", 2)):
        mrr = {r["label"]: r["mrr_at_10"] for r in kinds[kind]}
        best = max(("vector", "keyword"), key=lambda label: mrr[label])
        kind_margins = body["margins_by_kind"][kind]
        assert [m["label"] for m in kind_margins] == [label for label in LABELS if label != best]
        for margin in kind_margins:
            assert margin["against"] == best
            assert margin["wins"] + margin["ties"] + margin["losses"] == count
            assert margin["mean_difference"] == pytest.approx(
                mrr[margin["label"]] - mrr[best], abs=2e-4
            )

    # The table: support beside hit@k and MRR, the kinds apart, the support margins.
    text = StringIO()
    call_command("eval_retrieval", str(multi_hop_questions), "--workspace", "acme",
                 stdout=text, stderr=StringIO())  # fmt: skip
    lines = text.getvalue().splitlines()
    assert lines[0].startswith("3 question(s) (1 single-page, 2 multi-hop) on workspace acme")
    assert lines[1].split() == [
        "ranking", "hit@1", "hit@5", "MRR@10", "nDCG@10", "full@10", "part@10",
    ]  # fmt: skip
    assert lines[3].split()[-2:] == ["0.000", "0.500"]  # keyword
    alone = lines.index("1 single-page question(s) alone")
    assert lines[alone + 1].split() == ["ranking", "hit@1", "hit@5", "MRR@10", "nDCG@10"]
    assert lines[alone + 3].split() == ["keyword", "1.000", "1.000", "1.000", "1.000"]
    assert lines[alone + 7].startswith("against ")
    assert "(best single signal on these)" in lines[alone + 7]
    multi = lines.index("2 multi-hop question(s) alone")
    assert lines[multi + 1].split()[-2:] == ["full@10", "part@10"]
    assert lines[multi + 2].split()[-2:] == ["0.500", "0.750"]  # vector
    against = next(n for n, line in enumerate(lines) if line.startswith("against hybrid"))
    assert "full support per multi-hop question" in lines[against]
    assert lines[against + 1].split()[:3] == ["ranking", "full", "diff"]
    assert [line[:24].strip() for line in lines[against + 2 :]] == [
        label for label in LABELS if label != "hybrid"
    ]


def test_eval_retrieval_exits_2_naming_the_line_of_a_malformed_requires(alice, tmp_path):
    for requires, message in (
        ([], "requires must be a non-empty list of strings"),
        (["link", 7], "requires must be a non-empty list of strings"),
    ):
        path = tmp_path / "q.jsonl"
        path.write_text(
            json.dumps({"question": "q", "answers": ["x"]}) + "\n\n"
            + json.dumps({"question": "q2", "requires": requires}) + "\n"
        )  # fmt: skip
        with pytest.raises(CommandError, match=f"q.jsonl:3: {message}") as refused:
            call_command("eval_retrieval", str(path), "--workspace", "acme",
                         stdout=StringIO(), stderr=StringIO())  # fmt: skip
        assert refused.value.returncode == 2


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
