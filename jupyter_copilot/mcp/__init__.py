"""The MCP endpoint: tools for agents, paging and the HTTP transport (grants: callers.py)."""
