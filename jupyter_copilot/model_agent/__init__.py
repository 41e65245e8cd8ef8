"""The built-in model agent: an ACP agent that answers with a model endpoint the admin chose.

It runs as its own process, like the demo agent, and reaches the notebook only through the
MCP server its client names in ``session/new`` (docs/security.md, "The built-in model agent").
"""
