"""A mail backend for a worker process under test: each message as a file in PORTAL_TEST_MAIL_DIR
(Django's file backend, its folder from the environment, since a worker's settings come from there)."""

import os

from django.core.mail.backends.filebased import EmailBackend


class FolderEmailBackend(EmailBackend):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("file_path", os.environ["PORTAL_TEST_MAIL_DIR"])
        super().__init__(*args, **kwargs)
