"""The shipped examples' verdicts and best marks, for comparing two commits: loads the seed and the
example documents into a throw-away SQLite database and writes, as JSON, every agreement's verdict
(subject|task|metric -> [verdict, measurements]), every protocol column's best rows (with "~tied")
and every task table's best and tied rows; prints their counts by verdict.

Run: .venv/bin/python bench/evidence_verdicts.py OUT.json   (then the same at another commit, and
compare the two files).
"""

from __future__ import annotations

import collections
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
os.environ.setdefault("PORTAL_LOG_LEVEL", "WARNING")
os.environ["PORTAL_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-verdicts-")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from records import agreement, compared_rows, comparisons  # noqa: E402
from records.examples import examples_load  # noqa: E402
from records.models import Dataset, Protocol  # noqa: E402


def main() -> None:
    call_command("migrate", verbosity=0)
    call_command("import_seed", verbosity=0)
    examples_load()
    found: dict[str, dict] = {"verdicts": {}, "best": {}, "task_best": {}}
    for item in agreement.agreements(list(agreement.evidence_queryset()), agreement.task_families()):
        key = f"{item.subject.stable_id}|{item.task.stable_id}|{item.metric}"
        found["verdicts"][key] = [item.verdict, len(item.measurements)]
    for protocol in Protocol.objects.all():
        evaluations = compared_rows.compared_evaluations(protocol)
        for group in comparisons.compare(protocol=protocol, evaluations=evaluations, include_excluded=False):
            found["best"][f"{protocol.stable_id}|{group.key}"] = sorted(
                row.evaluation.stable_id + ("~tied" if row.best_tied else "") for row in group.rows if row.is_best
            )
    for task in Dataset.objects.filter(evaluations__isnull=False).distinct():
        evaluations, family = agreement.evaluations_for_task(task)
        for table in agreement.task_tables(evaluations, {x: min(family) for x in family}):
            found["task_best"][f"{task.stable_id}|{table.metric}|{table.unit}"] = sorted(
                row.measurement.shown.evaluation.stable_id + ("~tied" if row.tied_with_best else "")
                for row in table.rows
                if row.is_best or row.tied_with_best
            )
    Path(sys.argv[1]).write_text(json.dumps(found, indent=1, sort_keys=True))
    counts = collections.Counter(verdict for verdict, _ in found["verdicts"].values())
    print(f"{len(found['verdicts'])} agreements: " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())))
    tied = sum(1 for rows in found["best"].values() if any(r.endswith("~tied") for r in rows))
    print(f"{len(found['best'])} protocol columns, {tied} with a tied best; {len(found['task_best'])} task tables")


if __name__ == "__main__":
    main()
