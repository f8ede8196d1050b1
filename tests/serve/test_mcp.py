"""``ratio mcp``: the SDK's own client over stdio (the command as a subprocess) and streamable HTTP (in-process)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402
from tests.helpers.browser import serve_in_thread  # noqa: E402

from ratio_bench.serve.mcp import MCP_PATH, create_server, http_app  # noqa: E402

QUERY = "Dense retrievers miss rare technical terms in scientific queries."
SRC = str(Path(__file__).resolve().parents[2] / "src")


async def _session(server) -> dict:
    """What an agent sees: the tool list, one search, its description of the index, and three refusals."""
    async with Client(server, read_timeout_seconds=120) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        found = await client.call_tool("search_inspirations", {"text": QUERY, "moves": ["address"], "k": 2})
        described = await client.call_tool("describe_index", {})
        errors = [
            await client.call_tool("search_inspirations", arguments)
            for arguments in ({"text": " "}, {"text": "x" * 2001}, {"text": "ok", "moves": ["expand"]})
        ]
        too_many = await client.call_tool("search_inspirations", {"text": "ok", "k": 101})
    return {"tools": tools, "found": found, "described": described, "errors": errors, "too_many": too_many}


def _check(seen: dict, searcher) -> None:
    tools = seen["tools"]
    assert sorted(tools) == ["describe_index", "search_inspirations"]
    schema = tools["search_inspirations"].input_schema["properties"]
    assert (
        schema["k"]["maximum"] == 100
        and schema["k"]["minimum"] == 1
        and set(schema) == {"text", "moves", "k", "role_prior"}
        and schema["role_prior"]["default"] is False
    )
    found = seen["found"]
    assert not found.is_error
    assert found.structured_content == {
        "query": QUERY,
        "k": 2,
        "role_prior": False,  # off by default (and an index of own papers has no mined roles)
        "results": searcher.search(QUERY, ["address"], 2, role_prior=True),
    }
    assert seen["described"].structured_content == searcher.describe()
    messages = [e.content[0].text for e in seen["errors"]]
    assert all(e.is_error for e in seen["errors"])
    assert "text is empty" in messages[0] and "at most 2000 characters" in messages[1]  # the API's words
    assert "unknown move 'expand'" in messages[2]
    assert seen["too_many"].is_error and "k" in seen["too_many"].content[0].text


def test_stdio_transport_runs_the_command(bm25_index, searcher):
    env = {k: v for k, v in os.environ.items() if k != "RATIO_DEBUG"} | {"PYTHONPATH": SRC}
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "ratio_bench", "mcp", "--index", str(bm25_index)], env=env
    )
    _check(anyio.run(_session, server), searcher)


def test_streamable_http_transport(searcher):
    with serve_in_thread(http_app(create_server(searcher), "127.0.0.1")) as url:
        _check(anyio.run(_session, url + MCP_PATH), searcher)


async def _refusals(server, calls: list[tuple[str, dict]]) -> list:
    async with Client(server, read_timeout_seconds=60) as client:
        return [await client.call_tool(name, arguments) for name, arguments in calls]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"text": "graph networks", "k": "5"}, "k: Input should be a valid integer"),
        ({"text": "graph networks", "k": True}, "k: Input should be a valid integer"),
        ({"text": "graph networks", "k": 5.0}, "k: Input should be a valid integer"),
        ({"text": "graph networks", "limit": 3}, "limit: Extra inputs are not permitted"),
        ({"text": "graph networks", "moves": '["address"]'}, "moves: Input should be a valid list"),
        ({"text": " \t\n\u00a0\u3000"}, "text is empty"),
        ({"text": "\u200b\ufeff\u200b"}, "text is empty"),  # zero-width: str.strip keeps them
        ({"text": 7}, "text: Input should be a valid string"),
    ],
)
def test_tool_arguments_are_as_strict_as_the_api(searcher, arguments, message):
    """The SDK alone answers k "5" and true (parsed, coerced), ignores unknown arguments and searches for
    zero-width text; the API's SearchRequest refuses each, with the same message over MCP and HTTP."""
    from fastapi.testclient import TestClient

    from ratio_bench.serve.app import create_app

    (result,) = anyio.run(_refusals, create_server(searcher), [("search_inspirations", arguments)])
    assert result.is_error and message in result.content[0].text, result.content[0].text
    api = TestClient(create_app(searcher)).post("/api/search", json=arguments)
    assert api.status_code == 422 and message in api.json()["error"]


def test_describe_index_takes_no_arguments(searcher):
    (result,) = anyio.run(_refusals, create_server(searcher), [("describe_index", {"verbose": True})])
    assert result.is_error and "verbose" in result.content[0].text
