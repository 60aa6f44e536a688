"""Only reviews.services assigns a review state: a lint over the whole code base, tests included."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ["portal", "records", "reviews", "releases", "benchmarks", "tests", "bench"]
THE_SERVICE = ROOT / "reviews" / "services.py"
STATE_FIELDS = {"review_state"}
WRITING_CALLS = {"update", "create", "get_or_create", "update_or_create", "bulk_create", "bulk_update"}


def writes_in(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr in STATE_FIELDS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} assigns .{target.attr}")
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if (
                name == "setattr"
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in STATE_FIELDS
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} setattr review_state")
            keywords = {k.arg for k in node.keywords}
            model_constructor = name[:1].isupper()
            if keywords & STATE_FIELDS and (name in WRITING_CALLS or model_constructor):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}(review_state=...)")
            if name == "bulk_update" and any("review_state" in ast.unparse(arg) for arg in node.args[1:]):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} bulk_update of review_state")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "set review_state" in node.value.lower():
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} raw SQL sets review_state")
    return found


def test_it_assigns_review_states_only_in_the_review_service():
    offenders = []
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == THE_SERVICE or "migrations" in path.parts or path == Path(__file__).resolve():
                continue
            offenders += writes_in(path)
    assert offenders == []


def test_the_lint_catches_each_way_of_writing_a_state(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "record.review_state = 'x'\n"
        "setattr(record, 'review_state', 'x')\n"
        "Evaluation.objects.filter(pk=1).update(review_state='x')\n"
        "Evaluation(review_state='x')\n"
        "cursor.execute('UPDATE records_evaluation SET review_state = 1')\n"
        "Evaluation.objects.filter(review_state='x')\n"
    )
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert len(writes_in(sample)) == 5
    finally:
        ROOT = saved
