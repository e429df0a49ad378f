"""SQLite's WAL checkpoints off the request path (issue 14).

In WAL mode SQLite copies the write-ahead log back into the database file
("checkpoint") once the log passes ``wal_autocheckpoint`` pages, inside the
commit that crossed the mark — so one request in a few hundred paid a
checkpoint's disk writes and waits: the context queries' p99 on SQLite was
4–7 ms against a p50 of 0.2 ms in-process, and 0.45 ms without the
checkpoints (measured by ``make bench``'s context table).

Here each process that opens a SQLite database runs one daemon thread that
checkpoints it every :data:`CHECKPOINT_INTERVAL_SECONDS` on a connection of
its own, in ``PASSIVE`` mode (it never waits for, nor blocks, readers and
writers). Connections opened by Django raise ``wal_autocheckpoint`` to
:data:`FALLBACK_AUTOCHECKPOINT_PAGES` (``settings.DATABASES``), so a commit
still checkpoints itself when no checkpointer keeps up (a process that
stopped it, a burst of writes), and the log stays bounded.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
import urllib.parse

logger = logging.getLogger(__name__)

#: How often the checkpointer copies the log into the database file.
CHECKPOINT_INTERVAL_SECONDS = 1.0
#: The log length (pages of 4 KiB: 40 MiB) past which a commit checkpoints by itself.
FALLBACK_AUTOCHECKPOINT_PAGES = 10_000

_started: dict[tuple[int, str], threading.Thread] = {}
_lock = threading.Lock()


def wal_checkpoint(path: str) -> tuple[int, int, int]:
    """One ``PASSIVE`` checkpoint of the database file ``path`` on a fresh connection.

    Returns SQLite's ``(busy, log_frames, checkpointed_frames)``: busy 1 when
    another checkpoint was running. Raises ``sqlite3.Error`` when the file
    cannot be opened. The path is percent-encoded in the URI, so a folder
    named with ``?``, ``#`` or ``%`` opens this file (never creates another).
    """
    uri = f"file:{urllib.parse.quote(os.path.abspath(path))}?mode=rw"
    connection = sqlite3.connect(uri, uri=True, timeout=1)
    try:
        return tuple(connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone())
    finally:
        connection.close()


def checkpointer_ensure(path: str) -> threading.Thread | None:
    """Start this process's checkpointer of the SQLite file ``path`` unless it
    runs already (one per process and file: a thread does not survive a fork,
    so a forked worker starts its own). None for an in-memory database."""
    if not path or path == ":memory:" or path.startswith("file::memory:"):
        return None
    key = (os.getpid(), os.path.abspath(path))
    with _lock:
        thread = _started.get(key)
        if thread is not None and thread.is_alive():
            return thread
        thread = threading.Thread(
            target=_checkpoint_forever, args=(key[1],), name="sqlite-wal-checkpointer", daemon=True
        )
        _started[key] = thread
        thread.start()
        return thread


def _checkpoint_forever(path: str) -> None:
    """The checkpointer's loop: a checkpoint every interval while the file exists
    (a test database is deleted at the end of its session; then the thread ends)."""
    while os.path.exists(path):
        time.sleep(CHECKPOINT_INTERVAL_SECONDS)
        try:
            wal_checkpoint(path)
        except sqlite3.Error as exc:
            logger.debug("WAL checkpoint of %s failed: %s", path, exc)


def on_connection_created(sender, connection, **kwargs) -> None:
    """``connection_created`` receiver: a SQLite connection's file gets its checkpointer."""
    if connection.vendor == "sqlite":
        checkpointer_ensure(connection.settings_dict["NAME"])
