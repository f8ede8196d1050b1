import json

import pytest

from ratio_bench.cli import main
from ratio_bench.core.errors import RatioError
from ratio_bench.dataset.release import NotAReleaseError
from ratio_bench.evaluation.scoring.evaluate import load_split, score
from ratio_bench.evaluation.scoring.results import SubmissionError, validate_submission
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import ModelUnavailableError, resolve


def test_bm25_scores_the_small_release(small_release):
    data = load_split(small_release, "test")
    result = score(resolve("bm25"), data)
    assert set(result.metrics) == {"address"} and result.n_queries["address"] == 2
    assert 0 < result.metrics["address"]["mrr_at_10"] <= 1


def test_dense_scoring_encodes_the_corpus_once_and_caches_it(small_release, tmp_path):
    pytest.importorskip("sentence_transformers")
    try:
        setup = resolve("all-MiniLM-L6-v2")
    except ModelUnavailableError as e:
        pytest.skip(str(e))
    data = load_split(small_release, "train")  # address 1, specify 2: two relations share one corpus
    cache = EmbeddingCache(tmp_path / "cache")
    first = score(setup, data, cache=cache)
    assert first.encode_calls == 1 + 2 and first.cache_hits == 0  # corpus once, then one call per relation
    second = score(setup, data, cache=EmbeddingCache(tmp_path / "cache"))
    assert second.encode_calls == 0 and second.cache_hits == 3
    assert second.metrics == first.metrics
    # the gold of a query is the candidate that shares its subject: a real model finds it
    assert first.metrics["specify"]["recall_at_1"] == 1.0


@pytest.mark.parametrize("reuse", [False, True])
def test_mteb_path_agrees(small_release, reuse, monkeypatch, tmp_path):
    pytest.importorskip("mteb")
    from sentence_transformers import SentenceTransformer

    from ratio_bench.evaluation.scoring.mteb_tasks import score_with_mteb

    monkeypatch.setenv("RATIO_CACHE", str(tmp_path))
    setup = resolve("all-MiniLM-L6-v2:generic")
    ours = score(setup, load_split(small_release, "test", ["address"]), cache=EmbeddingCache(tmp_path / "c"))
    if reuse:  # mteb must be served ratio's cached vectors: the model's own encoders may not run

        def refuse(*args, **kwargs):
            raise AssertionError("mteb encoded although the vectors were cached")

        monkeypatch.setattr(SentenceTransformer, "encode_query", refuse)
        monkeypatch.setattr(SentenceTransformer, "encode_document", refuse)
    cache = EmbeddingCache(tmp_path / "c")
    theirs = score_with_mteb(setup, small_release, "test", ["address"], reuse_embeddings=reuse, cache=cache)
    # mteb's encoder is answered from the cache ratio filled (keys: model, prompt, text): nothing encoded again
    assert (theirs.cache_hits, theirs.encode_calls) == ((4, 0) if reuse else (2, 0))
    for k in ("recall_at_1", "recall_at_10", "mrr_at_10", "mrr_at_100", "ndcg_at_10", "map_at_10"):
        assert abs(ours.metrics["address"][k] - theirs.metrics["address"][k]) < 1e-4, k


def test_mteb_encodes_the_shared_corpus_once_for_all_three_tasks(small_release, monkeypatch, tmp_path):
    """mteb runs each relation as its own task; through the cached encoder the corpus they share is encoded once."""
    pytest.importorskip("mteb")
    from sentence_transformers import SentenceTransformer

    from ratio_bench.evaluation.scoring.mteb_tasks import score_with_mteb

    encoded: list[str] = []
    real = SentenceTransformer.encode

    def counting(self, sentences, *args, **kwargs):
        encoded.extend([sentences] if isinstance(sentences, str) else sentences)
        return real(self, sentences, *args, **kwargs)

    monkeypatch.setattr(SentenceTransformer, "encode", counting)
    data = load_split(small_release, "train")  # address and specify have queries: two tasks share the corpus
    setup = resolve("all-MiniLM-L6-v2")
    cache = EmbeddingCache(tmp_path / "c", progress=False)
    result = score_with_mteb(setup, small_release, "train", ["address", "specify"], cache=cache)
    assert set(result.metrics) == {"address", "specify"}
    queries = [t for q in data.queries.values() for t in q.texts]
    assert sorted(encoded) == sorted(set(data.corpus_texts) | set(queries))  # each text once
    again = score_with_mteb(setup, small_release, "train", ["address", "specify"], cache=cache)
    assert again.encode_calls == 0 and again.metrics == result.metrics


def test_mteb_on_the_mini_split_names_the_relation_not_the_task(small_release, tmp_path):
    """A mini task (``RatioAddressMini``) scores the relation ``address`` on the split ``mini``: the result, its
    entry and what is printed say ``address``, never ``addressmini``."""
    pytest.importorskip("mteb")
    from ratio_bench.evaluation.scoring.mteb_tasks import relation_of_task, score_with_mteb

    assert [relation_of_task(n) for n in ("RatioAddress", "RatioBroadenMini", "RatioSpecifyLatest")] == [
        "address",
        "broaden",
        "specify",
    ]
    cache = EmbeddingCache(tmp_path / "c", progress=False)
    result = score_with_mteb(resolve("all-MiniLM-L6-v2"), small_release, "mini", ["address"], cache=cache)
    assert set(result.metrics) == {"address"} and result.n_queries["address"] > 0


def test_a_folder_that_is_no_release_is_refused(tmp_path):
    with pytest.raises(NotAReleaseError, match="not a Ratio release"):
        load_split(tmp_path, "test")


def test_score_cli_writes_valid_results_and_leaderboard_renders(small_release, tmp_path, capsys):
    out = tmp_path / "res" / "bm25.json"
    assert (
        main(
            [
                "score",
                "--model",
                "bm25",
                "--dataset",
                str(small_release),
                "--split",
                "test",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    entry = json.loads(out.read_text())
    validate_submission(entry)
    assert (out.with_suffix("") / "mteb" / "RatioAddress.json").exists()
    assert len(entry["per_query"]["address"]["gold_rank"]) == entry["n_queries"]["address"] == 2
    printed = " ".join(capsys.readouterr().out.split())
    assert "bm25:unigram" in printed and "95% bootstrap CI over queries, 1,000 resamples, seed 0" in printed
    md, png = tmp_path / "board.md", tmp_path / "board.png"
    assert main(["leaderboard", str(tmp_path / "res"), "--markdown", str(md), "--plot", str(png)]) == 0
    assert "| 1 | bm25\\:unigram | test |" in md.read_text()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda e: e.update(model="x; rm -rf /"), "model"),
        (lambda e: e["results"]["address"].update(mrr_at_10=1.5), "results/address/mrr_at_10"),
        (lambda e: e.update(extra="field"), "Additional properties"),
        (lambda e: e["results"].update(translate={"recall_at_1": 0.1}), "results"),
    ],
)
def test_untrusted_submissions_are_validated(mutate, message):
    entry = {
        "schema_version": 1,
        "model": "m:none",
        "split": "test",
        "main_score": "mrr_at_10",
        "dataset": {"name": "ratio", "version": "1", "manifest_sha256": "0" * 64},
        "results": {
            "address": {"recall_at_1": 0.1, "recall_at_10": 0.2, "mrr_at_10": 0.15, "mrr_at_100": 0.16}
        },
    }
    validate_submission(entry)
    mutate(entry)
    with pytest.raises(SubmissionError, match=message):
        validate_submission(entry)


def test_oracle_pools_and_overlap(small_release, tmp_path, capsys):
    from ratio_bench.evaluation.analysis import analyses

    data = load_split(small_release, "train")
    pools = analyses.relation_pools(data)
    roles = dict(zip(data.corpus_ids, data.corpus_roles, strict=True))
    assert {roles[data.corpus_ids[i]] for i in pools["specify"]} == {"specify"}
    full, oracle = analyses.oracle_filtering(resolve("bm25"), data)
    # a pool holding only the relation's golds can only make the gold easier to find
    for rel in oracle.metrics:
        assert oracle.metrics[rel]["mrr_at_10"] >= full.metrics[rel]["mrr_at_10"]
    result = score(resolve("bm25"), data, keep_runs=True)
    stats = analyses.lexical_overlap(result.runs["specify"], data, "specify", k=2)
    assert stats["queries"] == 2 and 0 <= stats["jaccard_gold"] <= 1
    assert analyses.jaccard({"a", "b"}, {"b", "c"}) == 1 / 3
    assert (
        main(
            [
                "analyze",
                "overlap",
                "--model",
                "bm25",
                "--dataset",
                str(small_release),
                "--split",
                "train",
                "--relations",
                "specify",
                "--out",
                str(tmp_path / "o.json"),
            ]
        )
        == 0
    )
    assert "Lexical overlap" in capsys.readouterr().out


def test_analyze_out_replaces_its_own_report_but_no_other_file(small_release, tmp_path):
    from tests.helpers.cli import assert_user_error, run_ratio

    out = tmp_path / "o.json"
    argv = ["analyze", "overlap", "--model", "bm25", "--dataset", small_release, "--split", "train"]
    assert run_ratio(*argv, "--out", out).code == 0 and run_ratio(*argv, "--out", out).code == 0
    assert json.loads(out.read_text())["ratio_analysis"] == "overlap"
    theirs = tmp_path / "settings.json"
    theirs.write_text('{"theme": "dark"}', encoding="utf-8")
    assert_user_error(run_ratio(*argv, "--out", theirs), "--out", "settings.json", "nothing was overwritten")
    assert theirs.read_text() == '{"theme": "dark"}'


def test_score_out_without_json_is_refused_before_scoring_and_writes_nothing(small_release, tmp_path, capsys):
    """``--out NAME`` would put the entry at NAME and its MTEB results in NAME/mteb/: refused up front, one line
    naming the flag and the fix, exit 2 (a flag's misuse), and nothing is written."""
    out = tmp_path / "mini-run"
    assert (
        main(["score", "--model", "bm25", "--dataset", str(small_release), "--out", str(out)]) == 2
    )  # a usage error
    err = capsys.readouterr().err
    assert f"error: --out {out}: name the entry's .json file (e.g. --out {out}.json)" in err
    assert "Traceback" not in err and not out.exists() and list(tmp_path.iterdir()) == []


def test_score_out_replaces_its_own_results_but_no_other_json(small_release, tmp_path, capsys):
    out = tmp_path / "bm25.json"
    argv = ["score", "--model", "bm25", "--dataset", str(small_release), "--out", str(out)]
    assert main(argv) == 0 and main(argv) == 0  # an entry of ours is rewritten
    task = out.with_suffix("") / "mteb" / "RatioAddress.json"
    for path, text in ((out, '{"editor": {"tabs": 4}}'), (task, "[1, 2]")):
        keep = path.read_text()
        path.write_text(text, encoding="utf-8")
        with pytest.raises(RatioError, match=f"^{path}: exists and is not a Ratio results file.*another"):
            main([*argv, "--debug"])
        if path == out:  # the command line names the option that gave the path
            assert main(argv) == 1
            assert f"error: --out {path}: exists and is not a Ratio results file" in capsys.readouterr().err
        assert path.read_text() == text
        path.write_text(keep, encoding="utf-8")


def test_sample_draws_seeded_queries_per_relation_and_keeps_the_pool_whole(small_release):
    from ratio_bench.evaluation.scoring.evaluate import sample_queries

    data = load_split(small_release, "train")  # address 1, specify 2
    one = sample_queries(data, 1, seed=5)
    assert {r: len(q.ids) for r, q in one.queries.items()} == {"address": 1, "broaden": 0, "specify": 1}
    assert one.corpus_ids == data.corpus_ids  # the candidate pool stays whole
    assert one.queries["specify"].ids[0] in data.queries["specify"].ids
    assert sample_queries(data, 1, seed=5) == one  # seeded
    alone = sample_queries(load_split(small_release, "train", ["specify"]), 1, seed=5)
    assert alone.queries["specify"] == one.queries["specify"]  # a relation's draw ignores the others
    drawn = {sample_queries(data, 1, seed=s).queries["specify"].ids[0] for s in range(8)}
    assert drawn == set(data.queries["specify"].ids)  # the seed matters


def test_score_sample_is_recorded_printed_and_never_ranked(small_release, tmp_path, capsys):
    out = tmp_path / "res" / "bm25-sample.json"
    args = ["score", "--model", "bm25", "--dataset", str(small_release), "--split", "train"]
    assert main([*args, "--sample", "1", "--seed", "3", "--out", str(out)]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert (
        f"wrote {out}" in printed
        and "SAMPLE of 1 queries per relation (broaden: only 0) (seed 3; not a full result)" in printed
    )
    entry = json.loads(out.read_text())
    assert entry["sample"] == {"queries_per_relation": 1, "seed": 3}
    assert entry["n_queries"] == {"address": 1, "broaden": 0, "specify": 1}
    with pytest.raises(SubmissionError, match=r"a sample of 1 queries per relation .* never ranked"):
        validate_submission(entry)
    assert main(["leaderboard", str(tmp_path / "res")]) == 0
    assert "never ranked" in " ".join(capsys.readouterr().out.split())  # listed among the rejected files
    assert main([*args, "--sample", "0"]) == 2


def test_score_training_cutoff_is_recorded_over_the_registrys_and_says_what_it_replaced(
    small_release, tmp_path
):
    out = tmp_path / "bm25.json"
    argv = ["score", "--model", "bm25", "--dataset", str(small_release), "--out", str(out)]
    assert main([*argv, "--training-cutoff", "2020-01-31"]) == 0
    entry = json.loads(out.read_text())
    validate_submission(entry)
    assert entry["training_data_cutoff"] == "2020-01-31"
    assert entry["training_data_cutoff_source"] == (
        "stated by the scorer (ratio score --training-cutoff); replaces none (no training data (lexical))"
    )
    assert main(argv) == 0  # without the flag: the registry's
    assert json.loads(out.read_text())["training_data_cutoff_source"] == "no training data (lexical)"


def test_score_sample_says_the_true_count_of_a_relation_that_has_fewer(small_release, capsys):
    data = load_split(small_release, "train", ["address", "specify"])
    counts = {rel: len(q.ids) for rel, q in data.queries.items()}
    args = ["score", "--model", "bm25", "--dataset", str(small_release), "--split", "train"]
    assert main([*args, "--relations", "address", "specify", "--sample", "1000"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    said = ", ".join(f"{rel}: only {n}" for rel, n in counts.items())
    assert f"SAMPLE of 1000 queries per relation ({said}) (seed 0; not a full result)" in printed


def test_analyze_mined_role_reports_the_share_of_the_top_k_mined_as_the_move(small_release, tmp_path, capsys):
    from tests.helpers.cli import assert_user_error, run_ratio

    data = load_split(small_release, "train")
    result = score(resolve("bm25"), data, keep_runs=True)
    roles = dict(zip(data.corpus_ids, data.corpus_roles, strict=True))
    out = tmp_path / "m.json"
    argv = ["analyze", "mined-role", "--model", "bm25", "--dataset", str(small_release), "--split", "train"]
    assert main([*argv, "--k", "2", "--out", str(out)]) == 0
    assert "Mined-role precision@2" in capsys.readouterr().out
    report = json.loads(out.read_text())["bm25:unigram"]
    for rel, run in result.runs.items():
        shares = [sum(roles[c] == rel for c in ranked[:2]) / 2 for ranked in run.values()]
        assert report[rel]["precision"] == pytest.approx(sum(shares) / len(shares))
        assert report[rel]["queries"] == len(run) and report[rel]["low"] <= report[rel]["high"]
    assert_user_error(run_ratio(*argv, "--k", "0"), "--k", code=2)
