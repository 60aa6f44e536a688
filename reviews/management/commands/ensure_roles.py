from django.core.management.base import BaseCommand, CommandError

from reviews.services import roles_ensure


class Command(BaseCommand):
    help = "Create or update the role groups (Curators, Release managers, Benchmark operators). Idempotent."

    def handle(self, *args: object, **options: object) -> None:
        try:
            report = roles_ensure()
        except LookupError as exc:
            raise CommandError(str(exc)) from None
        for line in report:
            self.stdout.write(line)
