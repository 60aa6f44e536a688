import pytest
from rest_framework.test import APIClient

from portal.tokens import api_token_create
from tests.api.identity_world import world  # noqa: F401 (the identity tests' catalogue, a fixture)


@pytest.fixture
def api():
    return APIClient()


@pytest.fixture
def token_client(make_user):
    """token_client("curator") -> an APIClient authenticated with that role's token."""

    def make(role: str) -> APIClient:
        client = APIClient()
        if role != "anonymous":
            token = api_token_create(user=make_user(role))
            client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        return client

    return make
