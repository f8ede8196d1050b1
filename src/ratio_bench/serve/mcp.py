"""``ratio mcp``: inspiration search as tools for agents, over the Model Context Protocol (the official SDK).

Two tools over one loaded index: ``search_inspirations(text, moves, k, role_prior)``, the answer and provenance of ``POST
/api/search`` (the same :class:`~ratio_bench.serve.search.Searcher`, the same limits: 1 to 2,000 characters, k
from 1 to 100, moves of the index), and ``describe_index()``, the body of ``GET /api/health``. A query the
searcher refuses is a tool error carrying the API's message, so an agent reads what to change. Transports: stdio
(an agent starts ``ratio mcp`` itself) or streamable HTTP (``--http HOST:PORT``, path ``/mcp``, loopback by
default as ``ratio serve`` is).
"""

# No ``from __future__ import annotations``: the SDK reads the tools' annotations (the input schema) at runtime,
# and they name types imported inside create_server (mcp and pydantic are the serve extra's, imported lazily).
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, ValidationError

from ratio_bench import __version__
from ratio_bench.core import extras
from ratio_bench.serve.search import DEFAULT_K, MAX_K, MAX_QUERY_CHARS, QueryError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from starlette.applications import Starlette

    from ratio_bench.serve.search import Searcher

MCP_PATH = "/mcp"


def create_server(searcher: "Searcher") -> "MCPServer":
    """The MCP server over a loaded searcher (tests pass one built in-process)."""
    ToolError = extras.load("mcp.server.mcpserver.exceptions").ToolError

    SearchResponse = extras.load("ratio_bench.serve.app").SearchResponse  # noqa: N806 - the serve extra
    server = _strict_server_class()(
        "ratio",
        version=__version__,
        instructions="Find sentences from other papers that address, broaden or specify a given sentence "
        "(a problem, a claim, an idea), with the paper each comes from.",
        log_level="WARNING",
    )

    @server.tool()
    def search_inspirations(
        text: Annotated[
            str,
            Field(description=f"the sentence to find inspirations for (1 to {MAX_QUERY_CHARS:,} characters)"),
        ],
        moves: Annotated[
            list[str] | None,
            Field(description="a subset of the index's moves: address, broaden, specify (default: all)"),
        ] = None,
        k: Annotated[int, Field(ge=1, le=MAX_K, description="results per move")] = DEFAULT_K,
        role_prior: Annotated[
            bool,
            Field(
                description="rank first the sentences the release mined as the move's gold (default false: "
                "the model's ranking alone); the answer's role_prior says whether it was used"
            ),
        ] = False,
    ) -> SearchResponse:
        """Top-k sentences per ideation move: Address (approaches to the stated problem), Broaden (the statement
        at a broader scope), Specify (a concrete case of it); each with its score, paper id, title, date,
        venue, section and source link."""
        try:  # the arguments were checked against SearchRequest already (StrictServer.call_tool)
            results = searcher.search(text, moves, k, role_prior)
        except QueryError as e:  # the API's own checks and messages (empty or too long text, unknown move)
            raise ToolError(str(e)) from e
        return SearchResponse(query=text, k=k, role_prior=searcher.prior_used(role_prior), results=results)

    @server.tool()
    def describe_index() -> dict[str, Any]:
        """The index's moves, candidate count, model per move, search mode, source and query limits."""
        return searcher.describe()

    return server


def _strict_server_class() -> type:
    """An MCPServer whose ``search_inspirations`` arguments are validated by the API's own
    :class:`~ratio_bench.serve.app.SearchRequest` before the SDK sees them. The SDK's own validation is lax on
    purpose (it parses ``"5"`` as JSON into 5, coerces ``true`` to 1 and drops unknown arguments), so the raw
    arguments are checked first and only a valid call reaches it."""
    MCPServer = extras.load("mcp.server.mcpserver").MCPServer
    ToolError = extras.load("mcp.server.mcpserver.exceptions").ToolError

    app = extras.load("ratio_bench.serve.app")  # the serve extra

    class StrictServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
            if name == "search_inspirations":
                try:
                    arguments = app.SearchRequest.model_validate(arguments).model_dump()
                except ValidationError as e:
                    raise ToolError(app.first_error(e.errors())) from None
            elif name == "describe_index" and arguments:
                raise ToolError(f"{sorted(arguments)[0]}: describe_index takes no arguments")
            return await super().call_tool(name, arguments, context)

    return StrictServer


def http_app(server: "MCPServer", host: str) -> "Starlette":
    """The streamable HTTP app at ``/mcp`` (with the SDK's DNS-rebinding protection for ``host``)."""
    return server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
