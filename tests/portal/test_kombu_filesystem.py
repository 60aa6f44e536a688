"""The embedded default's broker delivers every message exactly once to racing consumers."""

from __future__ import annotations

import json
import multiprocessing
import threading
import time

from kombu import Connection, Exchange, Producer, Queue

from portal.kombu_filesystem import Transport

MESSAGES = 300


def connection(folder) -> Connection:
    options = {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "processed_folder": str(folder / "processing"),
        "control_folder": str(folder / "control"),  # kombu's default is ./control in the working directory
    }
    return Connection(transport=Transport, transport_options=options)


def test_it_delivers_each_message_once_while_producers_and_consumers_race(tmp_path):
    for name in ("queue", "processing", "control"):
        (tmp_path / name).mkdir()
    queue = Queue("race", Exchange("race", type="direct"), routing_key="race")
    received: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    done = threading.Event()

    def produce(start: int) -> None:
        with connection(tmp_path) as conn:
            producer = Producer(conn.channel())
            for number in range(start, MESSAGES, 2):
                producer.publish({"n": number}, exchange=queue.exchange, routing_key="race", declare=[queue])

    def consume() -> None:
        try:
            with connection(tmp_path) as conn:
                simple = conn.SimpleQueue(queue)
                deadline = time.monotonic() + 60
                while not (done.is_set() and len(received) >= MESSAGES) and time.monotonic() < deadline:
                    try:
                        message = simple.get(timeout=0.05)
                    except simple.Empty:
                        continue
                    with lock:
                        received.append(message.payload["n"])
                    message.ack()
        except BaseException as exc:  # a torn read used to crash here with a JSON error
            errors.append(exc)

    consumers = [threading.Thread(target=consume) for _ in range(3)]
    producers = [threading.Thread(target=produce, args=(start,)) for start in (0, 1)]
    for thread in consumers + producers:
        thread.start()
    for thread in producers:
        thread.join()
    done.set()
    for thread in consumers:
        thread.join(timeout=60)
    assert errors == []
    assert sorted(received) == list(range(MESSAGES))


def bind(folder, name: str, start) -> None:
    with connection(folder) as conn:
        channel = conn.channel()
        start.wait(timeout=30)  # all at once
        Queue(name, Exchange("shared", type="direct"), routing_key=name)(channel).declare()


def test_it_keeps_every_binding_when_processes_declare_one_exchange_at_once(tmp_path):
    for name in ("queue", "processing", "control"):
        (tmp_path / name).mkdir()
    names = [f"queue-{i}" for i in range(8)]
    context = multiprocessing.get_context("fork")
    start = context.Barrier(len(names))
    processes = [context.Process(target=bind, args=(tmp_path, name, start)) for name in names]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
    assert [process.exitcode for process in processes] == [0] * len(names)
    table = json.loads((tmp_path / "control" / "shared.exchange").read_text())
    assert sorted(queue for _key, _pattern, queue in table) == names
