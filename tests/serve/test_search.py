import pytest

from ratio_bench.serve.search import MAX_QUERY_CHARS, QueryError, check_query


def test_results_are_ranked_per_move_with_provenance_and_links(searcher):
    results = searcher.search("dense retrievers miss rare technical terms", k=3)
    assert list(results) == ["address", "broaden", "specify"]
    hits = results["address"]
    assert [h["rank"] for h in hits] == [1, 2, 3]
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    top = hits[0]
    assert top["text"] == "Dense retrievers miss rare technical terms in scientific queries."
    assert (top["paper_id"], top["title"], top["venue"]) == (
        "arxiv/2503.01234",
        "Sparse channels for dense retrieval",
        "arXiv",
    )
    assert top["url"] == "https://arxiv.org/abs/2503.01234"


def test_a_subset_of_moves_and_k(searcher):
    results = searcher.search("federated gradient leakage", moves=["specify", "specify"], k=1)
    assert list(results) == ["specify"] and len(results["specify"]) == 1
    assert results["specify"][0]["paper_id"] == "iclr26/AbCdEfGh12"
    assert len(searcher.search("oversmoothing graph", k=100)["broaden"]) == 8  # k above the corpus size


@pytest.mark.parametrize(
    ("text", "moves", "k", "field"),
    [
        ("", None, 10, "text"),
        ("  \n ", None, 10, "text"),
        ("x" * (MAX_QUERY_CHARS + 1), None, 10, "text"),
        ("fine", None, 0, "k"),
        ("fine", None, 101, "k"),
        ("fine", ["address", "expand"], 10, "moves"),
    ],
)
def test_bad_queries_name_their_field(text, moves, k, field):
    with pytest.raises(QueryError) as e:
        check_query(text, moves, k, ["address", "broaden", "specify"])
    assert e.value.field == field
