"""The notebook tools: each tool's spec, what the tools that propose a change share, the edit,
insert and run tools, and approval cards.
"""
