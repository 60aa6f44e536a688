"""A visitor meets a damaged release file in a real browser: the file is
withheld with a page saying why, and the release page says the release is damaged, accessibly."""

from __future__ import annotations

import os
import stat

import pytest

from tests.browser.conftest import axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MATRIX = "data/model_evaluation_matrix.csv.gz"


def test_a_visitor_is_refused_a_damaged_file_and_the_release_page_says_so(
    browser, live_server, seeded, make_user, settings, tmp_path
):
    from releases.build import release_build
    from releases.services import release_cut
    from releases.store import release_file_path

    settings.RELEASES_DIR = tmp_path / "releases"
    release = release_build(release_pk=release_cut(actor=make_user("release_manager")).pk)
    assert release.status == "published", release.build.error
    path = release_file_path(release, MATRIX)
    data = bytearray(path.read_bytes())
    data[200] ^= 0x01
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    path.write_bytes(bytes(data))
    os.chmod(path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)

    context = browser.new_context(base_url=live_server.url, bypass_csp=True)
    page = context.new_page()
    response = page.goto(f"/releases/{release.release_id}/files/{MATRIX}")
    assert response is not None and response.status == 503
    assert page.get_by_role("heading", level=1).inner_text() == "This file is damaged and withheld"

    page.goto(f"/releases/{release.release_id}/")
    alert = page.get_by_role("alert")
    assert "This release is damaged" in alert.inner_text() and MATRIX in alert.inner_text()
    row = page.locator(f"tr#{MATRIX.rsplit('/', 1)[-1].split('.', 1)[0]}")
    assert "damaged: withheld until repaired" in row.inner_text()
    assert axe_violations(page) == []
    context.close()
