"""Side-panel conversations with Agent Client Protocol agents that the server starts."""
