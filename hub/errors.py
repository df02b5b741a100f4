"""Hub and network failures, translated once into messages a user can act on.

Both publishing and fetching go through `hub_errors`; the token never appears in a message.
"""

from __future__ import annotations

import importlib
import os
from contextlib import contextmanager
from typing import Iterator

from mathbode.core.errors import MathBodeError
from mathbode.core.redact import redact


class HubError(MathBodeError):
    """The Hub could not be reached, or refused the request."""


class PublishError(HubError):
    """The push could not be done; nothing was half-published (a commit is all or nothing)."""


def transport_errors() -> tuple[type[BaseException], ...]:
    """Network failures as the installed Hub client raises them (its HTTP library changed over versions)."""
    found: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for module, name in (("httpx2", "TransportError"), ("httpx", "TransportError"), ("requests", "ConnectionError")):
        try:
            found.append(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    return tuple(found)


def _tokens_in_use(token: str | None) -> tuple[str | None, ...]:
    """Every token the client may have sent: the one passed, HF_TOKEN, the saved login. A token
    need not look like `hf_...` (an enterprise Hub, a proxy's own), so each is redacted by value."""
    from huggingface_hub import get_token

    try:
        saved = get_token()
    except Exception:  # an unreadable token file: nothing of it can be in a message either
        saved = None
    return (token, os.environ.get("HF_TOKEN"), os.environ.get("HUGGING_FACE_HUB_TOKEN"), saved)


def _said(err: Exception, tokens: tuple[str | None, ...] = ()) -> str:
    """What the server said, if it is text worth printing: one line, no control characters, no credential."""
    text = str(getattr(err, "server_message", None) or err)
    shown = "".join(ch for ch in text if ch.isprintable() or ch == "\n")
    if not text or len(shown) < 0.9 * len(text):
        return " with an answer that is not text"
    # Redacted before the cut to one line and 300 characters: a cut must not leave half a token.
    shown = redact(shown, *tokens)
    return f": {shown.splitlines()[0][:300] if shown else ''}"


@contextmanager
def hub_errors(
    endpoint: str, repo_id: str, spec: str | None = None, revision: str | None = None, token: str | None = None
) -> Iterator[None]:
    """Translate what the Hub client raises inside the block into a `HubError` that says what to do.

    Publishing (`spec` None) raises `PublishError`s about `repo_id`; reading back a release
    (`spec` = the user's `hub:ORG/NAME[@REV]`) raises `HubError`s about the spec. `token`, the
    token in use, is redacted from whatever the server's answer echoes, whatever its form.
    """
    from huggingface_hub.errors import (
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    reading = spec is not None
    network: tuple[type[BaseException], ...] = (LocalEntryNotFoundError, *transport_errors())
    try:
        yield
    except RevisionNotFoundError:
        if reading:
            raise HubError(f"{spec}: the revision {revision!r} does not exist in {repo_id}.") from None
        raise PublishError(
            f"{repo_id}: the branch does not exist on the Hub. Create it first or omit --revision."
        ) from None
    except RepositoryNotFoundError:
        if reading:
            raise HubError(
                f"{spec}: no such dataset repository on {endpoint} (or it is private: set HF_TOKEN)."
            ) from None
        raise PublishError(
            f"{repo_id}: no such dataset repository, or the token may not see it. "
            "Check --repo-id and that the token belongs to a member of the organization."
        ) from None
    except HfHubHTTPError as err:
        tokens = _tokens_in_use(token)
        if reading:
            raise HubError(f"{spec}: the Hub refused the download{_said(err, tokens)}.") from None
        status = err.response.status_code if err.response is not None else None
        if status == 401:
            raise PublishError(
                "The Hub rejected the token (401 Unauthorized). Pass a valid write token with --token or HF_TOKEN, "
                "or log in with `hf auth login`."
            ) from None
        if status == 403:
            raise PublishError(
                f"The token may not write to {repo_id} (403 Forbidden). Use a token with write access to its "
                "organization, or --create-pr to propose the change."
            ) from None
        raise PublishError(f"The Hub refused the request ({status}){_said(err, tokens)}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        # The client could not make sense of the answer: an HTML page, bytes that are not UTF-8, JSON
        # of another shape. Whatever sits at the endpoint is not a Hub API (a proxy, a login page).
        said = redact(str(err), *_tokens_in_use(token))
        what = f"{type(err).__name__}: {said.splitlines()[0][:120] if said else ''}"
        target = spec if reading else repo_id
        error = HubError if reading else PublishError
        raise error(
            f"{target}: the server at {endpoint} answered something that is not a Hugging Face Hub API answer "
            f"({what}). Check HF_ENDPOINT and any proxy in between."
        ) from None
    except network as err:
        if reading:
            raise HubError(
                f"{spec}: cannot reach {endpoint} and no cached copy exists "
                f"({type(err).__name__}). Check the network connection and HF_ENDPOINT."
            ) from None
        raise PublishError(
            f"Cannot reach the Hub at {endpoint} ({type(err).__name__}). Check the network connection and HF_ENDPOINT."
        ) from None
