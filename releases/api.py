"""The releases API (included under /api/v1/ by the portal's API router; see `releases/api_urls.py`).

- `GET  releases/`                  published releases, newest first, and the builds in progress
- `POST releases/`                  cut a release (release managers only): 202 with the release's
                                    URL and status; 409 with `code` "nothing_changed" (nothing changed
                                    since the last published release) or "build_in_progress", naming
                                    that release; 403 without the permission
- `GET  releases/<release id>/`     one published release: status, counts, files with bytes,
                                    checksums and download links
- `GET  releases/latest/`           302 to the newest published release (not cached; 404 before any)
- `GET  releases/<number>/`         a release before it has an id (its build's status and progress;
                                    staff also see a failed build's error)
- PUT, PATCH and DELETE are refused (405): a published release never changes.

Every error body is JSON: {"detail": "...", "code": "..."}.
"""

from __future__ import annotations

from django.http import HttpResponseRedirect
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import MethodNotAllowed, NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import ConditionalGetMixin, KnownParametersMixin, StrictCharField
from common.links import absolute_url
from releases import selectors
from releases.models import Release, ReleaseFile, ReleaseStatus
from releases.services import CUT_PERMISSION, ReleaseError, may_cut_release, release_cut

IMMUTABLE_DETAIL = (
    "Releases cannot be changed or deleted: a published release never changes. Cut a new release instead."
)


class MayCutRelease(permissions.BasePermission):
    """Anyone may read; only release managers (permission releases.cut_release) may POST a cut."""

    message = f"Only release managers may cut a release (permission {CUT_PERMISSION})."

    def has_permission(self, request, view) -> bool:
        if request.method == "POST":
            return may_cut_release(request.user)
        return True


class ReleaseFileSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()

    class Meta:
        model = ReleaseFile
        fields = ["name", "kind", "bytes", "sha256", "sha512", "url"]

    def get_url(self, record: ReleaseFile) -> str:
        path = reverse("releases:file", kwargs={"release_id": record.release.release_id, "name": record.name})
        return absolute_url(path, request=self.context.get("request"))


class ReleaseSerializer(serializers.ModelSerializer):
    omitted_sometimes = ("error",)  # staff only (to_representation); the API schema says so
    url = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField()
    previous = serializers.SerializerMethodField()
    files = serializers.SerializerMethodField()
    damaged = serializers.SerializerMethodField(
        help_text="True when the latest fixity check (the weekly audit, or a download) found damaged files."
    )
    damaged_files = serializers.SerializerMethodField(
        help_text="The files that check found damaged: withheld (503) until repaired."
    )
    status = serializers.ChoiceField(
        choices=ReleaseStatus.choices, read_only=True, help_text="Published, or its build's status before."
    )
    progress = serializers.IntegerField(source="build.progress", read_only=True, help_text="Percent of the build done.")
    stage = serializers.CharField(source="build.stage", read_only=True, help_text="What the build is doing now.")
    error = serializers.CharField(source="build.error", read_only=True, help_text="Why the build failed (staff only).")

    class Meta:
        model = Release
        fields = [
            "url",
            "page",
            "release_id",
            "release_date",
            "status",
            "progress",
            "stage",
            "is_external",
            "note",
            "previous",
            "counts",
            "published_at",
            "error",
            "files",
            "damaged",
            "damaged_files",
        ]

    def to_representation(self, release: Release) -> dict:
        data = super().to_representation(release)
        request = self.context.get("request")
        if not (request is not None and request.user.is_staff):
            data.pop("error")  # a failed build's error may name paths and internals: staff only
        return data

    def _absolute(self, path: str) -> str:
        return absolute_url(path, request=self.context.get("request"))

    def get_url(self, release: Release) -> str:
        return self._absolute(reverse("releases_api:detail", kwargs={"release_id": release.public_key}))

    def get_page(self, release: Release) -> str:
        from releases.views import release_detail_url

        return self._absolute(release_detail_url(release))

    def get_previous(self, release: Release) -> str | None:
        return release.previous.release_id if release.previous_id else None

    def get_damaged(self, release: Release) -> bool:
        return selectors.release_damage(release).damaged

    def get_damaged_files(self, release: Release) -> list[str]:
        return list(selectors.release_damage(release).files)

    def get_files(self, release: Release) -> list[dict]:
        if not release.holds_files:
            return []
        files = list(release.files.all())
        for record in files:
            record.release = release  # no query per file for its URL
        return ReleaseFileSerializer(files, many=True, context=self.context).data


def _error(exc: ReleaseError, request) -> Response:
    body = {"detail": exc.message, "code": exc.code}
    if exc.release is not None:
        body["release"] = ReleaseSerializer(exc.release, context={"request": request}).data
    return Response(body, status=exc.status)


class ReleaseAPIView(KnownParametersMixin, ConditionalGetMixin, APIView):
    """Reads carry ETags; any method that would change a release is refused with 405."""

    permission_classes = [MayCutRelease]

    def http_method_not_allowed(self, request, *args, **kwargs):
        raise MethodNotAllowed(request.method, detail=IMMUTABLE_DETAIL)


ReleaseListSerializer = inline_serializer(
    "ReleaseList",
    fields={
        "results": ReleaseSerializer(many=True),
        "building": ReleaseSerializer(many=True, help_text="Releases requested or building."),
    },
)


class CutRequest(serializers.Serializer):
    note = StrictCharField(
        max_length=2000, required=False, allow_blank=True, default="", help_text="A note shown with the release."
    )


ReleaseErrorSerializer = inline_serializer(
    "ReleaseError",
    fields={
        "detail": serializers.CharField(),
        "code": serializers.CharField(),
        "release": ReleaseSerializer(required=False),
    },
)


class ReleaseListView(ReleaseAPIView):
    http_method_names = ["get", "post", "head", "options"]

    @extend_schema(
        operation_id="releases_list",
        summary="List releases",
        responses={200: ReleaseListSerializer},
        description="Published releases, newest first, and builds in progress.",
    )
    def get(self, request):
        published = selectors.published_releases().prefetch_related(selectors.files_prefetch())
        building = selectors.unfinished_releases()
        context = {"request": request}
        return Response(
            {
                "results": ReleaseSerializer(published, many=True, context=context).data,
                "building": ReleaseSerializer(building, many=True, context=context).data,
            }
        )

    @extend_schema(
        operation_id="releases_cut",
        summary="Cut a release",
        request=CutRequest,
        responses={
            202: OpenApiResponse(
                ReleaseSerializer, description="The release row is created; a worker builds it (follow `url`)."
            ),
            409: OpenApiResponse(
                ReleaseErrorSerializer,
                description="nothing_changed since the last published release, or a build_in_progress.",
            ),
        },
        description="Cut a release (release managers only).",
    )
    def post(self, request):
        serializer = CutRequest(data=request.data)
        serializer.is_valid(raise_exception=True)
        note = serializer.validated_data["note"]
        try:
            release = release_cut(actor=request.user, note=note)
        except ReleaseError as exc:
            return _error(exc, request)
        data = ReleaseSerializer(release, context={"request": request}).data
        return Response(data, status=status.HTTP_202_ACCEPTED, headers={"Location": data["url"]})


class ReleaseLatestView(ReleaseAPIView):
    http_method_names = ["get", "head", "options"]

    @extend_schema(
        operation_id="releases_latest",
        summary="Go to the newest release",
        description=(
            "A redirect (302, not cached) to the newest published release's own address, which never "
            "changes; 404 before any release is published."
        ),
        responses={
            302: OpenApiResponse(description="The newest published release, in the Location header."),
            404: OpenApiResponse(description="No release has been published yet."),
        },
    )
    def get(self, request):
        release = selectors.latest_published()
        if release is None:
            raise NotFound("No release has been published yet.")
        location = reverse("releases_api:detail", kwargs={"release_id": release.release_id})
        response = HttpResponseRedirect(absolute_url(location, request=request))
        response["Cache-Control"] = "no-cache"
        return response


class ReleaseDetailView(ReleaseAPIView):
    http_method_names = ["get", "head", "options"]

    @extend_schema(
        operation_id="releases_retrieve",
        summary="Read one release",
        description="A published release (its files, checksums and download links), or a build in progress.",
        parameters=[
            OpenApiParameter(
                "release_id",
                str,
                OpenApiParameter.PATH,
                description="A release id, or a build's number before it has one.",
            )
        ],
        responses={200: ReleaseSerializer},
    )
    def get(self, request, release_id: str):
        key = release_id  # a release id, or a build's number before it has one
        if key.isascii() and key.isdigit():  # str.isdigit() also accepts "²", which int() refuses
            release = (
                selectors.with_last_check(Release.objects.select_related("previous", "build"))
                .prefetch_related(selectors.files_prefetch())
                .filter(pk=int(key))
                .first()
            )
        else:
            release = (
                selectors.with_last_check(Release.objects.select_related("previous", "build"))
                .prefetch_related(selectors.files_prefetch())
                .filter(release_id=key, published_at__isnull=False)
                .first()
            )
        if release is None:
            raise NotFound(f"No release {key!r}.")
        return Response(ReleaseSerializer(release, context={"request": request}).data)
