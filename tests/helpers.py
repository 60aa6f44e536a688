"""Helpers shared by tests."""

from __future__ import annotations


def apply_transitions(record, *names: str, reason: str = "test reason") -> None:
    """Move a record along the workflow through the one service, as the portal's importer does."""
    from reviews.services import review_transition_apply

    for name in names:
        review_transition_apply(record=record, transition=name, actor=None, reason=reason, automatic=True)


def seed_import() -> None:
    """The seed record page, imported as `manage.py import_seed` does."""
    from django.core.management import call_command

    call_command("import_seed", stdout=open("/dev/null", "w"))


def load_examples(*names: str):
    """Import the named documents of data/examples/ (file-name stems) with the documents before them
    in file-name order (a document may name the records of those before it: their models, works
    and sources; every one when none is named; the seed first: they name its areas, contexts and
    sources), with their curation review, as `manage.py load_examples` does for all of them."""
    from records.examples import example_paths, examples_load

    if not names:
        return examples_load(paths=None)
    paths = example_paths()
    last = max(index for index, path in enumerate(paths) if path.stem in names)
    return examples_load(paths=paths[: last + 1])


def load_for_module(module_transaction, *names: str, demo: DemoSnapshot | None = None):
    """The seed, then `load_examples(*names)`, in a module's transaction (tests/conftest.py's
    `module_transaction`): loaded once for the module's tests, rolled back after them. With `demo`
    (tests/conftest.py's `demo_snapshot`, for every document: no names) the rows are copied from the
    session's snapshot instead, and its load's report returned: for modules that read the demo
    content, not for those that test how an import writes it."""
    with module_transaction.unblock():
        if demo is not None:
            assert not names, "the demo snapshot holds every document"
            return demo.restore()
        seed_import()
        return load_examples(*names)


class TableSnapshot:
    """Every model table's rows, copied by the database itself into tables of their own beside them
    (`CREATE TABLE ... AS SELECT *`, on PostgreSQL and SQLite alike), and copied back for a later
    transactional test in a fraction of the time it took to write them.

    `restore` empties the model tables as the flush after a transactional test does (audit guards
    lifted: tests/conftest.py) and puts every row back with its primary key; then what lives outside
    those tables follows: PostgreSQL's sequences are moved past the rows where they are behind them
    (never back: the flush does not reset them, a rollback does not undo them), SQLite's full text indexes
    (records.search_index, external content) are rebuilt from the entries, and the process's cache
    of content types is dropped (the rows' ids are the snapshot's). Files on disk (a published
    release's) are not part of it."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.copies: list[tuple[str, str]] = []  # (model table, its copy)

    @property
    def taken(self) -> bool:
        return bool(self.copies)

    def take(self) -> None:
        from django.db import connection

        self.drop()
        quote = connection.ops.quote_name
        tables = sorted(connection.introspection.django_table_names(only_existing=True, include_views=False))
        with connection.cursor() as cursor:
            for index, table in enumerate(tables):
                copy = f"{self.prefix}_{index}"
                cursor.execute(f"DROP TABLE IF EXISTS {quote(copy)}")
                cursor.execute(f"CREATE TABLE {quote(copy)} AS SELECT * FROM {quote(table)}")
                self.copies.append((table, copy))

    def restore(self) -> None:
        from django.apps import apps
        from django.contrib.contenttypes.models import ContentType
        from django.core.management.color import no_style
        from django.db import connection, transaction

        from releases import db_triggers

        quote = connection.ops.quote_name
        with transaction.atomic():
            tables = [table for table, _copy in self.copies]
            connection.ops.execute_sql_flush(connection.ops.sql_flush(no_style(), tables))
            with connection.cursor() as cursor:
                # A published release's rows refuse INSERT (releases.db_triggers): the guards are
                # lifted for the copy, in this transaction only, as tests/releases/conftest.py does;
                # so are the protocols' change counts (records.summary_triggers): they are copied too.
                for statement in [*db_triggers.statements(connection.vendor, create=False), *_summary_triggers(False)]:
                    cursor.execute(statement, None)
                for table, copy in self.copies:
                    cursor.execute(f"INSERT INTO {quote(table)} SELECT * FROM {quote(copy)}")
                for statement in [*db_triggers.statements(connection.vendor, create=True), *_summary_triggers(True)]:
                    cursor.execute(statement, None)
                if connection.vendor == "postgresql":
                    _sequences_past_rows(cursor, apps.get_models(include_auto_created=True))
                if connection.vendor == "sqlite":
                    from records.search_index import FTS_TABLE, TRIGRAM_TABLE

                    for index in (FTS_TABLE, TRIGRAM_TABLE):
                        cursor.execute(f"INSERT INTO {index}({index}) VALUES ('rebuild')")
        ContentType.objects.clear_cache()

    def drop(self) -> None:
        from django.db import connection

        with connection.cursor() as cursor:
            for _table, copy in self.copies:
                cursor.execute(f"DROP TABLE IF EXISTS {connection.ops.quote_name(copy)}")
        self.copies = []


def _summary_triggers(create: bool) -> list[str]:
    from django.db import connection

    from records import summary_triggers

    return summary_triggers.statements(connection.vendor, create=create)


def _sequences_past_rows(cursor, models) -> None:
    """PostgreSQL: each serial primary key's sequence moved past its table's largest key, if behind it."""
    from django.db.models import AutoField

    for model in models:
        pk = model._meta.pk
        if not isinstance(pk, AutoField):
            continue
        table, column = model._meta.db_table, pk.column
        cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [f'"{table}"', column])
        (sequence,) = cursor.fetchone()
        if sequence is None:
            continue
        cursor.execute(
            f'SELECT setval(%s, m) FROM (SELECT MAX("{column}") AS m FROM "{table}") AS t'
            f" WHERE m > (SELECT last_value FROM {sequence})",
            [sequence],
        )


class WrittenRows:
    """The rows a load writes into an empty catalogue, read once for the session and written again
    by `put` in one statement a table (tests/conftest.py's `seeded`: the seed's import service runs
    hundreds of statements, each test again).

    `capture(load)` runs `load()` in a transaction that is rolled back once the rows are read: the
    rows new in each model table, and those it changed in tables that had rows (the catalogue
    version's). `put()` writes them again only where every table it writes holds what it held
    before the load; elsewhere it writes nothing and returns False, and the caller loads for real.
    References to content types are kept by natural key (a transactional test's flush makes the
    content types again, under new ids). On PostgreSQL every value travels as text, cast back by
    its column, and the sequences are moved past the rows; on SQLite the full text tables are
    rebuilt from the entries. Files on disk are not part of it."""

    def __init__(self, tables: list[_WrittenTable]):
        self.tables = tables

    @classmethod
    def capture(cls, load) -> WrittenRows | None:
        """The rows `load()` writes; None when the catalogue is not empty (the rows would not be the
        load's alone) or the load deletes a row."""
        from django.apps import apps
        from django.db import transaction

        from records.models import Protocol, Source

        if Protocol.objects.exists() or Source.objects.exists():
            return None
        types = _content_types()
        models = [
            model
            for model in apps.get_models(include_auto_created=True)
            if model._meta.managed and not model._meta.proxy
        ]
        with transaction.atomic():
            before = {model._meta.db_table: _table_rows(model) for model in models}
            load()
            tables = []
            for model in models:
                old = before[model._meta.db_table]
                new = _table_rows(model)
                if old == new:
                    continue
                index = _pk_index(model)
                old_by_pk = {row[index]: row for row in old}
                new_pks = {row[index] for row in new}
                if any(pk not in new_pks for pk in old_by_pk):
                    return None  # a deletion cannot be replayed by inserts
                written = [row for row in new if old_by_pk.get(row[index]) != row]
                tables.append(_WrittenTable.of(model, before=old, rows=written, types=types))
            transaction.set_rollback(True)
        # A published release's memberships refuse inserts once its row is there (releases.db_triggers).
        tables.sort(key=lambda table: table.name == "releases_release")
        return cls(tables)

    def put(self) -> bool:
        """Write the rows again; False (nothing written) where a table the load writes does not
        hold what it held before the load, or a content type it names is gone."""
        from django.db import connection, transaction

        from records.search_index import FTS_TABLE, TRIGRAM_TABLE

        types = {key: pk for pk, key in _content_types().items()}
        if any(row[index] not in types for table in self.tables for row in table.rows for index in table.type_columns):
            return False
        with transaction.atomic():
            for table in self.tables:
                if not table.as_before():
                    return False
            with connection.cursor() as cursor:
                # The protocols' change counts are rows of the load too (records.summary_triggers).
                for statement in _summary_triggers(False):
                    cursor.execute(statement, None)
                for table in self.tables:
                    table.write(cursor, types)
                for statement in _summary_triggers(True):
                    cursor.execute(statement, None)
                if connection.vendor == "sqlite" and any(t.name == "records_searchentry" for t in self.tables):
                    for index in (FTS_TABLE, TRIGRAM_TABLE):
                        cursor.execute(f"INSERT INTO {index}({index}) VALUES ('rebuild')")
        return True


def _content_types() -> dict[int, tuple[str, str]]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT id, app_label, model FROM django_content_type")
        return {pk: (app_label, model) for pk, app_label, model in cursor.fetchall()}


def _columns(model) -> list[str]:
    return [field.column for field in model._meta.concrete_fields]


def _pk_index(model) -> int:
    return _columns(model).index(model._meta.pk.column)


def _select(model) -> str:
    from django.db import connection

    quote = connection.ops.quote_name
    cast = "::text" if connection.vendor == "postgresql" else ""
    columns = ", ".join(f"{quote(column)}{cast}" for column in _columns(model))
    return f"SELECT {columns} FROM {quote(model._meta.db_table)} ORDER BY {quote(model._meta.pk.column)}"


def _table_rows(model) -> list[tuple]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(_select(model))
        return [tuple(row) for row in cursor.fetchall()]


class _WrittenTable:
    """One table's part of WrittenRows: its rows before the load, and the rows the load wrote."""

    def __init__(self, model, *, before: list[tuple], rows: list[tuple], type_columns: list[int]):
        self.model = model
        self.name = model._meta.db_table
        self.before = before
        self.rows = rows
        self.type_columns = type_columns
        index = _pk_index(model)
        before_pks = {row[index] for row in before}
        self.replaced = [row[index] for row in rows if row[index] in before_pks]

    @classmethod
    def of(cls, model, *, before: list[tuple], rows: list[tuple], types: dict[int, tuple[str, str]]) -> _WrittenTable:
        from django.contrib.contenttypes.models import ContentType

        type_columns = [
            index
            for index, field in enumerate(model._meta.concrete_fields)
            if field.is_relation and field.related_model is ContentType
        ]
        by_key = []
        for row in rows:
            row = list(row)
            for index in type_columns:
                if row[index] is not None:
                    row[index] = types[int(row[index])]
            by_key.append(tuple(row))
        return cls(model, before=before, rows=by_key, type_columns=type_columns)

    def as_before(self) -> bool:
        from django.db import connection

        if not self.before:
            quote = connection.ops.quote_name
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT 1 FROM {quote(self.name)} LIMIT 1")
                return cursor.fetchone() is None
        return _table_rows(self.model) == self.before

    def write(self, cursor, types: dict[tuple[str, str], int]) -> None:
        from django.db import connection

        quote = connection.ops.quote_name
        pk = quote(self.model._meta.pk.column)
        if self.replaced:
            marks = ", ".join(["%s"] * len(self.replaced))
            cursor.execute(f"DELETE FROM {quote(self.name)} WHERE {pk} IN ({marks})", self.replaced)
        rows = []
        for row in self.rows:
            row = list(row)
            for index in self.type_columns:
                if row[index] is not None:
                    row[index] = types[row[index]]
            rows.append(row)
        columns = _columns(self.model)
        names = ", ".join(quote(column) for column in columns)
        marks = ", ".join(["%s"] * len(columns))
        cursor.executemany(f"INSERT INTO {quote(self.name)} ({names}) VALUES ({marks})", rows)
        if connection.vendor == "postgresql":
            _sequences_past_rows(cursor, [self.model])


class DemoSnapshot:
    """The seed and every example paper (`manage.py import_seed`, `manage.py load_examples`), loaded
    once and kept as a TableSnapshot with the report of its load (tests/conftest.py's `demo_snapshot`)."""

    def __init__(self, snapshot: TableSnapshot, report):
        self.snapshot = snapshot
        self.report = report

    @classmethod
    def build(cls) -> DemoSnapshot:
        """Load and snapshot the demo content, then put back the rows that were there before. Outside
        any transaction: the snapshot's tables must outlive it."""
        from django.db import connection

        assert not connection.in_atomic_block, "the demo snapshot is built outside any transaction"
        before = TableSnapshot("test_before_demo")
        before.take()
        try:
            seed_import()
            report = load_examples()
            snapshot = TableSnapshot("test_demo")
            snapshot.take()
        finally:
            before.restore()
            before.drop()
        return cls(snapshot, report)

    def restore(self):
        """The demo content in the database, as loaded; returns the load's report (records.examples.ExamplesReport)."""
        self.snapshot.restore()
        return self.report

    def drop(self) -> None:
        self.snapshot.drop()
