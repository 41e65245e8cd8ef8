"""The shipped offline demo agent: a rule-based ACP agent that edits cells through MCP.

Run it with ``jupyter-copilot-demo-agent`` (or ``python -m jupyter_copilot.demo_agent``); it
speaks the Agent Client Protocol over stdio. :mod:`.rules` holds its pure transforms and
:mod:`.agent` the ACP side.
"""
