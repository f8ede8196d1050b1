"""The served board's first render at scale, for whichever ``ratio_bench`` is first on the path.

Run it once with main's source and once with a branch's (``PYTHONPATH=/work/main/src`` then ``PYTHONPATH=src``),
back to back, to compare them: the same loopback results repository as ``board_scale.py`` (N entries, half in
signed worker folders with FINISHED requests), then a cold ``--from`` read (results only, then with the queue)
and the served page's first, cached and 4-at-once requests. Prints one JSON line (seconds).

Usage: python benchmarks/board_render.py [--entries 1200]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import board_scale as bs  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    import ratio_bench
    from ratio_bench.devhub.server import HubServer
    from ratio_bench.leaderboard.board import LiveBoard, load_board_from_repo
    from ratio_bench.leaderboard.hub import RepoRef
    from ratio_bench.leaderboard.provenance import generate_key

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--entries", type=int, default=1200)
    args = p.parse_args(argv)
    entry = json.loads(bs.DEFAULT_ENTRY.read_text(encoding="utf-8"))
    root = Path(tempfile.mkdtemp(prefix="board-render-"))
    out: dict = {"src": ratio_bench.__file__, "entries": args.entries}
    with HubServer() as hub:
        hub.state.add_user(bs.TOKEN, bs.KEEPER)
        for repo in (bs.RESULTS, bs.REQUESTS):
            hub.state.create_repo(f"datasets/{repo}", writers=[bs.KEEPER])
        results, requests = bs.synthesise(entry, args.entries, 0.5, generate_key(root / "worker.key"))
        hub.state.commit(f"datasets/{bs.RESULTS}", "main", results, author=bs.KEEPER, title="entries")
        hub.state.commit(f"datasets/{bs.REQUESTS}", "main", requests, author=bs.KEEPER, title="requests")
        os.environ.update({"HF_ENDPOINT": hub.url, "HF_TOKEN": bs.TOKEN, "HF_HUB_DISABLE_PROGRESS_BARS": "1"})
        ref = RepoRef(bs.RESULTS, None, "--from")
        bs.fresh_cache(root)
        out["from_cold"], _ = bs.timed(lambda: load_board_from_repo(ref, None))
        bs.fresh_cache(root)
        out["from_cold_requests"], _ = bs.timed(lambda: load_board_from_repo(ref, bs.REQUESTS))
        bs.fresh_cache(root)
        out["served"] = bs.served_times(LiveBoard(ref, bs.REQUESTS, check_s=1.0), 4)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
