"""The search index: one row per searchable record, with what a hit shows and what a query matches.

Rows are written only by records.search_index (in the transaction of the write that changed what
they show) and read by records.search. The text columns are what a query matches, by weight: the
record's own names (`name_text`), where it belongs (`place_text`: protocol, task, suite), what it
tests (`subject_text`: configuration, model and its aliases) and the rest (`body_text`). Each holds
folded spellings of its names too ("dnabert2" for "DNABERT-2", records.search_text).

The backends' full text indexes are made by migration 0015, not declared here (they exist on one
backend only): on PostgreSQL `vector` (a stored tsvector of the four texts, weights A to D) with a
GIN index, `name_vector` (its names' part, stored so that "every word in its own name" is one match
a row, not a filter of `vector` computed a row), and a GIN trigram index (pg_trgm) on `title_key`
for near spellings; the text columns stay empty there (the vector holds the text, and a narrow row
is what a search over a common word reads). On SQLite the FTS5 tables `records_searchentry_fts`
(the four columns, porter stemming, bm25) and `records_searchentry_trigram` (`title_key`, the
trigram tokenizer), both reading this table (external content).
"""

from __future__ import annotations

from django.contrib.postgres.search import SearchVectorField
from django.db import models


class SearchKind(models.TextChoices):
    MODEL = "model", "Model"
    DATASET = "dataset", "Dataset"
    PROTOCOL = "protocol", "Protocol"
    CONFIGURATION = "configuration", "Configuration"
    WORK = "work", "Work"
    SOURCE = "source", "Source"
    DECISION = "decision", "Decision"
    EVALUATION = "evaluation", "Evaluation"
    RESULT = "result", "Result"


class SearchEntry(models.Model):
    kind = models.CharField(max_length=20, choices=SearchKind.choices)
    record_id = models.BigIntegerField(help_text="The record's primary key in its own table.")
    stable_id = models.CharField(max_length=150)
    title = models.CharField(max_length=500)
    url = models.CharField(max_length=400, help_text="The hit's address (a result's: its evaluation's, at the result).")
    detail = models.CharField(max_length=500, blank=True, help_text="A line the hit shows after its title.")
    protocol_title = models.CharField(max_length=500, blank=True)
    protocol_url = models.CharField(max_length=400, blank=True)
    task_name = models.CharField(max_length=300, blank=True)
    task_url = models.CharField(max_length=400, blank=True)
    model_name = models.CharField(max_length=300, blank=True)
    model_url = models.CharField(max_length=400, blank=True)
    # An evaluation's (or a result's) evaluation: its review state is read with the hit, never copied here.
    evaluation = models.ForeignKey(
        "records.Evaluation",
        null=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
    )
    name_text = models.TextField(blank=True)
    place_text = models.TextField(blank=True)
    subject_text = models.TextField(blank=True)
    body_text = models.TextField(blank=True)
    name_keys = models.TextField(
        blank=True, help_text="' key key ... ': the record's own names and aliases in one spelling (alias_key)."
    )
    title_key = models.CharField(max_length=500, blank=True, help_text="The title in one spelling, for near spellings.")
    number = models.FloatField(null=True, help_text="A result's value, for a number searched (0.41 finds 0.410).")
    exact_value = models.CharField(max_length=80, blank=True, help_text="A result's value with its printed digits.")
    vector = SearchVectorField(null=True, help_text="PostgreSQL: the text columns as a tsvector (weights A-D).")
    name_vector = SearchVectorField(
        null=True, help_text="PostgreSQL: the record's own names as a tsvector (vector's part weighted A)."
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "record_id"], name="searchentry_one_per_record")]
        indexes = [
            models.Index(fields=["number"], name="rec_searchentry_number"),
            models.Index(fields=["stable_id"], name="rec_searchentry_stable_id"),
        ]
        verbose_name_plural = "search entries"

    def __str__(self) -> str:
        return f"{self.kind} {self.stable_id}"
