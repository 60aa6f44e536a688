"""A script as a user of a client generated from the portal's schema (openapi-python-client) writes it:
every evaluation, page after page by `next_cursor`, anonymously; one read by its id; one review
transition with a curator's token. tests/api/test_generated_client.py type-checks it with
`mypy --strict` beside the generated package `portal_client`, then runs it against a live portal.

Usage: python generated_client_script.py BASE_URL TOKEN EVALUATION_ID (the one to check). Prints
one JSON object saying what it read and did."""

from __future__ import annotations

import json
import sys
from decimal import Decimal

from portal_client import AuthenticatedClient, Client
from portal_client.api.evaluations import evaluations_list, evaluations_retrieve, evaluations_transitions_create
from portal_client.models import (
    Evaluation,
    PaginatedEvaluationList,
    ReviewStateEnum,
    TransitionEnum,
    TransitionRequestRequest,
    TransitionResult,
)
from portal_client.types import UNSET, Unset


def every_evaluation(client: Client) -> tuple[list[Evaluation], int]:
    """Every evaluation, one a page (to page), and the number of pages read."""
    evaluations: list[Evaluation] = []
    cursor: str | Unset = UNSET
    pages = 0
    while True:
        page = evaluations_list.sync(client=client, page_size=1, cursor=cursor)
        if not isinstance(page, PaginatedEvaluationList):
            raise SystemExit(f"a page of evaluations was refused: {page!r}")
        pages += 1
        evaluations += page.results
        if page.next_cursor is None:
            return evaluations, pages
        cursor = page.next_cursor


def main(base_url: str, token: str, to_check: str) -> dict[str, object]:
    anonymous = Client(base_url=base_url, raise_on_unexpected_status=True)
    evaluations, pages = every_evaluation(anonymous)
    values: list[Decimal] = [Decimal(result.value) for evaluation in evaluations for result in evaluation.results]

    first = evaluations_retrieve.sync(evaluations[0].evaluation_id, client=anonymous)
    if not isinstance(first, Evaluation):
        raise SystemExit(f"reading {evaluations[0].evaluation_id} was refused: {first!r}")

    curator = AuthenticatedClient(base_url=base_url, token=token, prefix="Token")
    request = TransitionRequestRequest(transition=TransitionEnum.CHECK_SOURCE, expected_state=ReviewStateEnum.PROPOSED)
    applied = evaluations_transitions_create.sync(to_check, client=curator, body=request)
    if not isinstance(applied, TransitionResult):
        raise SystemExit(f"the transition was refused: {applied!r}")

    return {
        "pages": pages,
        "evaluation_ids": [evaluation.evaluation_id for evaluation in evaluations],
        "values": [str(value) for value in values],
        "first": first.evaluation_id,
        "checked": {"review_state": applied.review_state.value, "transition": applied.event.transition},
    }


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:4])))
