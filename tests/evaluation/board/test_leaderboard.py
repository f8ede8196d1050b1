"""The leaderboard on untrusted result files: escaping, strict numbers, one table per release build, bad files."""

from __future__ import annotations

import base64
import itertools
import json
from datetime import date
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from tests.helpers.cli import assert_user_error, run_ratio

from ratio_bench.evaluation.board.leaderboard import load_board, read_entry
from ratio_bench.evaluation.board.render.html import leaderboard_html
from ratio_bench.evaluation.board.render.markdown import leaderboard_markdown
from ratio_bench.evaluation.board.render.page_assets import CONTENT_SECURITY_POLICY
from ratio_bench.evaluation.scoring.results import SubmissionError, validate_submission

SHA_A, SHA_B = "a" * 64, "b" * 64
N_COLUMNS = 3 + 3 * 5  # rank, model, split, then n R@1 R@10 M@10 M@100 per relation
MALICIOUS_NAME = "<script>alert(1)</script>|x|y $a^$"
MALICIOUS_VERSION = "[x](javascript:alert(1)) `c`\nv<!--"


def entry(model: str = "m:none", mrr: float = 0.2, sha: str = SHA_A, name: str = "ratio", **dataset) -> dict:
    metrics = {"recall_at_1": mrr / 2, "recall_at_10": 2 * mrr, "mrr_at_10": mrr, "mrr_at_100": mrr + 0.01}
    return {
        "schema_version": 1,
        "model": model,
        "split": "test",
        "main_score": "mrr_at_10",
        "dataset": {"name": name, "version": "1.0", "manifest_sha256": sha, **dataset},
        "results": {rel: dict(metrics) for rel in ("address", "broaden", "specify")},
    }


def write(folder: Path, name: str, content: dict | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return path


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text, of an HTML document."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.row_widths: list[int] = []  # cells per table row
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self.row_widths.append(0)
        elif tag in ("td", "th"):
            self.row_widths[-1] += 1

    def handle_data(self, data):
        self.text.append(data)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for t, attrs in self.tags if t == tag]


@pytest.fixture
def hostile_results(tmp_path: Path) -> Path:
    """A good entry whose release name and version try to inject markup, and a bad file with a hostile name."""
    folder = tmp_path / "results"
    write(folder, "good.json", entry(name=MALICIOUS_NAME, version=MALICIOUS_VERSION))
    write(folder, "<img src=x onerror=alert(2)>.json", b"{not json")
    return folder


def test_markdown_escapes_every_submitted_text(hostile_results):
    board = load_board(hostile_results)
    rendered = MarkdownIt("commonmark").enable("table").render(leaderboard_markdown(board))
    page = Tags(rendered)
    assert not page.named("script") and not page.named("a") and not page.named("img")
    assert "javascript:" not in "".join(str(v) for _, attrs in page.tags for v in attrs.values())
    # header and entry, each relation's board (header and entry: rank, model, split, n, 4 metrics), rejected files
    assert page.row_widths == [N_COLUMNS, N_COLUMNS] + [8, 8] * 3 + [2, 2]
    text = "".join(page.text)
    assert f"{MALICIOUS_NAME} {MALICIOUS_VERSION.replace(chr(10), ' ')}" in text  # shown literally, one line
    assert "<img src=x onerror=alert(2)>.json" in text and "not valid JSON" in text


def test_html_escapes_every_submitted_text(hostile_results):
    page_html = leaderboard_html(load_board(hostile_results))
    page = Tags(page_html)
    assert len(page.named("script")) == 1 and not page.named("a")
    assert [a["src"][:22] for a in page.named("img")] == ["data:image/png;base64,"]
    assert not [k for _, attrs in page.tags for k in attrs if k.startswith("on")]
    text = "".join(page.text)
    assert MALICIOUS_NAME in text and "<img src=x onerror=alert(2)>.json" in text
    assert "<!--" not in page_html and "<script>alert" not in page_html


@pytest.mark.parametrize(
    "literal, reason",
    [
        ("NaN", "NaN is not a number in JSON"),
        ("Infinity", "Infinity is not a number in JSON"),
        ("-Infinity", "-Infinity is not a number in JSON"),
        ("1e400", "overflows a double"),
        ("1.5", "results/address/mrr_at_10: 1.5 is greater than the maximum of 1"),
        ("-0.1", "results/address/mrr_at_10: -0.1 is less than the minimum of 0"),
    ],
)
def test_non_finite_and_out_of_range_metrics_are_rejected(tmp_path, literal, reason):
    text = json.dumps(entry(mrr=0.25)).replace('"mrr_at_10": 0.25', f'"mrr_at_10": {literal}', 1)
    with pytest.raises(SubmissionError, match=reason):
        read_entry(write(tmp_path, "e.json", text.encode()))


def test_validate_submission_rejects_nan_that_json_schema_lets_through():
    bad = entry()
    bad["results"]["broaden"]["mrr_at_10"] = float("nan")
    with pytest.raises(SubmissionError, match="results/broaden/mrr_at_10: NaN"):
        validate_submission(bad)


def test_two_release_builds_are_two_tables_never_ranked_together(tmp_path):
    folder = tmp_path / "results"
    write(folder, "a-weak.json", entry("weak:none", 0.1, SHA_A))
    write(folder, "a-strong.json", entry("strong:none", 0.3, SHA_A))
    write(folder, "b-best.json", entry("best:none", 0.5, SHA_B, name="ratio-next"))
    board = load_board(folder)
    assert [(r.manifest_sha256, [e.model for e in r.entries]) for r in board.releases] == [
        (SHA_A, ["strong:none", "weak:none"]),
        (SHA_B, ["best:none"]),
    ]
    md = leaderboard_markdown(board)
    assert "## ratio 1.0 \\(manifest aaaaaaaaaaaa\\)" in md
    assert "## ratio-next 1.0 \\(manifest bbbbbbbbbbbb\\)" in md
    main = md.split("\n### ")[0] + md.split("## ratio-next")[1].split("\n### ")[0]  # without relation boards
    ranks = [line.split(" | ")[:2] for line in main.splitlines() if "\\:none |" in line]
    assert ranks == [["| 1", "strong\\:none"], ["| 2", "weak\\:none"], ["| 1", "best\\:none"]]
    sections = Tags(leaderboard_html(board)).named("section")
    assert [s["data-release"] for s in sections] == [SHA_A, SHA_B]


def test_specialists_rank_after_full_entries_and_a_unified_model_is_listed(tmp_path):
    folder = tmp_path / "results"
    base = entry("base:generic", 0.15)
    specialist = entry("m generic-Tuned", 0.30) | {"tuned_for": "specify"}
    specialist["results"] = {"specify": specialist["results"]["specify"]}
    unified = entry("m generic-Tuned", 0.20) | {"tuned_for": "all"}
    for name, content in (("base", base), ("spec", specialist), ("uni", unified)):
        write(folder, f"{name}.json", content)
    board = load_board(folder)
    assert not board.rejected
    assert [(e.model, e.tuned_for) for e in board.releases[0].entries] == [
        ("m generic-Tuned", "all"),  # all three relations, best mean
        ("base:generic", None),
        ("m generic-Tuned", "specify"),  # higher MRR@10, but on one relation only
    ]
    assert "generic-Tuned \\[unified, all moves\\]" in leaderboard_markdown(board)


def test_a_specialist_is_ranked_first_on_the_board_of_its_relation(tmp_path):
    folder = tmp_path / "results"
    specialist = entry("m generic-Tuned", 0.30) | {"tuned_for": "specify"}
    specialist["results"] = {"specify": specialist["results"]["specify"]}
    write(folder, "spec.json", specialist)
    write(folder, "base.json", entry("bm25:trigram", 0.2))
    board = load_board(folder)
    md = leaderboard_markdown(board)
    main, *boards = md.split("\n### ")
    assert [line.split(" | ")[1] for line in main.splitlines() if line.startswith("| 1 ")] == [
        "bm25\\:trigram"
    ]
    specify = next(b for b in boards if b.startswith("specify"))
    firsts = [line.split(" | ")[1] for line in specify.splitlines() if line.startswith("| 1 ")]
    assert firsts == ["m generic-Tuned \\[tuned for specify\\]"]
    address = next(b for b in boards if b.startswith("address"))
    assert "generic-Tuned" not in address  # ranked only where it competes
    sections = Tags(leaderboard_html(board)).named("div")
    assert [d["data-relation"] for d in sections] == ["address", "broaden", "specify"]
    run = run_ratio("leaderboard", folder, "--wide")  # the per-relation rankings: the full view
    assert run.code == 0, run.err
    assert "specify: ranked by that relation's MRR@10" in run.out


def test_a_rescored_model_keeps_its_newest_entry_and_namesakes_are_told_apart(tmp_path):
    folder = tmp_path / "results"
    fp_a, fp_b = "1" * 64, "2" * 64
    old = entry("m generic-Tuned", 0.1) | {"model_fingerprint": fp_a, "scored_at": "2026-01-01T00:00:00Z"}
    new = entry("m generic-Tuned", 0.2) | {"model_fingerprint": fp_a, "scored_at": "2026-02-01T00:00:00Z"}
    smoke = entry("m generic-Tuned", 0.05) | {
        "model_fingerprint": fp_b,
        "trained_from": {"config": "smoke.yaml", "config_sha256": "3" * 64},
        "submitter": "Ada Lovelace",
    }
    for name, content in (("z-old.json", old), ("a-new.json", new), ("smoke.json", smoke)):
        write(folder, name, content)
    board = load_board(folder)
    (release,) = board.releases
    assert [e.results["address"]["mrr_at_10"] for e in release.entries] == [0.2, 0.05]
    assert release.superseded == (("z-old.json", "a-new.json"),)
    assert (
        "1 re-scored entry superseded by the newest of the same model (z-old.json by a-new.json)"
        in board.summary
    )
    md = leaderboard_markdown(board)
    assert "| 1 | m generic-Tuned | weights 11111111 | test |" in md
    assert (
        "| 2 | m generic-Tuned | weights 22222222, config smoke.yaml \\(33333333\\), by Ada Lovelace | test |"
        in md
    )
    assert "weights 22222222" in leaderboard_html(board)


def test_a_forged_copy_rejects_itself_only_not_the_entries_of_its_release(tmp_path):
    folder = tmp_path / "results"
    for i in range(16):
        write(folder, f"real-{i:02d}.json", entry(f"real{i}:none", 0.01 * (i + 1), SHA_A))
    write(folder, "000-forged.json", entry("forged:none", 0.45, SHA_A, name="renamed"))  # first in path order
    write(folder, "other.json", entry("other:none", 0.1, SHA_B))
    board = load_board(folder)
    assert [(r.name, r.manifest_sha256, len(r.entries)) for r in board.releases] == [
        ("ratio", SHA_A, 16),
        ("ratio", SHA_B, 1),
    ]
    assert [r.source for r in board.rejected] == ["000-forged.json"]
    assert board.rejected[0].reason == (
        f"dataset names renamed 1.0, but manifest_sha256 {SHA_A[:12]}... is ratio 1.0 (named by 16 other entries)"
    )


def test_a_tie_between_two_releases_goes_to_the_first_file(tmp_path):
    folder = tmp_path / "results"
    write(folder, "a.json", entry("real:none", 0.2, SHA_A))
    write(folder, "b.json", entry("forged:none", 0.45, SHA_A, name="renamed"))
    board = load_board(folder)
    assert [e.model for e in board.releases[0].entries] == ["real:none"]
    assert [r.source for r in board.rejected] == ["b.json"]
    assert "(named by 1 other entry)" in board.rejected[0].reason


def test_html_page_is_self_contained_with_one_row_per_entry(tmp_path):
    folder = tmp_path / "results"
    for i in range(3):
        write(folder, f"e{i}.json", entry(f"m{i}:none", 0.1 * (i + 1), SHA_A if i else SHA_B))
    write(folder, "e0/mteb/RatioAddress.json", {"task_name": "RatioAddress"})  # MTEB's files are not entries
    board = load_board(folder)
    assert board.rejected == ()
    page_html = leaderboard_html(board)
    page = Tags(page_html)
    assert len([a for a in page.named("tr") if "data-split" in a]) == 3 * (1 + 3)  # main and relation boards
    assert {a["id"] for a in page.named("select")} == {"filter-release", "filter-split", "filter-relation"}
    assert len(page.named("option")) == (1 + 2) + (1 + 1) + (
        1 + 3
    )  # "all" plus each release, split, relation
    png = base64.b64decode(page.named("img")[0]["src"].removeprefix("data:image/png;base64,"))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert "http://" not in page_html and "https://" not in page_html
    assert page.named("meta")[1]["content"] == CONTENT_SECURITY_POLICY


@pytest.fixture
def broken_results(tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    write(folder, "good.json", entry())
    write(
        folder,
        "latin1.json",
        json.dumps(entry(name="r\u00e9sum\u00e9"), ensure_ascii=False).encode("latin-1"),
    )
    write(folder, "truncated.json", json.dumps(entry())[:40].encode())
    write(folder, "list.json", [entry()])
    return folder


def test_unreadable_files_are_rejected_entries_not_a_crash(broken_results, tmp_path):
    out = {kind: tmp_path / f"board.{kind}" for kind in ("md", "png", "html")}
    run = run_ratio(
        "leaderboard", broken_results, "--markdown", out["md"], "--plot", out["png"], "--html", out["html"]
    )
    assert run.code == 0, run.err
    assert "Traceback" not in run.out + run.err
    for line in [
        "rejected latin1.json: not UTF-8 text (byte 0xe9 at offset",
        "rejected list.json: invalid submission at (root):",
        "rejected truncated.json: not valid JSON:",
        "1 entry on 1 release build, 3 rejected",
    ]:
        assert line in run.out, run.out
    md = out["md"].read_text(encoding="utf-8")
    assert "| latin1.json | not UTF-8 text" in md
    strict = run_ratio("leaderboard", broken_results, "--strict")
    assert_user_error(strict, "--strict", "3 result file(s)")
    # the outputs are reproducible byte for byte
    again = {kind: tmp_path / f"again.{kind}" for kind in out}
    run_ratio(
        "leaderboard",
        broken_results,
        "--markdown",
        again["md"],
        "--plot",
        again["png"],
        "--html",
        again["html"],
    )
    assert all(out[k].read_bytes() == again[k].read_bytes() for k in out)


def test_missing_results_folder_is_a_user_error(tmp_path):
    assert_user_error(run_ratio("leaderboard", tmp_path / "nope"), "nope", "no such file or folder")


def judged(judge: str = "gpt-x", mrr: float = 0.5) -> dict:
    metrics = {
        "hit_rate_at_10": 0.9,
        "precision_at_10": 0.3,
        "ndcg_at_10": 0.6,
        "mrr_at_10": mrr,
        "map_at_10": 0.4,
    }
    return {
        "judge_model": judge,
        "queries": 100,
        "judged_pairs": 2000,
        "coverage_at_10": 0.25,
        "hard": metrics,
        "soft": dict(metrics),
    }


def test_judged_figures_are_a_table_of_their_own_escaped_and_filterable_by_relation(tmp_path):
    write(tmp_path, "a.json", entry("a:none", 0.3) | {"judged": {"specify": judged(MALICIOUS_NAME)}})
    # b judged far better than a: the board still ranks on the mined gold
    write(tmp_path, "b.json", entry("b:none", 0.2) | {"judged": {"address": judged("gpt-x", 0.99)}})
    write(tmp_path, "e.json", entry("e:none", 0.05))  # not judged: no judged row
    write(
        tmp_path, "c.json", entry("c:none", 0.1) | {"judged": {"address": judged() | {"coverage_at_10": 1.5}}}
    )
    only_address = entry("d:none", 0.1)
    only_address["results"] = {"address": only_address["results"]["address"]}
    write(tmp_path, "d.json", only_address | {"judged": {"broaden": judged()}})
    write(
        tmp_path,
        "f.json",
        entry("f:none", 0.1) | {"n_queries": {"address": 50}, "judged": {"address": judged()}},
    )
    write(tmp_path, "g.json", entry("g:none", 0.1) | {"judged": {"address": judged() | {"queries": 0}}})
    board = load_board(tmp_path)
    assert sorted(r.reason for r in board.rejected) == [
        "invalid submission at judged/address/coverage_at_10: 1.5 is greater than the maximum of 1",
        "invalid submission at judged/address/queries: 0 is less than the minimum of 1",
        "invalid submission at judged/address/queries: 100 judged of 50 scored queries",
        "invalid submission at judged/broaden: no results for broaden to go with it",
    ]
    assert [e.model for e in board.releases[0].entries] == ["a:none", "b:none", "e:none"]
    markdown = leaderboard_markdown(board)
    assert "| b\\:none | test | address | gpt-x | 100 | 25.0 | 99.0 | 30.0 | 99.0 | 30.0 |" in markdown
    rendered = Tags(MarkdownIt("commonmark").enable("table").render(markdown))
    assert not rendered.named("script") and MALICIOUS_NAME in "".join(rendered.text)
    page = Tags(leaderboard_html(board))
    relations = [a["data-relation"] for a in page.named("tbody") if "data-relation" in a]
    assert relations == ["address", "specify"]
    assert len(page.named("script")) == 1 and MALICIOUS_NAME in "".join(page.text)
    assert "judged@10" in "".join(page.text) and "99.0" in "".join(page.text)


def test_the_plot_stays_legible_at_60_entries(tmp_path):
    """One panel per relation, its top k as horizontal bars with full names: no two labels overlap, none is cut
    off, and the picture is taller with more bars instead of a wide strip."""
    import warnings

    from ratio_bench.evaluation.board.render.plots import PLOT_TOP, plot_figure, plot_png

    folder = tmp_path / "results"
    for i in range(60):
        write(folder, f"e{i:02d}.json", entry(f"a-rather-long-model-name-{i:02d}:generic", 0.005 * (i + 1)))
    board = load_board(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # tight_layout's "not compatible"/"cannot fit" warnings fail the test
        fig = plot_figure(board)
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.canvas.get_width_height()
    assert len(fig.axes) == 3  # one panel per relation
    for ax in fig.axes:
        labels = [t for t in ax.get_yticklabels() if t.get_text()]
        assert len(labels) == PLOT_TOP and labels[0].get_text() == "1. a-rather-long-model-name-59:generic"
        boxes = sorted((t.get_window_extent(renderer) for t in labels), key=lambda b: b.y0)
        assert all(b.x0 >= 0 and b.x1 <= width for b in boxes)  # full names, inside the picture
        assert all(low.y1 <= high.y0 for low, high in itertools.pairwise(boxes))  # no overlap
    png = plot_png(board, top=5)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert w <= 1400 and h >= 400 and h < height  # a readable page, shorter with fewer bars per panel


def test_an_unchanged_snapshot_score_of_an_older_version_shows_under_the_newest(tmp_path):
    """An append keeps test_2022_01's hash: its 0.1.0 score is shown under 0.2.0, marked; a changed split is not."""
    folder = tmp_path / "results"
    jan, feb, test_old, test_new = "1" * 64, "2" * 64, "3" * 64, "4" * 64
    old_hashes = {"test": test_old, "test_2022_01": jan}
    new_hashes = {"test": test_new, "test_2022_01": jan, "test_2022_02": feb}

    def scored(model, split, sha, version, hashes):
        e = entry(model, 0.3, sha, split_sha256=hashes[split], split_hashes=hashes)
        return e | {"split": split, "dataset": e["dataset"] | {"version": version}}

    write(folder, "old-jan.json", scored("old:none", "test_2022_01", SHA_A, "0.1.0", old_hashes))
    write(folder, "old-test.json", scored("oldtest:none", "test", SHA_A, "0.1.0", old_hashes))
    write(folder, "new-feb.json", scored("new:none", "test_2022_02", SHA_B, "0.2.0", new_hashes))
    board = load_board(folder)
    newest = next(r for r in board.releases if r.version == "0.2.0")
    assert [(e.model, e.split, e.scored_on) for e in newest.entries] == [
        ("old:none", "test_2022_01", "0.1.0"),
        ("new:none", "test_2022_02", None),
    ]
    assert "scored on 0.1.0" in leaderboard_markdown(board)
    for e in (scored("x:none", "test_2022_01", SHA_A, "0.1.0", old_hashes),):
        validate_submission(e)  # the schema takes snapshot splits and the split hashes


def snapshot_entry(
    model: str, split: str, mrr: float, queries: int, cutoff: str | None = None, **more
) -> dict:
    """An entry on a dated snapshot; ``cutoff``: an ISO date, "none" (no training data) or None (not recorded)."""
    from ratio_bench.core.cutoffs import NO_TRAINING_DATA, Cutoff, is_clean, recorded_date

    e = entry(model, mrr) | {
        "split": split,
        "n_queries": dict.fromkeys(("address", "broaden", "specify"), queries),
    }
    if cutoff is not None:
        known = (
            Cutoff(None, NO_TRAINING_DATA) if cutoff == "none" else Cutoff(recorded_date(cutoff), "stated")
        )
        e |= known.fields() | {"clean": is_clean(known, split)}
    return e | more


@pytest.fixture
def snapshot_results(tmp_path: Path) -> Path:
    """Model a (cut-off end of March 2025) on three monthly snapshots, March contaminated; BM25 on two; model c
    from before cut-offs were recorded, on one (unknown)."""
    folder = tmp_path / "results"
    a = {"model_fingerprint": "1" * 64}
    for name, e in {
        "a-03.json": snapshot_entry("a:none", "test_2025_03", 0.0, 10, "2025-03-31", **a),
        "a-04.json": snapshot_entry("a:none", "test_2025_04", 0.2, 10, "2025-03-31", **a),
        "a-05.json": snapshot_entry("a:none", "test_2025_05", 0.5, 30, "2025-03-31", **a),
        "bm25-03.json": snapshot_entry("bm25:unigram", "test_2025_03", 0.4, 10, "none"),
        "bm25-04.json": snapshot_entry("bm25:unigram", "test_2025_04", 0.4, 10, "none"),
        "c-04.json": snapshot_entry("c:none", "test_2025_04", 0.45, 10),
        "a-test.json": entry("a:none", 0.3) | a,
    }.items():
        write(folder, name, e)
    return folder


def test_snapshot_scores_are_marked_contaminated_not_hidden(snapshot_results, tmp_path):
    from ratio_bench.core.cutoffs import LEGEND
    from ratio_bench.evaluation.board.escaping import markdown_text

    board = load_board(snapshot_results)
    assert not board.rejected and len(board.releases[0].entries) == 7
    text = leaderboard_markdown(board)
    for mark in ("test_2025_03 (contaminated)", "test_2025_04 (clean)", "test_2025_04 (unknown)"):
        assert markdown_text(mark) in text, mark
    assert markdown_text(LEGEND) in text and "| test |" in text  # the whole test split has no mark
    page = leaderboard_html(board)
    assert 'id="filter-clean"' in page and 'data-clean="contaminated"' in page
    assert '<label>Release <select id="filter-release">' in page


def test_clean_only_ranks_models_on_their_clean_snapshots_weighted_by_queries(snapshot_results, tmp_path):
    """a: April (0.2, 10 queries) and May (0.5, 30): 42.5, above BM25's 40.0 (unweighted it would be 35.0, and
    with the contaminated March 34.0); c has no known cut-off: listed, not ranked, whatever its score."""
    from ratio_bench.cli import main

    md, page = tmp_path / "clean.md", tmp_path / "clean.html"
    assert (
        main(
            ["leaderboard", str(snapshot_results), "--clean-only", "--markdown", str(md), "--html", str(page)]
        )
        == 0
    )
    rows = [
        line.split(" | ") for line in md.read_text(encoding="utf-8").splitlines() if line.startswith("| ")
    ]
    body = [(r[0], r[1], r[3], r[4], r[-1]) for r in rows[1:]]
    assert body == [
        ("| 1", "a\\:none", "42.5", "42.5 \\(2 snapshots, 40 queries\\)", "left out\\: 1 contaminated |"),
        ("| 2", "bm25\\:unigram", "40.0", "40.0 \\(2 snapshots, 20 queries\\)", " |"),
        ("| -", "c\\:none", "-", "-", "no clean snapshot; left out\\: 1 unknown |"),
    ]
    html = page.read_text(encoding="utf-8")
    assert "no clean snapshot; left out: 1 unknown" in html and "42.5 (2 snapshots, 40 queries)" in html


# --- uncertainty: intervals, ties, the trend ------------------------------------------------------------------

PATTERN = [1, 2, 0, 5, 1, 0, 3, 11, 1, 0]  # MRR@10 0.4033 on ten queries


def tie_board(tmp_path: Path):
    """Four real entries on one relation's 200 queries: a leader, a runner-up one query behind it (a tie), a far
    weaker third, and a copy of the third without per-query data (an older or hand-made file)."""
    from tests.helpers.entries import ranked_entry

    folder = tmp_path / "results"
    leader = ranked_entry("leader:none", {"address": [1, 2, 1, *(PATTERN * 20)[3:]]})
    runner = ranked_entry("runner:none", {"address": PATTERN * 20})
    weak = ranked_entry("weak:none", {"address": [5, 0, 0, 0] * 50})
    bare = {
        k: v for k, v in ranked_entry("bare:none", {"address": [5, 0, 0, 0] * 50}).items() if k != "per_query"
    }
    for name, content in (("leader", leader), ("runner", runner), ("weak", weak), ("bare", bare)):
        write(folder, f"{name}.json", content)
    return load_board(folder)


def test_markdown_shows_intervals_and_ties_inside_the_noise(tmp_path):
    board = tie_board(tmp_path)
    assert not board.rejected
    md = leaderboard_markdown(board)
    main, *relation_boards = md.split("\n### ")
    rows = [line.split(" | ") for line in main.splitlines() if ":none |" in line]
    assert [(r[0], r[1]) for r in rows] == [
        ("| =1", "leader\\:none"),
        ("| =1", "runner\\:none"),
        ("| 3", "bare\\:none"),  # same figures as weak: without per-query data never tied with it
        ("| 4", "weak\\:none"),
    ]
    leader_mrr = rows[0][3 + 3]  # rank, model, split, then address n R@1 R@10 M@10
    assert leader_mrr.startswith("40.8 \\[") and leader_mrr.endswith("\\]")
    low, high = map(float, leader_mrr[len("40.8 \\[") : -2].split("-"))
    assert low < 40.8 < high
    assert rows[2][6] == "5.0"  # the bare entry: its figure, no interval
    assert "95% bootstrap CI over queries, 1,000 resamples, seed 0" in md
    assert (
        "\\=k\\: a tie" in md
        and "No per-query data \\(figures without an interval, never tied\\)\\: bare\\:none" in md
    )
    address = next(b for b in relation_boards if b.startswith("address"))
    assert [line.split(" | ")[0] for line in address.splitlines() if ":none |" in line] == [
        "| =1",
        "| =1",
        "| 3",
        "| 4",
    ]


def test_html_and_terminal_show_intervals_and_ties(tmp_path):
    board = tie_board(tmp_path)
    page = leaderboard_html(board)
    ranks = [a for a in Tags(page).named("td") if a.get("data-value") in ("1", "3", "4")][:4]
    assert [a["data-value"] for a in ranks] == ["1", "1", "3", "4"]  # sortable by the number, shown "=1"
    assert ">=1</td>" in page and "40.8 [" in page and "1,000 resamples, seed 0" in page
    run = run_ratio("leaderboard", tmp_path / "results")
    assert run.code == 0, run.err
    out = " ".join(run.out.split())
    assert "=1" in out and "1,000 resamples, seed 0" in out and "=k: a tie" in out


def snapshot_board() -> Any:
    """Two models on two monthly snapshots (one with a training-data cut-off between them), and one entry on
    the whole test split, which the trend leaves out."""
    from tests.helpers.entries import ranked_record

    from ratio_bench.core.cutoffs import NONE, Cutoff
    from ratio_bench.evaluation.board.leaderboard import Board, ReleaseEntries

    stated = Cutoff(date(2025, 1, 20), "stated by the scorer").fields()
    lexical = NONE.fields()
    entries = [
        ranked_record("old:none", {"address": PATTERN * 5}, "test_2025_01", **stated),
        ranked_record("old:none", {"address": [0, *(PATTERN * 5)[1:]]}, "test_2025_02", **stated),
        ranked_record("new:none", {"address": [1] * 50}, "test_2025_01"),
        ranked_record("new:none", {"address": [2] * 50}, "test_2025_02"),
        ranked_record("bm25:unigram", {"address": [3] * 50}, "test_2025_02", **lexical),
        ranked_record("whole:none", {"address": PATTERN}, "test"),
    ]
    return Board((ReleaseEntries("ratio", "1.0", SHA_A, tuple(entries)),), ())


def test_the_trend_follows_each_model_over_the_snapshots_with_its_band_and_cutoff():
    from matplotlib.collections import PolyCollection

    from ratio_bench.evaluation.board.render.plots import trend_figure, trend_png

    board = snapshot_board()
    fig = trend_figure(board)
    (ax,) = fig.axes
    legend = [t.get_text() for t in fig.legends[0].get_texts()]  # one legend for every panel
    assert legend[:3] == [
        "bm25:unigram (no training data)",
        "new:none (cut-off unknown)",
        "old:none (cut-off 2025-01-20)",
    ]
    assert not any("whole" in text for text in legend)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2025-01", "2025-02"]
    assert len([c for c in ax.collections if isinstance(c, PolyCollection)]) == 3  # one band per model
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert len(dashed) == 1  # old's cut-off; new's is unknown
    png = trend_png(board)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and trend_png(board) == png  # reproducible bytes
    assert "Trend over test snapshots" in leaderboard_html(board)


def test_no_trend_without_snapshot_entries(tmp_path):
    from ratio_bench.evaluation.board.leaderboard import LeaderboardError
    from ratio_bench.evaluation.board.render.plots import trend_png

    with pytest.raises(LeaderboardError, match=r"no entries on test snapshot splits .*\(ratio score --split"):
        trend_png(tie_board(tmp_path))
    assert "Trend over test snapshots" not in leaderboard_html(tie_board(tmp_path))


def test_clean_only_pools_each_models_clean_queries_for_intervals_and_ties():
    """Three models clean on the same two snapshots: the pooled clean queries give each figure an interval;
    two models one query apart are tied, a far weaker one is not; a model whose January is contaminated pools
    February only (other queries: never tied with the rest)."""
    from tests.helpers.entries import ranked_record

    from ratio_bench.core.cutoffs import NONE, Cutoff
    from ratio_bench.evaluation.board.clean_ranking import clean_cells, clean_ranking
    from ratio_bench.evaluation.board.leaderboard import ReleaseEntries
    from ratio_bench.evaluation.board.render.terminal import terminal_clean_table

    old = Cutoff(date(2021, 12, 31), "stated").fields()

    def on(model, jan, feb, cutoff=old):
        return [
            ranked_record(model, {"address": jan}, "test_2025_01", **cutoff, model_fingerprint=model * 64),
            ranked_record(model, {"address": feb}, "test_2025_02", **cutoff, model_fingerprint=model * 64),
        ]

    entries = [
        *on("a", PATTERN * 10, PATTERN * 10),
        *on("b", [1, 2, 1, *(PATTERN * 10)[3:]], PATTERN * 10),  # two queries better than a
        *on("c", [0] * 100, [5, 0] * 50, NONE.fields()),
        *on("d", [1] * 100, [1] * 100, Cutoff(date(2025, 1, 15), "stated").fields()),
    ]
    ranking = clean_ranking(ReleaseEntries("ratio", "1.0", SHA_A, tuple(entries)))
    shown = {row.label: (str(rank), clean_cells(rank, row)[4]) for rank, row in ranking}
    assert shown["d"][0] == "1" and shown["d"][1] == "100.0 [100.0-100.0] (1 snapshots, 100 queries)"
    assert shown["b"][0] == shown["a"][0] == "=2"
    assert shown["c"][0] == "4"
    assert shown["a"][1].startswith("40.3 [") and "(2 snapshots, 200 queries)" in shown["a"][1]
    table = terminal_clean_table(ReleaseEntries("ratio", "1.0", SHA_A, tuple(entries)))
    assert table.row_count == 4


@pytest.mark.parametrize("split", ["test_0000_01", "test_9999_12", "test_9999q4"])
def test_a_snapshot_name_no_calendar_holds_rejects_its_entry_only(tmp_path, split):
    """Year 0000 or 9999 would break date arithmetic: such an entry is rejected by itself, the board still loads."""
    write(tmp_path, "good.json", entry("good:none"))
    write(tmp_path, "bad.json", entry("bad:none") | {"split": split})
    board = load_board(tmp_path)
    assert [e.model for r in board.releases for e in r.entries] == ["good:none"]
    assert [r.source for r in board.rejected] == ["bad.json"] and "split" in board.rejected[0].reason


def test_one_forged_entry_cannot_redirect_or_double_carried_scores(tmp_path):
    """Build 0.2.0 appended test_2022_02 to 0.1.0; a forged build claims fifty extra splits. The real 0.2.0 still
    shows 0.1.0's unchanged January score (once, though the same model was also scored on 0.2.0's January by
    another file), and a forged entry of 0.2.0 claiming other hashes does not change what 0.2.0's majority says."""
    jan, test = "1" * 64, "3" * 64
    old = {"test": test, "test_2022_01": jan}
    new = old | {"test_2022_02": "2" * 64}
    forged = new | {f"test_2030_{m:02d}": "9" * 64 for m in range(1, 13)}

    def scored(model, split, sha, version, hashes, **more):
        e = entry(model, 0.3, sha, split_sha256=hashes.get(split, "0" * 64), split_hashes=hashes)
        return e | {"split": split, "dataset": e["dataset"] | {"version": version}} | more

    write(tmp_path, "old-jan.json", scored("old:none", "test_2022_01", SHA_A, "0.1.0", old))
    write(tmp_path, "both-jan-old.json", scored("both:none", "test_2022_01", SHA_A, "0.1.0", old))
    write(tmp_path, "both-jan-new.json", scored("both:none", "test_2022_01", SHA_B, "0.2.0", new))
    write(tmp_path, "new-feb.json", scored("new:none", "test_2022_02", SHA_B, "0.2.0", new))
    write(tmp_path, "new-feb2.json", scored("new2:none", "test_2022_02", SHA_B, "0.2.0", new))
    write(tmp_path, "liar.json", scored("liar:none", "test_2022_02", SHA_B, "0.2.0", old | {"x": "y" * 64}))
    write(tmp_path, "fake.json", scored("fake:none", "test_2022_02", "f" * 64, "9.9.9", forged))
    board = load_board(tmp_path)
    real = next(r for r in board.releases if r.version == "0.2.0")
    shown = sorted((e.model, e.split, e.scored_on) for e in real.entries)
    assert ("old:none", "test_2022_01", "0.1.0") in shown
    assert [m for m, split, _ in shown if split == "test_2022_01"].count("both:none") == 1


def test_no_training_data_goes_with_no_cutoff_date():
    """A dense model cannot dress up as lexical to look clean: the lexical source with a date is refused."""
    lexical = entry("e5:none") | {
        "split": "test_2025_03",
        "training_data_cutoff": "2026-01-01",
        "training_data_cutoff_source": "no training data (lexical)",
        "clean": True,
    }
    with pytest.raises(SubmissionError, match="training_data_cutoff_source: 'no training data"):
        validate_submission(lexical)


def test_a_row_is_repo_and_setup_two_setups_and_a_renamed_copy_keep_their_rows(tmp_path):
    """Before: one entry per weights fingerprint, so m:none replaced m:generic and a later copy of the weights
    under another name replaced the original. Now each is a row; the copy says whose weights it has."""
    folder = tmp_path / "results"
    fp = "1" * 64
    write(
        folder,
        "generic.json",
        entry("m:generic", 0.3) | {"model_fingerprint": fp, "scored_at": "2026-01-01T00:00:00Z"},
    )
    write(
        folder,
        "none.json",
        entry("m:none", 0.2) | {"model_fingerprint": fp, "scored_at": "2026-01-02T00:00:00Z"},
    )
    write(
        folder,
        "a-copy.json",
        entry("copy:generic", 0.3) | {"model_fingerprint": fp, "scored_at": "2026-02-01T00:00:00Z"},
    )
    board = load_board(folder)
    (release,) = board.releases
    rows = {e.model: e for e in release.entries}
    assert rows.keys() == {"m:generic", "m:none", "copy:generic"} and release.superseded == ()
    assert rows["copy:generic"].same_weights_as == "m"
    assert rows["m:generic"].same_weights_as is None and rows["m:none"].same_weights_as is None
    assert "same weights as m" in leaderboard_markdown(board)


def test_figures_over_no_queries_or_not_the_builds_queries_are_rejected_not_ranked(tmp_path):
    """n_queries 0 with 100% figures, and 150,000 ranks where the build's entries have 9 queries: each rejects
    itself only (before, both were ranked first)."""
    from tests.helpers.entries import ranked_entry

    folder = tmp_path / "results"
    for name, rank in (("a:none", 2), ("b:none", 3)):
        write(folder, f"{name[0]}.json", ranked_entry(name, {"address": [rank] * 9}))
    perfect = ranked_entry("many:none", {"address": [1] * 9})
    many = perfect | {"n_queries": {"address": 150_000}}
    many["per_query"] = {"address": {**perfect["per_query"]["address"], "gold_rank": [1] * 150_000}}
    zero = {k: v for k, v in perfect.items() if k != "per_query"} | {
        "model": "zero:none",
        "n_queries": {"address": 0},
    }
    write(folder, "many.json", many)
    write(folder, "zero.json", zero)
    board = load_board(folder)
    assert [e.model for r in board.releases for e in r.entries] == ["a:none", "b:none"]
    reasons = {r.source: r.reason for r in board.rejected}
    assert (
        reasons["zero.json"]
        == "invalid submission at n_queries/address: 0 queries; a figure needs at least one"
    )
    assert reasons["many.json"] == (
        "not this release build's queries: n_queries/address is 150000, but split test has 9 address queries "
        "(by most entries of this build)"
    )


def test_a_plumbing_test_judges_table_is_labelled_so(tmp_path):
    """The dev pool's SmolLM2-135M verdicts exercise the code; the board says so wherever they are shown."""
    write(tmp_path, "a.json", entry("a:none", 0.3) | {"judged": {"address": judged("smollm2", 0.4)}})
    write(tmp_path, "b.json", entry("b:none", 0.2) | {"judged": {"address": judged("gpt-x", 0.99)}})
    board = load_board(tmp_path)
    page = leaderboard_html(board)
    assert "<strong>plumbing test: a 135M-parameter development judge" in page
    assert "<td>smollm2 (plumbing test)</td>" in page and "<td>gpt-x</td>" in page
    assert "smollm2 \\(plumbing test\\)" in leaderboard_markdown(board)
    write(tmp_path, "a.json", entry("a:none", 0.3) | {"judged": {"address": judged("gpt-x", 0.4)}})
    assert "plumbing test" not in leaderboard_html(load_board(tmp_path))


def test_a_board_of_mini_split_entries_renders_after_the_test_split(tmp_path):
    """``ratio score --split mini`` writes entries the schema accepts; the board ranks them after the whole test
    split, beside it (a mini-only folder raised ValueError from the split order)."""
    write(tmp_path, "mini.json", {**entry("a:none", 0.3), "split": "mini"})
    write(tmp_path, "test.json", entry("a:none", 0.2))
    board = load_board(tmp_path)
    assert [e.split for e in board.releases[0].entries] == ["test", "mini"]
    assert "mini" in leaderboard_markdown(board)
