"""manage.py db_grants ROLE: the application's database role gets what it needs on the migrated schema
and nothing more. Run by the owner of the schema (the role that migrates) after every `migrate`."""

from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from common.append_only import guarded_triggers, wholly_append_only_tables


class Command(BaseCommand):
    help = (
        "Grant ROLE (the role web and the workers connect as) SELECT, INSERT, UPDATE and DELETE on every "
        "table of the schema and USAGE on its sequences; on the audit tables (the append-only ones) SELECT "
        "and INSERT only; on a table whose guard refuses only some changes (decided suggestions) no DELETE; "
        "TRUNCATE nowhere. PostgreSQL only; run as the schema's owner after migrate. "
        "Refuses a role that is a superuser, may replicate or bypass row security, or is the owner itself."
    )

    def add_arguments(self, parser):
        parser.add_argument("role", help="The application's role, e.g. portal_app (deploy/postgres-roles.sh).")

    def handle(self, *args, role: str, **options):
        if connection.vendor != "postgresql":
            raise CommandError(f"db_grants is for PostgreSQL; this database is {connection.vendor} (it has no roles)")
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT rolsuper, rolreplication, rolbypassrls, rolname = current_user FROM pg_roles WHERE rolname = %s",
                [role],
            )
            found = cursor.fetchone()
            if found is None:
                raise CommandError(f"no role {role!r} (deploy/postgres-roles.sh creates it)")
            if any(found):
                raise CommandError(
                    f"role {role!r} is the current user, a superuser, or may replicate or bypass row security: "
                    "the application needs a role of its own without those"
                )
            name = connection.ops.quote_name(role)
            audit_tables = wholly_append_only_tables(connection)
            # A table whose guard refuses only some changes (a decided suggestion is final) keeps
            # UPDATE for the changes it allows; no row of it is ever deleted.
            partly_guarded = sorted({table for _name, table, _sql in guarded_triggers(connection)} - set(audit_tables))
            for statement in (
                f"GRANT USAGE ON SCHEMA public TO {name}",
                f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {name}",
                f"REVOKE TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA public FROM {name}",
                f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {name}",
                *(f"REVOKE UPDATE, DELETE ON {connection.ops.quote_name(table)} FROM {name}" for table in audit_tables),
                *(f"REVOKE DELETE ON {connection.ops.quote_name(table)} FROM {name}" for table in partly_guarded),
            ):
                cursor.execute(statement, None)
            cursor.execute(
                "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND has_table_privilege(%s, c.oid, 'UPDATE')",
                [role],
            )
            (tables,) = cursor.fetchone()
        self.stdout.write(
            f"db_grants: {role} may read and write {tables} tables; on {len(audit_tables)} audit tables only "
            f"SELECT and INSERT; on {len(partly_guarded)} partly guarded no DELETE; TRUNCATE on none"
        )
