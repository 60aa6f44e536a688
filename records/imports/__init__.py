"""Bulk import of one paper's records from one JSON document (`records_import`).

The document format is documented in docs/reference/import-format.md and the seed record is its
example (`records/seed.py` builds it); `data/examples/` holds real papers' tables. The import
plans the whole document first with reads only (every problem of it listed at once; a dry run
stops there, taking no lock), then writes the plan in short transactions of about
settings.IMPORT_WRITE_BATCH_RECORDS records each, so that other writes get through between them (a
document of one batch is written all or nothing; a larger one is atomic per batch, and one stopped
midway says what it wrote), idempotently by stable id: a record whose fields already hold the document's values is left
untouched, so importing twice changes nothing. New records start as proposed; an edit of a
sourced field of a reviewed record reopens it, and never makes an excluded record comparable
(records.services, reviews.transitions).

Re-imports merge three ways, field by field, against what the document (known by its title) held
at its last import (`ImportSnapshot`): a field the document changed and nobody else did is updated; a field a
curator or an accepted correction changed while the document did not is kept (and reported); a
field both changed is a conflict, which the dry run lists and the real import refuses, unless the
caller names the record in `overwrite` to take the document's values.

The package: `document` (the format: sections, entries, errors, the report), `validation` (the
document's own checks), `merge` (the three-way merge of a re-import), `checks` (the database's
rules in Python), `plan` (what the import would write, validated, read without a lock), `write`
(the plan written, in bulk where nothing reviewed depends on it), `batches` (what a batch depends on,
checked again before it is written) and `service` (`records_import`);
the names other modules use are exported here.
"""

from records.imports.document import (
    FORMAT_NAME,
    FORMAT_VERSION,
    SECTION_BY_KEY,
    SECTIONS,
    Entry,
    ImportConflict,
    ImportInvalid,
    ImportReport,
    ImportStale,
    Section,
)
from records.imports.service import records_import
from records.imports.validation import RECOMMENDED_REVIEWS, PlannedReview, review_plan

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "RECOMMENDED_REVIEWS",
    "SECTIONS",
    "SECTION_BY_KEY",
    "Entry",
    "ImportConflict",
    "ImportInvalid",
    "ImportReport",
    "ImportStale",
    "PlannedReview",
    "Section",
    "records_import",
    "review_plan",
]
