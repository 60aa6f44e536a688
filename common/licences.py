"""The licence of the portal's data: the curated records and the release bundles.

One setting chooses it, `PORTAL_DATA_LICENSE` (an SPDX id, CC-BY-4.0 unless set); the portal knows the
name and URL of the ids in `KNOWN_LICENCES`, and any other id needs `PORTAL_DATA_LICENSE_NAME` and
`PORTAL_DATA_LICENSE_URL`. Everything that shows or writes the licence (the footer of every page, the
API's schema and `Link` header, the release bundles) asks `data_licence()`. Quotes in the records are
short excerpts with their sources, which keep their own terms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class DataLicence:
    """A licence as the portal names it: its SPDX id, its full name and the URL of its text."""

    spdx_id: str
    name: str
    url: str


#: The licences the portal knows by SPDX id (their names as SPDX writes them).
KNOWN_LICENCES: dict[str, DataLicence] = {
    licence.spdx_id: licence
    for licence in (
        DataLicence(
            "CC0-1.0", "Creative Commons Zero v1.0 Universal", "https://creativecommons.org/publicdomain/zero/1.0/"
        ),
        DataLicence(
            "CC-BY-4.0",
            "Creative Commons Attribution 4.0 International",
            "https://creativecommons.org/licenses/by/4.0/",
        ),
        DataLicence(
            "CC-BY-SA-4.0",
            "Creative Commons Attribution Share Alike 4.0 International",
            "https://creativecommons.org/licenses/by-sa/4.0/",
        ),
        DataLicence(
            "ODbL-1.0", "Open Data Commons Open Database License v1.0", "https://opendatacommons.org/licenses/odbl/1-0/"
        ),
    )
}

DEFAULT_LICENCE = "CC-BY-4.0"

# An SPDX short identifier, or a LicenseRef- of one's own (SPDX's idstring: letters, digits, '.', '-').
SPDX_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.\-+]*$")


class LicenceInvalid(ValueError):
    """A licence setting the portal cannot use; the message names the setting and what is wrong."""


def licence_resolve(*, spdx_id: str, name: str = "", url: str = "") -> DataLicence:
    """The licence the three settings name: a known id with its own name and URL (or those given), or
    another id with the name and URL it must be given. Raises LicenceInvalid saying what is wrong."""
    spdx_id, name, url = spdx_id.strip(), name.strip(), url.strip()
    if not SPDX_ID.match(spdx_id):
        raise LicenceInvalid(
            f"PORTAL_DATA_LICENSE={spdx_id!r} is not an SPDX id; use one of {', '.join(KNOWN_LICENCES)} "
            "or another SPDX id with PORTAL_DATA_LICENSE_NAME and PORTAL_DATA_LICENSE_URL"
        )
    known = KNOWN_LICENCES.get(spdx_id)
    if known is None and not (name and url):
        missing = " and ".join(
            variable
            for variable, value in (("PORTAL_DATA_LICENSE_NAME", name), ("PORTAL_DATA_LICENSE_URL", url))
            if not value
        )
        raise LicenceInvalid(
            f"PORTAL_DATA_LICENSE={spdx_id!r} is not one the portal knows ({', '.join(KNOWN_LICENCES)}): "
            f"set {missing} too"
        )
    if url:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise LicenceInvalid(f"PORTAL_DATA_LICENSE_URL={url!r} is not an http(s) address of the licence's text")
    return DataLicence(spdx_id, name or (known.name if known else ""), url or (known.url if known else ""))


def data_licence() -> DataLicence:
    """The licence of the curated records and the release bundles, as the settings choose it."""
    from django.conf import settings

    return licence_resolve(
        spdx_id=settings.PORTAL_DATA_LICENSE,
        name=settings.PORTAL_DATA_LICENSE_NAME,
        url=settings.PORTAL_DATA_LICENSE_URL,
    )
