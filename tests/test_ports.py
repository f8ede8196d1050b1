"""``make test`` shares the machine with other programs: no test may bind a fixed port or aim at one it expects to
be closed (a server takes port 0; a dead endpoint takes :func:`tests.helpers.ports.unused_url`)."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
FIXED = re.compile(
    r"""(?x)
    \bport\s*=\s*[1-9]\d*               # port=8000
    | \bbind\(\(\s*["'][^"']+["']\s*,\s*[1-9]\d*  # socket.bind(("127.0.0.1", 8000))
    | ["']--port["']\s*,\s*["']?[1-9]\d*  # "--port", "8000"
    | HubServer\(\s*[1-9]\d*            # HubServer(8765)
    | ["']--http["']\s*,\s*["'][^"']*:[1-9]\d*["']  # mcp --http 127.0.0.1:8765
    | http://127\.0\.0\.1:9\b           # the discard port: something may listen there
    """
)


def test_no_test_binds_or_aims_at_a_fixed_port():
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == Path(__file__):
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if FIXED.search(line) and "fixed-port-ok" not in line:
                found.append(f"{path.relative_to(TESTS)}:{i}: {line.strip()}")
    assert not found, "\n".join(found)
