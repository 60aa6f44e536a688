"""Mail backends that fail, to prove that failed mail is retried and never loses a suggestion."""

import smtplib

from django.core.mail.backends.locmem import EmailBackend


class FailingOnceBackend(EmailBackend):
    failures_left = 1

    def send_messages(self, messages):
        if FailingOnceBackend.failures_left > 0:
            FailingOnceBackend.failures_left -= 1
            raise smtplib.SMTPServerDisconnected("the mail server hung up")
        return super().send_messages(messages)


class AlwaysFailingBackend(EmailBackend):
    def send_messages(self, messages):
        raise smtplib.SMTPServerDisconnected("the mail server is down")
