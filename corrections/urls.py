from django.urls import path

from corrections import views

app_name = "corrections"

urlpatterns = [
    path("corrections/new/", views.correction_new, name="correction-new"),
    path("corrections/<str:token>/", views.correction_status, name="correction-status"),
]
