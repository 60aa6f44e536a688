"""Kombu's filesystem transport (the embedded default's broker), made safe for several processes.

Kombu's own `_put` creates a message file under its final name and then writes it, and `_get` moves
files without waiting for the writer: a consumer could take a file before its content was written,
read nothing, and crash the worker with a JSON error (or lose the message). Here a message is written
under a name no consumer looks at and renamed into place when complete (rename is atomic on one file
system), and a consumer claims a file by renaming it into the processing folder (on the same file
system: exactly one consumer wins), reads it, then deletes it.

The exchange tables (which queues an exchange routes to, one JSON file each in the control folder)
had the same flaw: kombu creates the file and then writes it, so a producer reading it meanwhile got
an empty file and a JSON error, and two processes declaring one exchange at once could each write
their own table and lose the other's binding. Here binders of one exchange take turns on a lock file
and replace the table in one rename, so a reader always sees a whole table. Within one process kombu
keeps the bindings in state shared by every connection, and records a binding before writing its
table: a second thread then skipped the bind and published into a table not yet written, and the
message was dropped without a word. Binding and reading a table therefore also take turns per process.

A worker's loop waits in `drain_events` for up to two seconds at a time (Celery's `synloop`) and
looks at its shutdown flag only between waits, while kombu sleeps a second between polls: a worker
told to stop took three to eight seconds to notice. Here a wait is at most `MAX_DRAIN_SECONDS` and
the folder is polled every `polling_interval` (settings: 0.2 s), so Ctrl-C on `bin/serve` stops the
workers in a second or two, and a message sent is taken within a fraction of a second.
"""

from __future__ import annotations

import os
import threading
import uuid
from queue import Empty
from time import monotonic

from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

#: The longest one `drain_events` call waits before it returns to the worker's loop.
MAX_DRAIN_SECONDS = 0.5

#: Kombu's virtual transport shares its binding state between all connections of a process.
_BINDINGS = threading.RLock()


class Channel(filesystem.Channel):
    def queue_bind(self, *args, **kwargs):
        with _BINDINGS:
            return super().queue_bind(*args, **kwargs)

    def get_table(self, exchange):
        with _BINDINGS:
            return super().get_table(exchange)

    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        partial = os.path.join(self.data_folder_out, f".{uuid.uuid4()}.partial")
        with open(partial, "wb") as handle:
            handle.write(str_to_bytes(dumps(payload)))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, os.path.join(self.data_folder_out, name))

    def _get(self, queue):
        wanted = f"{queue}.msg"
        for name in sorted(os.listdir(self.data_folder_in)):
            if name.partition(".")[2] != wanted:
                continue
            claimed = os.path.join(self.processed_folder, name)
            try:
                os.rename(os.path.join(self.data_folder_in, name), claimed)
            except OSError:  # another consumer took it first
                continue
            with open(claimed, "rb") as handle:
                payload = handle.read()
            os.remove(claimed)
            return loads(bytes_to_str(payload))
        raise Empty()

    def _queue_bind(self, exchange, routing_key, pattern, queue):
        table = self._exchange_file(exchange)
        self.control_folder.mkdir(exist_ok=True)
        entry = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        with open(self.control_folder / f".{exchange}.lock", "a") as guard:
            filesystem.lock(guard, filesystem.LOCK_EX)
            try:
                queues = self.get_table(exchange)
                if entry in queues:
                    return
                queues.insert(0, entry)
                partial = self.control_folder / f".{uuid.uuid4()}.partial"
                with open(partial, "wb") as handle:
                    handle.write(str_to_bytes(dumps(queues)))
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(partial, table)
            finally:
                filesystem.unlock(guard)


class Transport(filesystem.Transport):
    Channel = Channel

    def drain_events(self, connection, timeout=None):
        # A caller that waits without a limit (timeout None) keeps kombu's blocking wait.
        return super().drain_events(connection, timeout=timeout if timeout is None else min(timeout, MAX_DRAIN_SECONDS))
