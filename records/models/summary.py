"""What a protocol page reads besides the rows it shows: each protocol's comparisons in summary
(records.protocol_summary), and the count of writes that changed them.

`ProtocolChanges.number` is raised by database triggers (records.summary_triggers) in the
transaction of every write to a protocol's evaluations or results, to an evaluation another one
repeats, or to a configuration or dataset they name; a `ProtocolSummary` is current while its
`number` equals it. Writers only touch the first table and readers only write the second, so a
reader storing a summary never waits on a writer's lock.
"""

from __future__ import annotations

from django.db import models


class ProtocolChanges(models.Model):
    protocol = models.OneToOneField(
        "records.Protocol", primary_key=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    number = models.BigIntegerField(default=0)

    class Meta:
        verbose_name_plural = "protocol changes"

    def __str__(self) -> str:
        return f"protocol {self.pk}: {self.number} changes"


class ProtocolSummary(models.Model):
    protocol = models.OneToOneField(
        "records.Protocol", primary_key=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    number = models.BigIntegerField(help_text="The protocol's ProtocolChanges.number the summary was computed at.")
    data = models.TextField(help_text="The summary as JSON (records.protocol_summary).")

    class Meta:
        verbose_name_plural = "protocol summaries"

    def __str__(self) -> str:
        return f"protocol {self.pk}: summary at change {self.number}"
