"""The protocol's vocabulary and shapes: refusal codes, the registry of page manifests and tool
definitions, who calls and what a caller may read, bounded JSON.
"""
