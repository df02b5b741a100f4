"""The builder's version: recorded in every release's MANIFEST.json and dataset card."""

__version__ = "0.1.0"
