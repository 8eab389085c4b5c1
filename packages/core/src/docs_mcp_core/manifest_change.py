"""The manifests ``docs-mcp fix`` creates or rewrites (:class:`ManifestChange`) and the plan that
holds them (:class:`FixPlan`), written atomically, never through a link out of the docs folder, with
the author's permissions, byte-order mark and line endings kept."""

from __future__ import annotations

import difflib
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

from docs_mcp_core.errors import ManifestLeftAloneError


@dataclass(frozen=True)
class ManifestChange:
    """One manifest to create (``old_text is None``) or rewrite."""

    path: str  # relative to the docs folder, POSIX
    old_text: str | None
    new_text: str
    summary: str  # e.g. "created .docs-mcp.json (default=h2, overrides=3)"
    reasons: tuple[str, ...] = ()  # why each override was proposed

    def diff(self) -> str:
        """Unified diff from the current to the proposed text."""
        old = (self.old_text or "").splitlines(keepends=True)
        new = self.new_text.splitlines(keepends=True)
        fromfile = f"a/{self.path}" if self.old_text is not None else "/dev/null"
        out: list[str] = []
        for line in difflib.unified_diff(old, new, fromfile=fromfile, tofile=f"b/{self.path}"):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
        return "".join(out)

    def write(self, docs_dir: Path) -> Path:
        """Write the new text (atomically) and return the file's path. A manifest that is a
        symbolic link is written where the link leads (replacing the link with a file would cut
        it from the manifest it shares). Raises :class:`ManifestLeftAloneError`, writing nothing,
        when the manifest is no longer the text the change was made from (edited, or created,
        while fix ran) or is read-only."""
        target = Path(docs_dir) / self.path
        real = os.path.realpath(target)
        if not real.startswith(os.path.join(os.path.realpath(docs_dir), "")):  # a link made since the plan
            raise ManifestLeftAloneError(
                f"{self.path} leads outside the docs folder (to {real}), so fix left it and that file as "
                "they are; copy the manifest into the docs folder to have fix repair it"
            )
        if target.is_symlink() and os.path.isfile(real):
            target = Path(real)
        try:  # the manifest keeps its permissions (mkstemp's 0600 made it unreadable to others)
            mode: int | None = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = None  # a new manifest: 0666 less the umask, as any new file
        try:
            fd, tmp = _new_file_beside(target)
        except OSError as exc:
            raise OSError(
                exc.errno, f"{exc.strerror} (fix writes a new file beside it first)", str(target)
            ) from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(self.new_text)
                if mode is not None:
                    os.fchmod(handle.fileno(), mode)
                handle.flush()
                os.fsync(handle.fileno())  # on disk before it replaces the manifest: a crash keeps one whole
            if self.old_text is None:
                _create(Path(tmp), target)
            elif read_as_saved(target) != self.old_text:
                raise ManifestLeftAloneError(self._changed())
            elif not (mode or 0) & 0o222 or not os.access(target, os.W_OK):  # a rename would replace it
                raise ManifestLeftAloneError(
                    f"{self.path} is read-only, so fix left it as it is; make it writable"
                    " (chmod u+w) and run docs-mcp fix again"
                )
            else:
                os.replace(tmp, target)
        except FileExistsError:
            Path(tmp).unlink(missing_ok=True)
            raise ManifestLeftAloneError(self._changed()) from None
        except OSError as exc:  # a full disk, a quota, the file-size limit: errors that name no file
            Path(tmp).unlink(missing_ok=True)
            if exc.filename is not None:
                raise
            raise OSError(
                exc.errno, f"{exc.strerror} (the manifest is left as it was)", str(target)
            ) from None
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    def _changed(self) -> str:
        done = "was created" if self.old_text is None else "changed"
        left = "so fix left it as it is (nothing of it is lost); run docs-mcp fix again"
        return f"{self.path} {done} while fix was running, {left}"


@dataclass
class FixPlan:
    """Manifest changes proposed by ``fix``, in a deterministic order."""

    docs_dir: Path
    changes: list[ManifestChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # problems fix cannot repair by itself

    @property
    def empty(self) -> bool:
        return not self.changes

    def diff(self) -> str:
        return "".join(change.diff() for change in self.changes)

    def write(self) -> list[Path]:
        return [change.write(self.docs_dir) for change in self.changes]


def _create(tmp: Path, target: Path) -> None:
    """Move ``tmp`` to ``target`` (a new manifest), never over one made meanwhile: a hard link, or
    where the file system has none, a rename once nothing is there (else ``FileExistsError``)."""
    try:
        os.link(tmp, target)
    except OSError as exc:
        if isinstance(exc, FileExistsError) or os.path.lexists(target):
            raise FileExistsError(target) from None
        os.replace(tmp, target)
    else:
        tmp.unlink()


def read_as_saved(path: Path) -> str:
    """The text of ``path`` with its line endings as they are (CRLF kept)."""
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.read()


def _new_file_beside(target: Path) -> tuple[int, Path]:
    """A new, empty file in ``target``'s folder, opened for writing, created with mode 0666 less
    the process's umask (``tempfile.mkstemp`` gives 0600; reading the umask means setting it,
    for every thread at once)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = target.parent / f".docs-mcp.{secrets.token_hex(8)}.tmp"
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue  # another name: 64 random bits do not repeat for long


__all__ = ["FixPlan", "ManifestChange", "read_as_saved"]
