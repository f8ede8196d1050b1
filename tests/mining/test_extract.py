import pytest

from ratio_bench.core.io import RejectLog
from ratio_bench.corpus.cleaning import Cleaner
from ratio_bench.corpus.dates import parse_date
from ratio_bench.corpus.records import Paper, Paragraph
from ratio_bench.corpus.sections import SectionCategory
from ratio_bench.lexicon import Lexicon
from ratio_bench.mining.extract import MiningCounts, PairMiner

Q = "Deep message passing makes all node features nearly identical."


@pytest.fixture(scope="module")
def lexicon():
    return Lexicon.load()


def mine(lexicon, *paragraphs, keep_case=False):
    paper = Paper(
        "p/1",
        "fixture",
        parse_date("2025-11"),
        [Paragraph(" ".join(s), "1 Introduction", SectionCategory.INTRODUCTION) for s in paragraphs],
        venue="V",
        source_file="f.parquet",
    )
    pairs, distractors, counts, rejects = [], [], MiningCounts(), RejectLog()
    PairMiner(lexicon, Cleaner(clause_markers=lexicon), keep_case=keep_case).mine_paper(
        paper, pairs, distractors, counts, rejects
    )
    return pairs, distractors, counts


def test_basic_tuple_with_provenance(lexicon):
    pairs, _, counts = mine(
        lexicon,
        [
            "Graph networks pass messages along the edges of a graph.",
            Q,
            "To address this issue, we add a gated residual connection.",
        ],
    )
    (row,) = pairs
    assert row["relation"] == "address" and row["marker"] == "to address this issue"
    assert row["query"] == Q.lower() and row["gold"] == "we add a gated residual connection."
    assert row["query_cased"] is None
    assert (row["paper_id"], row["sentence_index"], row["paragraph_index"]) == ("p/1", 1, 0)
    assert row["section_category"] == "introduction" and row["date_precision"] == "month"
    d = counts.as_dict()
    assert d["tuples"] == {"address": 1} and d["marker_kept"]["address"] == {"to address this issue": 1}


def test_casing_of_marker_and_kept_case(lexicon):
    pairs, _, _ = mine(
        lexicon, [Q, "FOR EXAMPLE, a node whose neighbours disagree keeps its features."], keep_case=True
    )
    assert pairs[0]["relation"] == "specify" and pairs[0]["marker"] == "for example"
    assert pairs[0]["gold_cased"] == "A node whose neighbours disagree keeps its features."
    assert pairs[0]["query_cased"] == Q


def test_marker_without_comma_does_not_fire(lexicon):
    pairs, distractors, counts = mine(
        lexicon, [Q, "For example a node whose neighbours disagree keeps its features."]
    )
    assert pairs == [] and distractors == [] and not counts.fired


def test_longest_marker_wins_over_its_prefix(lexicon):
    pairs, _, _ = mine(
        lexicon,
        [
            Q,
            "To address this, we add a gated residual connection to each layer.",
            "To address this issue, we also normalise the messages of every node.",
        ],
    )
    assert [p["marker"] for p in pairs] == ["to address this", "to address this issue"]


def test_short_gold_after_stripping_is_rejected(lexicon):
    pairs, _, counts = mine(lexicon, [Q, "To address this issue, we use a gate."])
    assert pairs == [] and counts.rejects == {"short_gold": 1}


def test_marker_at_paragraph_start_has_no_antecedent(lexicon):
    pairs, _, counts = mine(
        lexicon, ["To address this issue, we add a gated residual connection to each layer."]
    )
    assert pairs == [] and counts.rejects == {"marker_at_paragraph_start": 1}
    assert counts.fired["address", "to address this issue"] == 1


def test_antecedents_own_marker_is_stripped(lexicon):
    pairs, distractors, _ = mine(
        lexicon,
        [
            "However, deep message passing makes all node features nearly identical.",
            "To mitigate this problem, we add a gated residual connection to each layer.",
        ],
    )
    assert pairs[0]["query"] == Q.lower() and pairs[0]["query_clause"] == "however"
    # the antecedent's own sentence was introduced by a distractor marker: it also enters the pool
    assert [d["category"] for d in distractors] == ["explicit_contrast"]
    assert distractors[0]["text"] == Q.lower()


def test_gold_ordinal_prefix_is_cleaned(lexicon):
    pairs, _, _ = mine(
        lexicon, [Q, "For instance, second, a node with disagreeing neighbours keeps its features."]
    )
    assert pairs[0]["gold"] == "a node with disagreeing neighbours keeps its features."


def test_distractors_and_their_short_rejects(lexicon):
    _, distractors, counts = mine(
        lexicon,
        [Q, "Therefore, the gate is learned jointly with the rest of the model.", "Moreover, it is cheap."],
    )
    assert [(d["category"], d["marker"]) for d in distractors] == [("common_irrelevant", "therefore")]
    assert counts.rejects == {"short_distractor": 1} and counts.as_dict()["distractors"] == {
        "common_irrelevant": 1
    }


def test_consecutive_markers_chain(lexicon):
    pairs, _, _ = mine(
        lexicon,
        [
            Q,
            "For example, a node with disagreeing neighbours keeps its own features.",
            "More generally, any repeated averaging contracts the signal towards a constant.",
        ],
    )
    assert [(p["relation"], p["sentence_index"]) for p in pairs] == [("specify", 0), ("broaden", 1)]
    # the second pair's query is the first pair's gold sentence, with its own marker removed
    assert pairs[1]["query"] == "a node with disagreeing neighbours keeps its own features."
