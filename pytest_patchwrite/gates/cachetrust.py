"""Cache entries a pull request cannot forge: kept outside the work tree being checked, each sealed with an HMAC.

A verdict or a warm state read back from disk decides a verdict without running the
engine, so whoever can write an entry can make a broken manuscript pass. The cache
therefore lives in the user's cache directory (`$XDG_CACHE_HOME/patchwrite`), never in
a checkout (a cache directory configured inside the work tree is refused), and every
entry carries an HMAC-SHA256 over its kind, its key and its bytes with a per-user secret
(`$XDG_CACHE_HOME/patchwrite/secret`, mode 0600, made on first use). An entry that does
not verify (planted, copied from another user's cache, tampered with) is ignored and
counted. `PATCHWRITE_CACHE_SECRET` replaces the file for trusted jobs that share one
cache between runners; it must never be set in a job that checks a pull request.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from ..files.inputs import text_bytes
from ..files.paths import repository_top
from ..files.tempfiles import TEMP_SUFFIX, temp_file_prefix, write_json_failure

SECRET_ENV = "PATCHWRITE_CACHE_SECRET"
SECRET_FILE = "secret"
_DOMAIN = b"patchwrite-cache-1\0"
_lock = threading.RLock()  # secret() warns while it holds it
_secrets: dict[str, bytes | None] = {}
_warned: set[str] = set()
_unwritable: set[str] = set()  # cache directories a write failed in: nothing more is written there by this process


def cache_home() -> Path:
    """Return the user's patchwrite cache directory (`$XDG_CACHE_HOME/patchwrite`, else `~/.cache/patchwrite`)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "patchwrite"


def warn(message: str) -> None:
    """Print `patchwrite: warning: message` on stderr once per process."""
    with _lock:
        if message in _warned:
            return
        _warned.add(message)
    print(f"patchwrite: warning: {message}", file=sys.stderr)


def secret() -> bytes | None:
    """Return the key entries are sealed with: `PATCHWRITE_CACHE_SECRET`, else the per-user secret file (made on
    first use); None when the file is not ours alone (the disk cache is then off)."""
    shared = os.environ.get(SECRET_ENV)
    if shared:
        return hashlib.sha256(b"patchwrite-shared\0" + text_bytes(shared)).digest()
    path = cache_home() / SECRET_FILE
    with _lock:
        if str(path) in _secrets:
            return _secrets[str(path)]
        _secrets[str(path)] = found = _read_or_make(path)
    return found


def _make(path: Path) -> None:
    """Make the secret file at `path` whole or not at all: written and synced under a temporary name that carries
    this process's PID, then linked into place (a concurrent maker's secret, linked first, wins). A full disk
    leaves no empty secret behind that would keep the cache off once there is room."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temp_file_prefix(path), suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(32).hex().encode())
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
    finally:
        os.unlink(tmp)


def _drop_empty(path: Path) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISREG(info.st_mode) and info.st_size == 0 and info.st_uid == os.getuid():
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _read_or_make(path: Path) -> bytes | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _drop_empty(path)  # an older version left it on a full disk; it never sealed anything
        if not os.path.lexists(path):
            _make(path)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
                warn(f"{path} is not a private file of this user (mode 0600); the verdict cache on disk is off")
                return None
            data = handle.read(4096).strip()
    except OSError as exc:
        warn(f"{path} cannot be made or read ({exc.strerror}); the verdict cache on disk is off")
        return None
    if len(data) < 32:
        warn(f"{path} holds no usable secret; delete it and a new one is made")
        return None
    return data


def store(top: Path, path: Path, entry: dict[str, str]) -> None:
    """Write a sealed entry at `path` below the cache directory `top`. A directory that cannot be written (remounted
    read-only, full) is one warning per process and nothing more is written there: the run goes on uncached."""
    if writable(top) and (why := write_json_failure(path, entry)):
        unwritable(top, why)


def writable(top: Path) -> bool:
    """Return whether no write below the cache directory `top` failed in this process."""
    with _lock:
        return str(top) not in _unwritable


def unwritable(top: Path, why: str) -> None:
    """Note that a write below the cache directory `top` failed (`why`: the system's words), warning once."""
    with _lock:
        _unwritable.add(str(top))
    warn(f"{top} cannot be written ({why}); nothing new is cached")


def _mac(key_bytes: bytes, kind: str, key: str, payload: bytes) -> str:
    message = _DOMAIN + kind.encode() + b"\0" + key.encode() + b"\0" + payload
    return hmac.new(key_bytes, message, hashlib.sha256).hexdigest()


def seal(kind: str, key: str, data: Any) -> dict[str, str] | None:
    """Return the entry to store for `data` under (`kind`, `key`), or None when there is no secret."""
    key_bytes = secret()
    if key_bytes is None:
        return None
    payload = json.dumps(data, separators=(",", ":"))
    return {"hmac": _mac(key_bytes, kind, key, payload.encode()), "payload": payload}


def unseal(kind: str, key: str, entry: Any) -> tuple[Any, bool]:
    """Return (the data of a stored entry, whether it was rejected): (None, True) when its HMAC does not verify."""
    key_bytes = secret()
    if key_bytes is None:
        return None, False
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("payload"), str)
        or not isinstance(entry.get("hmac"), str)
    ):
        return None, True
    payload = entry["payload"]
    if not hmac.compare_digest(_mac(key_bytes, kind, key, payload.encode()), entry["hmac"]):
        return None, True
    try:
        return json.loads(payload), False
    except (ValueError, RecursionError):
        return None, True


def read_entry(path: Path, kind: str, key: str) -> tuple[Any, bool]:
    """Return (the verified data of the entry file at `path` or None, whether an entry there was rejected)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None, False  # no entry: a miss, not a rejection
    try:
        with os.fdopen(fd, "rb") as handle:
            entry = json.loads(handle.read())
    except (OSError, ValueError, RecursionError, MemoryError):  # not ours: 100 000 nested brackets, a huge file
        return None, True
    return unseal(kind, key, entry)


def inside_work_tree(directory: Path, root: Path, rootdir: Path | None = None) -> Path | None:
    """Return the work tree (git checkout, else `rootdir`, else the root's directory) holding `directory`, if any."""
    real = Path(os.path.realpath(directory))
    for tree in {Path(os.path.realpath(root.parent)), repository_top(root.parent, rootdir), rootdir}:
        if tree is None:
            continue
        tree = Path(os.path.realpath(tree))
        if real == tree or real.is_relative_to(tree):
            return tree
    return None


def usable_dir(configured: Path | None, root: Path, rootdir: Path | None = None) -> Path | None:
    """Return the cache directory to use for `root`: `configured` (else the default) unless it lies inside the work
    tree being checked (refused with a warning: a pull request could plant entries there); None: no disk cache."""
    default = cache_home() / "compile"
    if configured is not None:
        tree = inside_work_tree(configured, root, rootdir)
        if tree is None:
            return Path(configured)
        warn(f"the cache directory {configured} lies inside the work tree {tree} being checked; using {default}")
    tree = inside_work_tree(default, root, rootdir)
    if tree is not None:
        warn(f"the user cache directory {default} lies inside the work tree {tree} being checked; no disk cache")
        return None
    return default
