"""The package version, read by hatchling."""

__version__ = "0.1.0"
