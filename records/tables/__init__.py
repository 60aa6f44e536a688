"""Curation at the speed of reading: a table pasted as a PDF viewer, a spreadsheet or a web page
copies it, read into a grid (`grid`, `cells`), its labels matched to the catalogue (`matching`),
turned into an ordinary import document with a locator and a quote for every value (`draft`) and
dry-run with every problem pinned to its cell (`service`). `request` is what a curator asks, the
same from the admin, the command line (`manage.py draft_table`) and the API.
"""

from records.tables.request import DraftRequest, DraftRequestInvalid, request_read
from records.tables.service import TableDraft, table_draft, table_draft_import

__all__ = ["DraftRequest", "DraftRequestInvalid", "TableDraft", "request_read", "table_draft", "table_draft_import"]
