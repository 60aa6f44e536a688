"""The long lists of the task, model, work, source and configuration pages, one page of each at a time.

A page holds several lists (a task's ranked tables, its agreements, its sources); each has a key, and
`?table=<key>&page=<n>` shows page n of that list while every other list shows its first page. The
pager's links keep the rest of the query string in its own order (a model page's `task` filter), so
each link is one address, cached whole by pages.page_cache under its full query string. A page
number past the end shows the last page; one that is not a number, the first (Django's
Paginator.get_page). A list read from a queryset costs two queries (its count and its page), one
given as a list none: the number of queries never depends on the number of rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import QueryDict

T = TypeVar("T")

TABLE_PARAM = "table"
PAGE_PARAM = "page"
PER_PAGE = 25


@dataclass
class Listed(Generic[T]):
    """One page of a list: its items, their place in it ("26–50 of 2,000") and the pager's links
    (label, query string, current); no links when the list fits one page."""

    key: str
    items: list[T]
    first: int
    last: int
    total: int
    per_page: int
    links: list[tuple[str, str, bool]] = field(default_factory=list)

    @property
    def is_paged(self) -> bool:
        return bool(self.links)

    @property
    def rest(self) -> int:
        """How many are not on this page."""
        return self.total - len(self.items)


def listed(items: Sequence[T] | QuerySet[Any], *, key: str, params: QueryDict, per_page: int = PER_PAGE) -> Listed[T]:
    """The page of `items` that `params` asks for (`table=key&page=n`), the first page otherwise."""
    paginator = Paginator(items, per_page)
    asked = params.get(PAGE_PARAM) if params.get(TABLE_PARAM) == key else None
    page = paginator.get_page(asked)
    links: list[tuple[str, str, bool]] = []
    if paginator.num_pages > 1:
        query = params.copy()
        query[TABLE_PARAM] = key
        for number in paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1):
            if not isinstance(number, int):  # Paginator.ELLIPSIS, a gap in the range
                links.append((str(number), "", False))
                continue
            query[PAGE_PARAM] = str(number)
            links.append((str(number), query.urlencode(), number == page.number))
    return Listed(
        key=key,
        items=list(page.object_list),
        first=page.start_index(),
        last=page.end_index(),
        total=paginator.count,
        per_page=per_page,
        links=links,
    )


def first_of(items: Sequence[T], *, count: int) -> Listed[T]:
    """The first `count` of `items`, with no pager: a list summarised where the page links to all of it."""
    shown = list(items[:count])
    return Listed(key="", items=shown, first=1 if shown else 0, last=len(shown), total=len(items), per_page=count)
