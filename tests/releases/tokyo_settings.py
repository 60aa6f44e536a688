"""The portal's settings with the time zone of Tokyo: builds there must give the same bytes as in UTC."""

from portal.settings import *  # noqa: F403

TIME_ZONE = "Asia/Tokyo"
