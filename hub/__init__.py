"""The Hugging Face Hub: publish a release folder, fetch a published one. One translation of Hub errors."""

from .errors import HubError, PublishError
from .fetch import fetch_release, is_hub_spec

__all__ = ["HubError", "PublishError", "fetch_release", "is_hub_spec"]
