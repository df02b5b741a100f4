"""Read a published release back from the Hugging Face Hub: `hub:ORG/NAME[@REVISION]`.

The files are fetched with `huggingface_hub.snapshot_download` into the local cache and then
checked like any release folder, so a published copy is validated against its own manifest.
"""

from __future__ import annotations

from pathlib import Path

from .errors import MathBodeError, UsageError

PREFIX = "hub:"


class HubError(MathBodeError):
    """The release could not be fetched from the Hub."""


def transport_errors() -> tuple[type[BaseException], ...]:
    """Network failures as the installed Hub client raises them (its HTTP library changed over versions)."""
    import importlib

    found: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for module, name in (("httpx2", "TransportError"), ("httpx", "TransportError"), ("requests", "ConnectionError")):
        try:
            found.append(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    return tuple(found)


def is_hub_spec(spec: str | Path) -> bool:
    return isinstance(spec, str) and spec.startswith(PREFIX)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """'hub:ORG/NAME@rev' -> ('ORG/NAME', 'rev')."""
    repo_id, _, revision = spec[len(PREFIX) :].partition("@")
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise UsageError(f"{spec}: expected hub:ORG/NAME or hub:ORG/NAME@REVISION.")
    return repo_id, revision or None


def fetch_release(spec: str, token: str | None = None) -> Path:
    """Download (or reuse from the cache) the files of a published release; returns the local folder."""
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import (
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    repo_id, revision = parse_spec(spec)
    try:
        return Path(snapshot_download(repo_id, repo_type="dataset", revision=revision, token=token))
    except RevisionNotFoundError:
        raise HubError(f"{spec}: the revision {revision!r} does not exist in {repo_id}.") from None
    except RepositoryNotFoundError:
        raise HubError(
            f"{spec}: no such dataset repository on {constants.ENDPOINT} (or it is private: set HF_TOKEN)."
        ) from None
    except HfHubHTTPError as err:
        raise HubError(f"{spec}: the Hub refused the download ({err.server_message or err}).") from None
    except (LocalEntryNotFoundError, *transport_errors()) as err:
        raise HubError(
            f"{spec}: cannot reach {constants.ENDPOINT} and no cached copy exists "
            f"({type(err).__name__}). Check the network connection and HF_ENDPOINT."
        ) from None
