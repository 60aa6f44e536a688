"""Public release pages and downloads; portal/urls.py includes them at the site root."""

from django.urls import path

from releases import views

app_name = "releases"

urlpatterns = [
    path("releases/", views.release_list, name="list"),
    path("releases/latest/", views.release_latest, name="latest"),
    path("releases/latest/files/<path:name>", views.release_latest_file, name="latest-file"),
    path("releases/<int:pk>/", views.release_build_detail, name="build"),
    path("releases/<str:release_id>/", views.release_detail, name="detail"),
    path("releases/<str:release_id>/datacite.json", views.release_datacite, name="datacite"),
    path("releases/<str:release_id>/files/<path:name>", views.release_file, name="file"),
]
