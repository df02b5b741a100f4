"""The package version (also the builder version recorded in a release's manifest)."""

__version__ = "0.1.0"
