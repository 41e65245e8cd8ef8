"""The Jupyter server extension: the app, its HTTP and WebSocket handlers and routes, and the
adapters to jupyter_server, tornado and the contents manager.
"""
