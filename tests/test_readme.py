"""The README is a door: small, its quick starts are commands the CLI takes, its links lead somewhere, and the
manual it points at (docs/, MkDocs) builds with every link between pages resolved."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ratio_bench.cli import build_parser

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
# Pages other branches of issue 37 add (security, releases, adapters); checked once they exist.
WRITTEN_ELSEWHERE = {
    "docs/security.md",
    "docs/security-queue.md",
    "docs/security-form.md",
    "docs/releases.md",
    "training/adapters/README.md",
}


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def _commands(text: str) -> list[list[str]]:
    """Every shell command of the ``bash`` blocks, comments dropped, split as the shell would."""
    commands = []
    for block in _blocks(text, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(words)
    return commands


def test_readme_is_under_12_kb():
    assert README.stat().st_size < 12 * 1024


def test_every_ratio_command_in_the_readme_parses():
    commands = [words[1:] for words in _commands(README.read_text(encoding="utf-8")) if words[0] == "ratio"]
    assert len(commands) >= 8
    firsts = {words[0] for words in commands}
    assert {"score", "models", "leaderboard", "index", "search", "serve"} <= firsts
    for words in commands:
        build_parser().parse_args(words)  # exits 2 (SystemExit) on a command or flag the CLI does not take


def test_the_quick_starts_use_the_mini_split_and_the_official_repos():
    text = README.read_text(encoding="utf-8")
    commands = [shlex.join(words) for words in _commands(text)]
    assert any(c.startswith("ratio score") and "--split mini" in c for c in commands)
    assert any("leaderboard submit" in c and "--requests ratio-bench/requests" in c for c in commands)
    assert "ratio leaderboard init" in text and "ratio-bench/results" in text
    assert (
        "ratio-bench/ratio@1.0.0" not in text and "mteb.get_model(" not in text and "get_tasks(" not in text
    )
    assert "--index-url https://download.pytorch.org/whl/cpu" in text


def test_the_readme_keeps_the_two_house_commands_and_their_targets_exist():
    makes = [words for words in _commands(README.read_text(encoding="utf-8")) if words[0] == "make"]
    assert ["make", "demo"] in makes and ["make", "test"] in makes
    targets = set(re.findall(r"^([a-z][\w-]*):", (REPO / "Makefile").read_text(encoding="utf-8"), flags=re.M))
    assert {"demo", "test", "docs"} <= targets
    assert "make test" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_readme_python_block_is_the_offline_mteb_route():
    (block,) = _blocks(README.read_text(encoding="utf-8"), "python")
    compile(block, "README.md", "exec")
    assert "SentenceTransformer(str(locate(" in block and "dataset_path=" in block


@pytest.mark.parametrize("source", ["README.md", *sorted(p.name for p in (REPO / "docs").glob("*.md"))])
def test_relative_links_lead_to_files(source):
    path = README if source == "README.md" else REPO / "docs" / source
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
        if "://" in target:
            continue
        resolved = (path.parent / target).resolve().relative_to(REPO).as_posix()
        if resolved in WRITTEN_ELSEWHERE and not (REPO / resolved).exists():
            continue
        assert (REPO / resolved).exists(), f"{source} links {target}, which is not there"


def test_every_manual_page_is_in_the_mkdocs_nav():
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    for page in (REPO / "docs").glob("*.md"):
        if f"docs/{page.name}" not in WRITTEN_ELSEWHERE:
            assert f": {page.name}" in nav, page.name


@pytest.mark.skipif(shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None, reason="no mkdocs")
def test_the_manual_builds_strictly(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "scoring" / "index.html").is_file()


@pytest.mark.slow
def test_the_readme_mteb_block_runs_offline_on_a_local_release(small_release, tmp_path):
    """The README's mteb code as written, pointed at a small release's test split instead of ./ratio's mini."""
    (block,) = _blocks(README.read_text(encoding="utf-8"), "python")
    code = block.replace('dataset_path="ratio"', f"dataset_path={str(small_release)!r}")
    code = code.replace('splits=["mini"]', 'splits=["test"]')
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "RatioAddress" in done.stdout
