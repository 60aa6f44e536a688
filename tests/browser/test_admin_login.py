"""A curator follows a link to the admin's login with a `next` that points off the site (a phishing
link, or a mistyped one): after signing in they land on the admin's index, never on the other site
and never on a missing page; a `next` on this site is still followed."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def sign_in(page, next_url: str) -> None:
    page.goto(f"/admin/login/?next={next_url}")
    page.fill("#id_username", "curator-one")
    page.fill("#id_password", "a-long-test-password")
    with page.expect_navigation():
        page.click("input[type=submit]")


@pytest.mark.parametrize("next_url", ["https://evil.example/admin/", "//evil.example/"])
def test_an_off_site_next_after_login_lands_on_the_admin_index(browser, live_server, make_user, next_url):
    make_user("curator", "curator-one")
    page = browser.new_page(base_url=live_server.url)
    sign_in(page, next_url)
    assert page.url == f"{live_server.url}/admin/"
    assert page.get_by_role("heading", name="Catalogue, reviews, releases and benchmark jobs").count() == 1
    page.close()


def test_a_next_on_this_site_is_followed(browser, live_server, make_user):
    make_user("curator", "curator-one")
    page = browser.new_page(base_url=live_server.url)
    sign_in(page, "/admin/records/result/")
    assert page.url == f"{live_server.url}/admin/records/result/"
    page.close()
