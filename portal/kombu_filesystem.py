"""Kombu's filesystem transport (the embedded default's broker), made safe for several processes.

Kombu's own `_put` creates a message file under its final name and then writes it, and `_get` moves
files without waiting for the writer: a consumer could take a file before its content was written,
read nothing, and crash the worker with a JSON error (or lose the message). Here a message is written
under a name no consumer looks at and renamed into place when complete (rename is atomic on one file
system), and a consumer claims a file by renaming it into the processing folder (on the same file
system: exactly one consumer wins), reads it, then deletes it.
"""

from __future__ import annotations

import os
import uuid
from queue import Empty
from time import monotonic

from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads


class Channel(filesystem.Channel):
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


class Transport(filesystem.Transport):
    Channel = Channel
