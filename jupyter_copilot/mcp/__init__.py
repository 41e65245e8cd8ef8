"""The MCP endpoint: the tools agents call, the skill library and the HTTP transport (grants:
protocol/callers.py; paging: page/cellpages.py).
"""
