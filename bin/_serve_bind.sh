# shellcheck shell=bash
# Sourced by bin/_serve_processes: serve_bind_warning BIND prints one warning line (to stderr) when
# gunicorn's bind address (PORTAL_BIND: host:port, [v6]:port, a bare host, unix:PATH) is reachable from
# other machines, i.e. its host is not a loopback address. gunicorn gives each connection one of its
# few threads until the request header has arrived whole, so a handful of slow clients takes the site
# down: on such an address it must sit behind a proxy that reads requests first (Caddy, as in
# docker-compose.yml; tests/portal/test_slow_clients.py).
serve_bind_warning() {
  local bind=$1 host
  case "$bind" in
    unix:*) return 0 ;;
    \[*\]*) host=${bind#\[}; host=${host%%\]*} ;;
    *:*) host=${bind%:*} ;;
    *) host=$bind ;;
  esac
  case "$host" in
    localhost | 127.* | ::1 | 0:0:0:0:0:0:0:1) return 0 ;;
  esac
  echo "bin/serve: warning: gunicorn is bound to ${host:-every address} ($bind), not a loopback address; it does" \
    "not protect itself from slow clients, so it must sit behind a proxy (Caddy, as in docker-compose.yml)" >&2
}
