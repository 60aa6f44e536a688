"""Where the README or the docs name a menu of the admin ("Correction suggestions > Corrections"), the
admin shows that name: the app's section, then the list of one of its models (or a quoted button or
action)."""

from __future__ import annotations

import re
from pathlib import Path

from django.apps import apps
from django.contrib import admin
from django.utils.text import capfirst

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: "Section > List" or 'Section > "A button"': capitalised words, as the admin's index prints them.
MENU = re.compile(r'([A-Z][A-Za-z]+(?: [a-z][A-Za-z]*)*) > ("[^"]+"|[A-Z][A-Za-z]*(?: [a-z][A-Za-z]*)*)')


def admin_menus() -> dict[str, set[str]]:
    """Each app section of the admin's index with the names of its lists."""
    menus: dict[str, set[str]] = {}
    for model in admin.site._registry:
        section = apps.get_app_config(model._meta.app_label).verbose_name
        menus.setdefault(str(section), set()).add(str(capfirst(model._meta.verbose_name_plural)))
    return menus


def test_it_names_the_admins_menus_as_the_admin_shows_them():
    named = [
        (match.group(1), match.group(2)) for doc in DOCS for match in MENU.finditer(" ".join(doc.read_text().split()))
    ]
    assert ("Correction suggestions", "Corrections") in named  # the moderation queue
    assert ("Catalogue", "Import jobs") in named  # the import page
    menus = admin_menus()
    wrong = [
        f"{section} > {entry}"
        for section, entry in named
        if section not in menus or (not entry.startswith('"') and entry not in menus[section])
    ]
    assert wrong == [], f"the admin's sections and lists: {menus}"
