from django.conf import settings

from common.licences import data_licence


def site(request):
    return {
        "site_name": settings.PORTAL_SITE_NAME,
        "public_reviewer_names": settings.PUBLIC_REVIEWER_NAMES,
        "data_licence": data_licence(),
    }
