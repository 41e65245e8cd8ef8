"""The connected pages and the notebook they hold: the bridge protocol, which page answers a call,
the kernel sessions that hold the tools, context entries, the notebook reader and the live
shared document.
"""
