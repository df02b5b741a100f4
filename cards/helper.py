"""Render a release's card in a helper process, started before the caller loads anything heavy.

The card library (Jinja2 and PyYAML) takes 0.1 s to import, and the builder's sympy 0.3 s. A
build forks this helper first thing: the helper imports the card library while the build
imports sympy, then renders the card when the manifest is ready. A
plain forked process and a pipe (no pool: a pool's threads would stop the build forking its
own workers). Where forking is not safe (`can_fork`), the card is rendered here.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.connection import Connection
from typing import Any

from mathbode.core.forking import can_fork, ignore_sigint, sigint_held
from mathbode.schema.manifest import Manifest

from .render import FamilyFacts, card_library, render_card


def _serve(conn: Connection, builds_end: Connection) -> None:
    # Ctrl-C reaches the whole process group: the build handles it and ends this helper, which
    # must not print a KeyboardInterrupt traceback of its own.
    ignore_sigint()
    # The fork copied the build's end of the pipe too: closed here, the build closing its own is
    # an end of file at once (held open, a build that stopped early waited out the join's timeout).
    builds_end.close()
    card_library()
    try:
        request = conn.recv()
    except EOFError:  # the build ended without a card
        return
    try:
        answer: tuple[str, Any] = ("ok", render_card(*request))
    except Exception as err:  # sent back, raised by the caller
        answer = ("error", err)
    try:
        conn.send(answer)
    except OSError:  # the build stopped (Ctrl-C) after asking: nobody is left to read the card
        return


class CardHelper:
    """`with CardHelper() as helper: ... card = helper.render(manifest, facts)`."""

    def __enter__(self) -> "CardHelper":
        self._conn: Connection | None = None
        self._process: Any = None
        if can_fork():
            ours, theirs = multiprocessing.Pipe()
            self._process = multiprocessing.get_context("fork").Process(target=_serve, args=(theirs, ours), daemon=True)
            with sigint_held():
                self._process.start()
            theirs.close()
            self._conn = ours
        return self

    def render(self, manifest: Manifest, families: list[FamilyFacts]) -> str:
        """The card's text, from the helper (or rendered here if there is none, or it died)."""
        if self._conn is not None:
            try:
                self._conn.send((manifest, families))
                status, value = self._conn.recv()
            except (EOFError, OSError):
                status, value = "gone", None
            if status == "ok":
                return str(value)
            if status == "error":
                raise value
        return render_card(manifest, families)

    def __exit__(self, *exc: object) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._process is not None:
            self._process.join(timeout=5)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
