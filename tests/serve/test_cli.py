import json

import pytest
from tests.helpers.cli import assert_user_error, run_ratio

from ratio_bench.serve.commands import board_folder


def test_index_search_round_trip(library, tmp_path):
    out = tmp_path / "idx"
    built = run_ratio("index", "--corpus", library, "--model", "bm25", "--out", out)
    assert built.code == 0, built.err
    assert "8 candidates" in built.out and "sentences_under_35_chars: 1" in built.out
    assert f"next: ratio search 'a problem sentence' --index {out}" in " ".join(built.out.split())
    found = run_ratio("search", "private gradient updates", "--index", out, "--k", "2", "--json")
    assert found.code == 0, found.err
    body = json.loads(found.out)
    assert set(body["results"]) == {"address", "broaden", "specify"}
    assert body["results"]["address"][0]["paper_id"] == "iclr26/AbCdEfGh12"
    assert "topical, not move-specific" in body["notice"]  # BM25 for every move
    table = run_ratio("search", "private gradient updates", "--index", out, "--moves", "broaden")
    assert table.code == 0 and "Broaden (bm25:unigram)" in table.out and "Address" not in table.out
    assert "Private federated updates" in table.out  # the paper's title, as the index has it
    assert "Not move-aware: one model and one prompt for every move" in " ".join(table.out.split())


@pytest.mark.parametrize(
    ("args", "culprits", "code"),
    [
        (["--model", "expand=bm25"], ["--model", "expand"], 2),
        (["--model", "no-such-model"], ["no-such-model"], 1),
    ],
)
def test_index_refuses_bad_models(library, tmp_path, args, culprits, code):
    assert_user_error(
        run_ratio("index", "--corpus", library, "--out", tmp_path / "i", *args), *culprits, code=code
    )


def test_index_refuses_a_folder_of_the_users(library, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    run = run_ratio("index", "--corpus", library, "--model", "bm25", "--out", tmp_path)
    assert_user_error(run, "--out", str(tmp_path), "not a Ratio index")
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_index_needs_one_source(library, tmp_path, small_release):
    run = run_ratio("index", "--model", "bm25", "--out", tmp_path / "i")
    assert_user_error(run, "--dataset", "--corpus", code=2)
    run = run_ratio(
        "index", "--dataset", small_release, "--corpus", library, "--model", "bm25", "--out", tmp_path
    )
    assert_user_error(run, "--dataset", "--corpus", code=2)


def test_search_errors_name_the_flag(bm25_index):
    assert_user_error(run_ratio("search", "  ", "--index", bm25_index), "TEXT", "empty", code=2)
    assert_user_error(run_ratio("search", "ok", "--index", bm25_index, "--k", "0"), "--k", code=2)
    assert_user_error(
        run_ratio("search", "ok", "--index", bm25_index, "--moves", "expand"), "--moves", code=2
    )


def test_serve_refuses_to_start_without_an_index(tmp_path):
    line = assert_user_error(run_ratio("serve", "--index", tmp_path / "missing"), "--index", "not found")
    assert len(line.replace(str(tmp_path), "")) < 200  # short, whatever the length of the path it names
    (tmp_path / "stuff").mkdir()
    assert_user_error(run_ratio("serve", "--index", tmp_path / "stuff"), "--index", "not a Ratio index")
    assert_user_error(
        run_ratio("serve", "--index", tmp_path / "stuff", "--docs-assets", tmp_path),
        "--docs-assets",
        "swagger",
    )


def test_serve_refuses_a_taken_port_in_one_line(bm25_index):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        assert_user_error(run_ratio("serve", "--index", bm25_index, "--port", port), "--port", port)


def test_corpus_meta_goes_with_a_release_and_its_titles_reach_the_api(library, tmp_path, small_release):
    run = run_ratio(
        "index", "--corpus", library, "--corpus-meta", library, "--model", "bm25", "--out", tmp_path
    )
    assert_user_error(run, "--corpus-meta", "--dataset", code=2)
    out = tmp_path / "idx"
    meta = small_release.parent / "corpus"
    built = run_ratio(
        "index", "--dataset", small_release, "--corpus-meta", meta, "--model", "bm25", "--out", out
    )
    assert built.code == 0, built.err
    assert "papers_without_title: 0" in built.out
    found = run_ratio("search", "gated residual message passing", "--index", out, "--k", "3", "--json")
    assert found.code == 0, found.err
    assert all(h["title"] for hits in json.loads(found.out)["results"].values() for h in hits)


def test_serve_shows_the_checkouts_board_by_default_or_says_how(tmp_path):
    assert board_folder(None, tmp_path) == (
        None,
        "no leaderboard: no eval/results here; give --results DIR to serve one at /leaderboard",
    )
    (tmp_path / "eval" / "results").mkdir(parents=True)
    (tmp_path / "eval" / "results" / "a.json").write_text("{}")
    folder, note = board_folder(None, tmp_path)
    assert folder == tmp_path / "eval" / "results" and "--results DIR for another folder" in note
    assert board_folder(tmp_path, tmp_path)[0] == tmp_path  # --results wins


def test_serve_refuses_a_trust_proxy_that_is_no_address():
    """``--trust-proxy '*'`` would let every peer name its own address (issue 43's per-client bypass)."""
    for bad in ("*", "proxy.example"):
        assert_user_error(
            run_ratio("serve", "--trust-proxy", bad), f"--trust-proxy {bad!r}", "IP address", code=2
        )
