"""Atomic writes: a whole folder or a whole file appears at once, or not at all.

An interrupted write leaves the previous folder or file (or nothing) in place, never a mix, and
no temporary left behind. The release builder, the report writer and the request writers use it.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import stat
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

from .digests import file_sha256
from .errors import UsageError
from .version import __version__

#: The file in every folder mathbode writes that lists each file it wrote, with its sha256: the
#: proof that lets a later run replace the folder. We only ever delete what we can prove we wrote.
OWNERSHIP_FILE = ".mathbode-written.json"
#: An ownership record lists a few files (a report with many submissions, a few thousand); a
#: bigger one is not a record of ours and is not read.
MAX_RECORD_BYTES = 4 << 20


def real_path(path: Path, option: str = "") -> Path:
    """`path` with every link followed; a loop of links is a user error naming the path (Python
    raises RuntimeError for it, which no caller expects)."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as err:
        if isinstance(err, RuntimeError) or err.errno == errno.ELOOP:
            named = f"{option} {path}" if option else str(path)
            raise UsageError(
                f"{named}: a loop of symbolic links (a link that leads back to itself); give a real file or folder."
            ) from None
        raise


def read_json_file(path: Path, max_bytes: int = MAX_RECORD_BYTES) -> Any:
    """The JSON document in `path`, read only if it is a regular file of at most `max_bytes`.

    A FIFO at the name would block the read forever, a link could point anywhere, and a document
    nested thousands deep raises RecursionError: each is a ValueError here, so a caller that
    refuses an unreadable record refuses these too.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)  # O_NONBLOCK: opening a FIFO does not wait for a writer
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{path}: not a regular file")
        if info.st_size > max_bytes:
            raise ValueError(f"{path}: more than {max_bytes:,} bytes")
        with os.fdopen(os.dup(fd), "rb") as stream:
            data = stream.read(max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise ValueError(f"{path}: more than {max_bytes:,} bytes")
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply to be read") from None


def read_text_file(path: Path, max_bytes: int, what: str) -> str:
    """The UTF-8 text of `path`, read only if it is a regular file of at most `max_bytes`; a
    UsageError naming the file otherwise. A FIFO would block a plain read forever (opened here
    without waiting for a writer, then refused), /dev/zero would fill the memory."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise UsageError(f"{path}: cannot be read as a {what} ({err.strerror}).") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(
                f"{path}: not a regular file (a pipe, device or socket); a {what} is a file: give that file."
            )
        with os.fdopen(os.dup(fd), "rb") as stream:
            data = stream.read(max_bytes + 1)
    except OSError as err:
        raise UsageError(f"{path}: cannot be read as a {what} ({err.strerror}).") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise UsageError(f"{path}: more than {max_bytes:,} bytes, larger than any {what} mathbode writes; not read.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UsageError(f"{path}: not UTF-8 text (byte {err.start:,}); not a {what}.") from None


def check_replaceable(out: Path, kind: str, option: str = "--out") -> None:
    """Refuse a target that is a file, or a non-empty folder we cannot prove we wrote: one with no
    ownership record of this `kind` (report, release), a file the record does not list, or a
    listed file changed since. A missing or empty folder is always fine."""
    _check_target(out, option, folder=True)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{option} {out}: exists and is not a folder. Choose another {option}.")
    if out.is_dir() and any(out.iterdir()):
        _check_owned(out, kind, option)
    parent = real_path(out, option).parent
    if not parent.is_dir():
        raise UsageError(f"{option} {out}: the parent folder {parent} does not exist.")


def _check_owned(out: Path, kind: str, option: str, meanwhile: bool = False) -> dict[str, str]:
    """The files `out`'s ownership record lists (relative path -> sha256), once every file in the
    folder is proved ours; otherwise a UsageError saying what is not (`meanwhile`: checked again
    at the swap, after the command's work, so the message says the folder changed meanwhile)."""
    refuse = f"refusing to replace it. Choose another {option}, or empty the folder yourself."
    if meanwhile:
        refuse = (
            "it changed while mathbode was writing, and nothing was replaced. Move your files out of the folder "
            "and run the command again."
        )
    try:
        record = read_json_file(out / OWNERSHIP_FILE)
        listed, written = record["files"], record["kind"]
        if not (isinstance(listed, dict) and all(isinstance(v, str) for v in listed.values())):
            raise TypeError
    except (OSError, ValueError, KeyError, TypeError):
        raise UsageError(
            f"{option} {out}: the folder is not empty and mathbode did not write it (no readable {OWNERSHIP_FILE} "
            f"listing its files); {refuse}"
        ) from None
    if written != kind:
        raise UsageError(f"{option} {out}: holds a MathBode {written}, not a {kind}; {refuse}")
    foreign, changed = _unproved(out, listed)
    if foreign or changed:
        said = []
        if foreign:
            said.append(f"files mathbode did not write ({_some(foreign)})")
        if changed:
            said.append(f"files changed since mathbode wrote them ({_some(changed)})")
        raise UsageError(f"{option} {out}: holds {' and '.join(said)}; {refuse}")
    return listed


def _unproved(folder: Path, listed: dict[str, str]) -> tuple[list[str], list[str]]:
    """(files the record does not list, listed files changed since) in `folder`."""
    ancestors = {str(parent) for rel in listed for parent in Path(rel).parents}
    foreign, changed = [], []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if rel == OWNERSHIP_FILE or (path.is_dir() and not path.is_symlink() and rel in ancestors):
            continue
        if rel not in listed or path.is_symlink() or not path.is_file():
            foreign.append(rel)
        elif file_sha256(path) != listed[rel]:
            changed.append(rel)
    return foreign, changed


def _some(names: list[str], shown: int = 5) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def write_ownership(folder: Path, kind: str) -> None:
    """List every file in `folder` (what a later run may replace) in its ownership record."""
    files = {
        path.relative_to(folder).as_posix(): file_sha256(path)
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink() and path.name != OWNERSHIP_FILE
    }
    record = {"written_by": "mathbode", "version": __version__, "kind": kind, "files": files}
    (folder / OWNERSHIP_FILE).write_text(
        json.dumps(record, indent=1, sort_keys=True, allow_nan=False) + "\n", encoding="utf-8"
    )


def _check_target(out: Path, option: str, folder: bool) -> None:
    """Refuse targets that cannot be swapped in whole: the current folder (or a parent), or a folder for a file."""
    try:
        str(out).encode("utf-8")
    except UnicodeEncodeError:
        # Bytes that are not UTF-8 in the name: every file we write names its folder in UTF-8.
        raise UsageError(f"{option} {str(out)!r}: the name is not valid UTF-8; choose another name.") from None
    if folder and out.is_symlink():
        # The folder is replaced whole by a rename: through a link, the link itself would be
        # replaced (and the user's link moved aside). Refused before anything is written.
        raise UsageError(
            f"{option} {out}: is a symbolic link (to {os.readlink(out)}); mathbode replaces the folder whole and "
            f"will not replace your link. Give the folder it points to, or another {option}."
        )
    if out.name in ("", ".", "..") or Path.cwd().resolve().is_relative_to(real_path(out, option)):
        what = "a folder" if folder else "a file"
        raise UsageError(
            f"{option} {str(out) or repr('')}: name {what} to write, not the current folder or one above it."
        )
    if not folder and out.is_dir():
        raise UsageError(f"{option} {out}: is a folder; give the name of a file to write.")
    if not folder and out.exists() and not out.is_file():
        # A device, pipe or socket: replacing it with a regular file would destroy it (as root, /dev/null).
        raise UsageError(f"{option} {out}: is not a regular file (a device, pipe or socket); give a file to write.")


def _temporary(make, out: Path, option: str, folder: bool):
    _check_target(out, option, folder)
    parent = real_path(out, option).parent
    if not parent.is_dir():
        raise UsageError(f"{option} {out}: the folder {parent} does not exist.")
    if folder:
        recover_leftovers(out)
    try:
        # The pid in the name tells a later run whether the writer is still alive.
        return make(prefix=f".{out.name}.tmp-{os.getpid()}-", dir=parent)
    except OSError as err:
        raise UsageError(
            f"{option} {out}: cannot write in {parent} ({err.strerror}). Choose another {option}."
        ) from None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _leftovers(out: Path, kind: str) -> list[tuple[Path, int]]:
    """`.NAME.KIND-PID-*` folders beside `out` whose writer is no longer running."""
    prefix = f".{out.name}.{kind}-"
    found = []
    for path in out.resolve().parent.glob(f"{prefix}*"):
        pid_text = path.name[len(prefix) :].split("-", 1)[0]
        if pid_text.isdigit() and int(pid_text) != os.getpid() and not _alive(int(pid_text)):
            found.append((path, int(pid_text)))
    return found


def recover_leftovers(out: Path) -> None:
    """Undo what a killed writer of `out` left: put a moved-aside folder back, remove temporaries.

    Where the two-rename fallback was interrupted between its renames, the previous folder sits in
    `.NAME.old-PID-*/NAME` and nothing is at `out`: it is moved back. Everything else left by a
    dead writer (half-written `.NAME.tmp-PID-*` folders, old copies) is removed.
    """
    for old, _ in _leftovers(out, "old"):
        kept = old / out.name
        if kept.is_dir() and not os.path.lexists(out):
            os.replace(kept, out)
        shutil.rmtree(old, ignore_errors=True)
    for tmp, _ in _leftovers(out, "tmp"):
        shutil.rmtree(tmp, ignore_errors=True)


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False where that is unavailable."""
    if os.environ.get("MATHBODE_NO_EXCHANGE") or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EPERM, errno.ENOTSUP):  # not supported by this file system
        return False
    raise OSError(code, os.strerror(code), str(b))


def _between_renames() -> None:
    """The moment the two-rename fallback has no folder at the target (a test kills the process here)."""


def _before_swap() -> None:
    """The moment before the new folder takes the old one's place (a test saves a file here)."""


def _after_swap(old: Path) -> None:
    """The moment the old folder, at `old`, is out of place and not yet removed (a test writes into it)."""


def _swap(new: Path, out: Path, parent: Path) -> tuple[Path, Path | None]:
    """Put `new` at `out`; returns where the old folder now is, and the holder made for it (if any)."""
    try:
        if _exchange(new, out):
            return new, None
        holder = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-{os.getpid()}-", dir=parent))
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)  # nothing was swapped: `out` is as it was
        raise
    try:
        os.replace(out, holder / out.name)
        _between_renames()
        os.replace(new, out)
    except BaseException:
        if not os.path.lexists(out) and (holder / out.name).exists():
            os.replace(holder / out.name, out)  # the old folder back where it was
        shutil.rmtree(new, ignore_errors=True)
        if not (holder / out.name).exists():
            shutil.rmtree(holder, ignore_errors=True)
        raise
    return holder / out.name, holder


def _swap_back(old: Path, out: Path, holder: Path | None) -> None:
    """Undo `_swap`: the old folder back at `out`, the new one back at `old`'s place."""
    if holder is None:
        if not _exchange(old, out):  # pragma: no cover - the exchange just worked
            raise OSError(errno.EIO, "cannot put the folder back", str(out))
        return
    os.replace(out, holder / ".new")
    os.replace(old, out)


def _remove_written(old: Path, listed: dict[str, str], out: Path, option: str) -> None:
    """Delete the files of `old` its record lists, then its emptied folders: nothing else. What
    appeared in the instant since the last check stays, in a folder beside `out` that no later
    run deletes, and the command says where."""
    # Only files found inside `old` are candidates: a record's names (`../x`, `/etc/x`) are never
    # joined onto the folder, so nothing outside it can be reached through them.
    for path in sorted(old.rglob("*")):
        rel = path.relative_to(old).as_posix()
        if rel in listed and path.is_file() and not path.is_symlink() and file_sha256(path) == listed[rel]:
            path.unlink()
    (old / OWNERSHIP_FILE).unlink(missing_ok=True)
    for folder in sorted((p for p in old.rglob("*") if p.is_dir() and not p.is_symlink()), reverse=True):
        try:
            folder.rmdir()
        except OSError:
            pass  # not empty: something not ours is in it
    try:
        old.rmdir()
    except OSError:
        kept = Path(tempfile.mkdtemp(prefix=f"{out.name}.saved-", dir=old.parent))
        os.replace(old, kept / out.name)
        raise UsageError(
            f"{option} {out}: was replaced, but files were saved into the old folder as it was being removed; "
            f"they are kept in {kept / out.name}."
        ) from None


@contextmanager
def atomic_folder(out: Path, kind: str, option: str = "--out") -> Iterator[Path]:
    """Yield a temporary folder; on success it replaces `out`, on any failure it is removed.

    Before the swap the folder gets its ownership record (every file in it, with its sha256), so
    a later run can prove the folder is ours (`check_replaceable`).

    The old folder is proved ours again at the moment it is replaced, not only when the command
    started: a build or a report takes seconds to minutes, and a file saved into the folder
    meanwhile (notes.txt) is the user's. Such a folder is left as it is and the command refused.
    After the swap the old folder is checked once more and only the files it lists are deleted.

    The swap is one system call on Linux, so `out` always holds the old or the new folder. Where
    that call is missing, the old folder is moved aside first; a run killed between the two
    renames is repaired by the next write to `out` (`recover_leftovers`).
    """
    tmp = Path(_temporary(tempfile.mkdtemp, out, option, folder=True))
    parent = tmp.parent
    try:
        tmp.chmod(0o755)  # mkdtemp makes it private; outputs are for everyone to read
        yield tmp
        write_ownership(tmp, kind)
        _before_swap()
        if not os.path.lexists(out):
            os.replace(tmp, out)
            return
        _check_target(out, option, folder=True)  # a link put there meanwhile is not replaced either
        if not out.is_dir():
            raise UsageError(f"{option} {out}: exists and is not a folder. Choose another {option}.")
        listed = _check_owned(out, kind, option, meanwhile=True) if any(out.iterdir()) else {}
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    # From here the old folder may be out of place: it is never removed whole, only the files it lists.
    old, holder = _swap(tmp, out, parent)
    try:
        _after_swap(old)
        foreign, changed = _unproved(old, listed)
    except BaseException:
        _remove_written(old, listed, out, option)
        raise
    if foreign or changed:
        _swap_back(old, out, holder)
        shutil.rmtree(holder if holder is not None else tmp)  # the new folder, back out of place
        raise UsageError(
            f"{option} {out}: files were saved into it while mathbode was writing "
            f"({_some(foreign + changed)}); nothing was replaced. Move them out of the folder and run "
            "the command again."
        )
    _remove_written(old, listed, out, option)
    if holder is not None:
        holder.rmdir()


@contextmanager
def atomic_text_file(out: Path, option: str = "-o") -> Iterator[TextIO]:
    """Yield a text stream to a temporary file beside `out`; on success it is renamed onto `out`."""
    fd, tmp = _temporary(tempfile.mkstemp, out, option, folder=False)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as stream:
            yield stream
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def json_line(record: dict[str, Any]) -> str:
    """One JSON Lines record (UTF-8 text as is, no NaN)."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]], option: str = "-o") -> int:
    """Write one JSON object per line, atomically; returns the count. '-' writes to stdout."""

    def lines(stream: TextIO) -> int:
        n = 0
        for record in records:
            stream.write(json_line(record))
            n += 1
        return n

    if str(path) == "-":
        return lines(sys.stdout)
    with atomic_text_file(Path(path), option) as stream:
        return lines(stream)
