"""A decided correction is final: its decision and what it decided are part of the audit.

Triggers on both backends refuse, once a suggestion's stored status is no longer 'new', any UPDATE
that changes a column other than `notified_at` (the curators' digest may mark a suggestion mailed
after it was decided), and its DELETE. A new suggestion changes once, through
`corrections.services.correction_decide`. Names carry `common.append_only.TRIGGER_MARK`, so the
test flush lifts them with the other guards. Both backends report a refusal as an integrity error
whose message contains `common.append_only.APPEND_ONLY_MESSAGE`.
"""

from __future__ import annotations

from common.append_only import APPEND_ONLY_MESSAGE, TRIGGER_MARK

TABLE = "reviews_correction"
# Every column but notified_at, as the table stood when the guard was made (migration 0002).
DECIDED_COLUMNS = (
    "id content_type_id object_id target_stable_id target_label protocol_stable_id field_name field_label"
    " value_at_submission proposed_value explanation supporting_source supporting_locator contact_email status"
    " response duplicate_of_id value_applied decided_at decided_by_id submitted_by_id token ip_hash fingerprint"
    " created_at"
).split()
MESSAGE = f"{APPEND_ONLY_MESSAGE}: a decided correction is final"
UPDATE_TRIGGER = f"{TABLE}{TRIGGER_MARK}_decided_update"
DELETE_TRIGGER = f"{TABLE}{TRIGGER_MARK}_decided_delete"


def _changed(distinct: str) -> str:
    return " OR ".join(f"NEW.{column} {distinct} OLD.{column}" for column in DECIDED_COLUMNS)


POSTGRESQL_CREATE = [
    f"""CREATE OR REPLACE FUNCTION corrections_decided_guard() RETURNS trigger AS $$
    BEGIN
        IF OLD.status <> 'new' AND (TG_OP = 'DELETE' OR {_changed("IS DISTINCT FROM")}) THEN
            RAISE EXCEPTION '{MESSAGE}: % of suggestion % is refused', TG_OP, OLD.id
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
        RETURN NEW;
    END $$ LANGUAGE plpgsql""",
    f"""CREATE TRIGGER {UPDATE_TRIGGER} BEFORE UPDATE OR DELETE ON {TABLE}
        FOR EACH ROW EXECUTE FUNCTION corrections_decided_guard()""",
]
POSTGRESQL_DROP = [
    f"DROP TRIGGER IF EXISTS {UPDATE_TRIGGER} ON {TABLE}",
    "DROP FUNCTION IF EXISTS corrections_decided_guard()",
]

SQLITE_CREATE = [
    f"""CREATE TRIGGER {UPDATE_TRIGGER} BEFORE UPDATE ON {TABLE}
        WHEN OLD.status <> 'new' AND ({_changed("IS NOT")})
        BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END""",
    f"""CREATE TRIGGER {DELETE_TRIGGER} BEFORE DELETE ON {TABLE}
        WHEN OLD.status <> 'new' BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END""",
]
SQLITE_DROP = [f"DROP TRIGGER IF EXISTS {UPDATE_TRIGGER}", f"DROP TRIGGER IF EXISTS {DELETE_TRIGGER}"]


def statements(vendor: str, *, create: bool) -> list[str]:
    if vendor == "postgresql":
        return POSTGRESQL_CREATE if create else POSTGRESQL_DROP
    if vendor == "sqlite":
        return SQLITE_CREATE if create else SQLITE_DROP
    raise NotImplementedError(f"no correction triggers for the {vendor} backend")


def create(apps, schema_editor) -> None:
    for statement in statements(schema_editor.connection.vendor, create=True):
        schema_editor.execute(statement, params=None)


def drop(apps, schema_editor) -> None:
    for statement in statements(schema_editor.connection.vendor, create=False):
        schema_editor.execute(statement, params=None)
