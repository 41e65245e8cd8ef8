"""The MCP endpoint: tools for agents, grants, paging and the HTTP transport."""
