"""The reply cache: a cache that cannot be written stops the run with one error naming it."""

import pytest

from ratio_bench.llm.cache import CachedReply, CacheError, ReplyCache
from ratio_bench.llm.client import JudgeRequest


def fill_up(cache: ReplyCache) -> None:
    """Make the cache file 'full' the way a full disk does (SQLite answers SQLITE_FULL on the next write)."""
    pages = cache._con.execute("PRAGMA page_count").fetchone()[0]
    cache._con.execute(f"PRAGMA max_page_count = {pages}")


def test_a_full_cache_is_one_error_naming_it(tmp_path):
    cache = ReplyCache(tmp_path / "c.sqlite")
    fill_up(cache)
    with pytest.raises(CacheError, match=r"--cache .*c\.sqlite: .*database or disk is full"):
        cache.put("k" * 64, "judge", "m", CachedReply("ok", "x" * 100_000, "", 1, 1, "sync"))


def test_a_run_stops_at_the_first_reply_it_cannot_store(fake_server, make_judge):
    fake_server.state.reply_chars = 60_000  # under the reply limit, over the pages left
    judge = make_judge(fake_server, workers=1)
    fill_up(judge.cache)
    reqs = [
        JudgeRequest([{"role": "system", "content": "s"}, {"role": "user", "content": f"q{i}"}])
        for i in range(5)
    ]
    with pytest.raises(CacheError, match="database or disk is full"):
        judge.run(reqs)
    assert judge.stats.requests == 1  # nothing more was paid for once replies could not be kept
