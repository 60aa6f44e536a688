from django import template

from corrections import selectors
from corrections.forms import CorrectionForm

register = template.Library()


@register.inclusion_tag("corrections/_correction_form.html", takes_context=True)
def correction_form(context, record):
    """The "Suggest a correction" form of a record page (one query for a protocol's results)."""
    reference = f"{record._meta.model_name}:{record.stable_id}"
    form = CorrectionForm(choices=selectors.page_choices(record), initial={"record": reference})
    return {"form": form, "csrf_token": context.get("csrf_token"), "record": record}
