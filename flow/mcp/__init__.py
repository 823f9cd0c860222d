"""The MCP face: `mdchunks mcp`, a Model Context Protocol server (the official
Python SDK, the `mcp` extra) over the Python API (docs/mcp.md). Read-only:
search, outline, read_section, read_chunk and list_sources, with the
embedding model loaded once per server process.

May use the Python API and the rooms below it; never SQL of its own. Nothing
imports it but the CLI's `mcp` command (docs/layout.md).
"""
