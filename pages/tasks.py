"""Celery tasks of the public pages. `search_pages_warm` is sent by beat (pages.search_page)."""

from __future__ import annotations

from celery import shared_task

from pages import search_page


@shared_task(name="pages.tasks.search_pages_warm", ignore_result=True)
def search_pages_warm() -> dict[str, object]:
    return search_page.search_pages_warm().as_dict()
