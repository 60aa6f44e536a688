"""An import document that names a key twice is refused, naming the key and where it is: JSON
parsers keep the last value silently, so a document read two ways would import one of them."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from records.models import Result, Source
from records.seed import seed_document

pytestmark = [pytest.mark.django_db, pytest.mark.backend_independent, pytest.mark.embedded_pass]


def with_duplicate(text: str, where: str, key: str, value: str) -> str:
    """`text` with `"key": value` added again right after the first `where` (a JSON fragment)."""
    assert where in text
    return text.replace(where, f"{where} {json.dumps(key)}: {value},", 1)


def seed_text() -> str:
    return json.dumps(seed_document())


def test_it_refuses_a_document_that_names_a_top_level_key_twice(token_client):
    text = with_duplicate(seed_text(), "{", "format", '"benchmark-evidence-import-v0"')
    response = token_client("curator").post("/api/v1/imports/?dry_run=1", text, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["detail"] == "JSON parse error - duplicate key 'format' at format"


def test_it_names_the_path_of_a_key_named_twice_deep_in_the_document(token_client):
    document = seed_document()
    result = document["evaluations"][1]["results"][0]["stable_id"]
    text = with_duplicate(json.dumps(document), f'{{"stable_id": "{result}",', "unit", '"hour"')
    response = token_client("curator").post("/api/v1/imports/", text, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["detail"] == "JSON parse error - duplicate key 'unit' at evaluations[1].results[0].unit"
    assert not Result.objects.exists()


def test_the_command_refuses_a_file_that_names_a_key_twice_in_one_line(make_user, tmp_path):
    make_user("curator", "importer")
    path = tmp_path / "twice.json"
    path.write_text(with_duplicate(seed_text(), "{", "title", '"Another title"'))
    with pytest.raises(CommandError) as refused:
        call_command("import_records", str(path), "--user", "importer")
    assert str(refused.value) == f"{path} is refused: duplicate key 'title' at title"
    assert not Source.objects.exists()
