from django.conf import settings


def site(request):
    return {"site_name": settings.PORTAL_SITE_NAME, "public_reviewer_names": settings.PUBLIC_REVIEWER_NAMES}
