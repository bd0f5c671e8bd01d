"""The smallest MCP server for ``benchmarks/mcp_sessions.py``: one ``echo`` tool over stdio."""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP


def main() -> None:
    server = FastMCP("echo", log_level="WARNING")

    @server.tool()
    def echo(text: str) -> str:
        """Answer with the text."""
        return text

    server.run()


if __name__ == "__main__":
    main()
