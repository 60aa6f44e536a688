"""The seed record (`../shared/seed/000_0206ef59f52c60a4.txt`) as an import document, and its reviews.

Ids the page shows are kept (the protocol's); records whose ids the page does not show get
descriptive stable ids here. The 18 tasks come from the one task table in `data/`, shared with
the benchmark runner.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from common.types import Actor
from records.imports import FORMAT_NAME, FORMAT_VERSION, ImportReport, records_import
from records.models import Evaluation, Protocol
from reviews.models import ReviewState
from reviews.services import review_transition_apply

TASKS_CSV = Path(settings.BASE_DIR) / "data" / "nt_downstream_tasks_revised.csv"
SEED_PAGE = "000_0206ef59f52c60a4"
SEED_RELEASE_ID = "2026-10-22-1b7cf027e4f6"

PROTOCOL_ID = "gfm-guide-20261014-protocol-nt-ia3-finetune-runtime"
PAPER_ID = "dalla-torre-2025-nature-methods-nucleotide-transformer"
CARD_ID = "instadeepai-nt-downstream-tasks-revised-dataset-card"
SUITE_ID = "nt-benchmark-revised-18-tasks"
HARDWARE_LOCATOR = "Methods, 'Data preparation > Hardware', paragraph 1"
CONCERN_LOCATOR = "Methods, 'Data preparation > Hardware', paragraph 1; Discussion, paragraph 3"
QUOTE = (
    "On average, a fine-tuning run lasted 20 min for the 500M-parameter models and 50 min for the "
    "2.5B-parameter models."
)
CONCERN = (
    "Fine-tuning time conflicts within the article. Methods 'Hardware' say all fine-tuning runs used one "
    "node of eight A100 GPUs and averaged 20 min (500M-parameter models) and 50 min (2.5B-parameter "
    "models); the Discussion says the IA3 technique allows even the largest models to be fine-tuned in "
    "under 15 min on a single GPU. Both are recorded; neither is preferred."
)
REVIEW_REQUIREMENTS = (
    "Protocol-specific applicability, permitted inputs, access, split, evaluator and execution requirements "
    "need review before implementation or execution."
)
# (configuration id, evaluation id, size label, parameters, minutes)
MODELS = (
    ("nt-500m-ia3-dalla-torre-2025", "nt-500m-ia3-finetune-runtime-dalla-torre-2025", "500M", 500_000_000, "20"),
    ("nt-2-5b-ia3-dalla-torre-2025", "nt-2-5b-ia3-finetune-runtime-dalla-torre-2025", "2.5B", 2_500_000_000, "50"),
)


def task_rows() -> list[dict[str, str]]:
    with TASKS_CSV.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def task_stable_id(task_key: str) -> str:
    return f"nt-benchmark-revised-{task_key.lower().replace('_', '-')}"


def seed_document() -> dict[str, Any]:
    """The seed page's records in the bulk import format."""
    tasks = [
        {
            "stable_id": task_stable_id(row["task"]),
            "name": row["task"],
            "task_key": row["task"],
            "position": position,
            "train_size": int(row["train_size"]),
            "test_size": int(row["test_size"]),
            "num_classes": int(row["num_classes"]),
            "sequence_length_bp": int(row["sequence_length_bp"]),
            "metric": row["metric"],
            "source": CARD_ID,
            "source_locator": "dataset card; metric from Dalla-Torre et al. 2025, Fig. 2 legend",
        }
        for position, row in enumerate(task_rows(), start=1)
    ]
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "title": "Nucleotide Transformer IA3 fine-tuning run time (seed record page 000_0206ef59f52c60a4)",
        "areas": [{"stable_id": "dna-genomes", "label": "DNA and genomes"}],
        "contexts": [{"stable_id": "research", "label": "Research"}],
        "works": [
            {
                "stable_id": PAPER_ID,
                "title": "Nucleotide Transformer: building and evaluating robust foundation models for human genomics",
                "authors_short": "Dalla-Torre et al.",
            },
            {"stable_id": CARD_ID, "title": "InstaDeepAI/nucleotide_transformer_downstream_tasks_revised"},
        ],
        "sources": [
            {
                "stable_id": PAPER_ID,
                "title": "Nucleotide Transformer: building and evaluating robust foundation models for human genomics",
                "venue": "Nature Methods",
                "kind": "paper",
                "authors_short": "Dalla-Torre et al. 2025",
                "citation": "Nature Methods 22, 287-297",
                "published_date": "2024-11-28",
                "doi": "10.1038/s41592-024-02523-z",
                "pmcid": "PMC11810778",
                "url": "https://pmc.ncbi.nlm.nih.gov/articles/PMC11810778/",
                "copy_consulted": "full-text XML",
                "work": PAPER_ID,
            },
            {
                "stable_id": CARD_ID,
                "title": "InstaDeepAI/nucleotide_transformer_downstream_tasks_revised",
                "venue": "Hugging Face dataset card",
                "kind": "dataset_card",
                "url": "https://huggingface.co/datasets/InstaDeepAI/nucleotide_transformer_downstream_tasks_revised",
                "work": CARD_ID,
            },
        ],
        "datasets": [
            {
                "stable_id": SUITE_ID,
                "name": "NT benchmark, all 18 tasks",
                "description": (
                    "The 18 tasks of the revised Nucleotide Transformer downstream benchmark. Train and test sizes, "
                    "classes and sequence lengths as its dataset card states them; each task is scored with MCC "
                    "(tenfold cross-validation; Dalla-Torre et al. 2025, Fig. 2 legend)."
                ),
                "metric": "MCC",
                "source": CARD_ID,
                "source_locator": "dataset card",
                "tasks": tasks,
            }
        ],
        "configurations": [
            {
                "stable_id": config_id,
                "name": f"Nucleotide Transformer {size}-parameter models, IA3 fine-tuning (Dalla-Torre et al. 2025)",
                "short_name": f"NT {size}-parameter models",
                "family": "Nucleotide Transformer",
                "parameter_count": parameters,
                "method": "IA3 fine-tuning",
                "source": PAPER_ID,
            }
            for config_id, _evaluation_id, size, parameters, _minutes in MODELS
        ],
        "protocols": [
            {
                "stable_id": PROTOCOL_ID,
                "title": "Nucleotide Transformer IA3 fine-tuning run time (Dalla-Torre et al. 2025 Methods 'Hardware')",
                "summary": "Average wall time of one parameter-efficient (IA3) fine-tuning run on the downstream tasks.",
                "procedure": (
                    "IA3 fine-tuning on one node of eight A100 GPUs, weights replicated, batch size eight (one sample "
                    "per GPU); average duration of a fine-tuning run."
                ),
                "version_label": "Nature Methods 2025 Methods",
                "metric": {
                    "name": "Runtime",
                    "short_name": "runtime",
                    "description": "Mean wall time per IA3 fine-tuning run",
                    "unit": "minute",
                    "direction": "lower",
                },
                "datasets": [SUITE_ID],
                "areas": ["dna-genomes"],
                "contexts": ["research"],
                "limitations": [
                    "Developer-reported average; the number of runs and the tasks averaged over are not stated.",
                    "The Discussion's 'under 15 min on a single GPU' conflicts with these values (see the source concern).",
                ],
                "source": PAPER_ID,
                "source_locator": HARDWARE_LOCATOR,
                "explanatory_profile": "",
                "explanatory_profile_reviewed": False,
                "baseline_roles": [
                    {
                        "stable_id": f"{PROTOCOL_ID}-null-control",
                        "kind": "null_control",
                        "status": "proposed",
                        "selection_rule": "Select a task-valid null control after reviewing inputs and metric",
                        "requirements": REVIEW_REQUIREMENTS,
                    },
                    {
                        "stable_id": f"{PROTOCOL_ID}-conventional-reference",
                        "kind": "conventional_reference",
                        "status": "proposed",
                        "selection_rule": "Select an upstream conventional reference after reviewing the full protocol",
                        "requirements": REVIEW_REQUIREMENTS,
                    },
                ],
            }
        ],
        "evaluations": [
            {
                "stable_id": evaluation_id,
                "title": f"NT {size}-parameter models IA3 fine-tuning run time (Dalla-Torre et al. 2025)",
                "protocol": PROTOCOL_ID,
                "configuration": config_id,
                "dataset": SUITE_ID,
                "measured_by": "authors",
                "reading_method": "text",
                "setup": "IA3 fine-tuning, one node of eight A100 GPUs",
                "aggregation": "",
                "uncertainty": "",
                "coverage_scored": None,
                "coverage_eligible": None,
                "source": PAPER_ID,
                "source_locator": HARDWARE_LOCATOR,
                "quote": QUOTE,
                "concern_source": PAPER_ID,
                "concern_locator": CONCERN_LOCATOR,
                "results": [
                    {
                        "stable_id": f"{evaluation_id}-runtime",
                        "value": minutes,
                        "unit": "minute",
                        "printed_value": f"{minutes} min",
                    }
                ],
            }
            for config_id, evaluation_id, size, _parameters, minutes in MODELS
        ],
        "decisions": [
            {
                "stable_id": "select-execution-workflow-large-scale-diagnostic-genomics",
                "title": "Select an execution workflow for large-scale diagnostic genomics",
                "protocols": [PROTOCOL_ID],
            }
        ],
    }


# The review the seed page records: (model, stable id, transitions with their reasons).
CHECKED = f"Source checked on the published record page {SEED_PAGE}."
SEED_REVIEWS: tuple[tuple[type, str, tuple[tuple[str, str], ...]], ...] = (
    (Protocol, PROTOCOL_ID, (("check_source", CHECKED),)),
    *(
        (Evaluation, evaluation_id, (("check_source", CHECKED), ("exclude", CONCERN)))
        for _config_id, evaluation_id, _size, _parameters, _minutes in MODELS
    ),
)


@transaction.atomic
def seed_import(*, actor: Actor = None) -> tuple[ImportReport, int]:
    """Import the seed document and apply the page's review states; returns the report and transitions applied.

    Idempotent: transitions are applied only to records still proposed, so a second run writes nothing.
    """
    report = records_import(document=seed_document(), actor=actor)
    applied = 0
    for model, stable_id, transitions in SEED_REVIEWS:
        record = model.objects.get(stable_id=stable_id)
        if record.review_state != ReviewState.PROPOSED:
            continue
        for name, reason in transitions:
            review_transition_apply(record=record, transition=name, actor=actor, reason=reason, automatic=True)
            applied += 1
    return report, applied


def seed_record_keys() -> list[tuple[str, str]]:
    """(record type, stable id) of every record on the seed page, for the release line's membership."""
    document = seed_document()
    keys = [("protocol", PROTOCOL_ID), ("decision", document["decisions"][0]["stable_id"])]
    keys += [("source", s["stable_id"]) for s in document["sources"]]
    keys += [("dataset", SUITE_ID)] + [("dataset", t["stable_id"]) for t in document["datasets"][0]["tasks"]]
    keys += [("configuration", c["stable_id"]) for c in document["configurations"]]
    for evaluation in document["evaluations"]:
        keys += [("evaluation", evaluation["stable_id"])] + [("result", r["stable_id"]) for r in evaluation["results"]]
    keys += [("baselinerole", b["stable_id"]) for b in document["protocols"][0]["baseline_roles"]]
    return sorted(keys)
