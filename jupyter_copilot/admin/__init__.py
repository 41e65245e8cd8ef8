"""What an administrator sets and sees: settings that fail closed, the feature switch and the kill
switch, the ``jupyter copilot`` command, content-free events.
"""
