"""Read a published release back from the Hugging Face Hub: `hub:ORG/NAME[@REVISION]`.

The files are fetched with `huggingface_hub.snapshot_download` into the local cache and then
checked like any release folder, so a published copy is validated against its own manifest.
"""

from __future__ import annotations

from pathlib import Path

from mathbode.core.errors import UsageError

from .errors import hub_errors

PREFIX = "hub:"


def is_hub_spec(spec: object) -> bool:
    return isinstance(spec, str) and spec.startswith(PREFIX)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """'hub:ORG/NAME@rev' -> ('ORG/NAME', 'rev')."""
    repo_id, _, revision = spec[len(PREFIX) :].partition("@")
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise UsageError(f"{spec}: expected hub:ORG/NAME or hub:ORG/NAME@REVISION.")
    return repo_id, revision or None


def snapshot_boundary(folder: Path) -> Path:
    """Where a downloaded snapshot's files may lead: its files are links into the repository's cache folder."""
    return folder.parent.parent if folder.parent.name == "snapshots" else folder


def fetch_release(spec: str, token: str | None = None) -> Path:
    """Download (or reuse from the cache) the files of a published release; returns the local folder."""
    from huggingface_hub import constants, snapshot_download

    repo_id, revision = parse_spec(spec)
    with hub_errors(constants.ENDPOINT, repo_id, spec=spec, revision=revision, token=token):
        folder = snapshot_download(repo_id, repo_type="dataset", revision=revision, token=token)
    return Path(folder)
