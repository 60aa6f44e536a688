"""Read by gunicorn when it starts in the project folder without `--config` (the image's command,
docker-compose's web service): the portal's gunicorn settings, portal/gunicorn_conf.py."""

from portal.gunicorn_conf import *  # noqa: F403
