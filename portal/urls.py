from django.contrib import admin
from django.urls import include, path

from reviews.admin import review_queue_view

urlpatterns = [
    path("admin/review-queue/", admin.site.admin_view(review_queue_view), name="review-queue"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("portal.api_urls")),
    path("", include("reviews.urls")),
    path("", include("records.urls")),
]
