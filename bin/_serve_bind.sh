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

# serve_site_url BIND prints the address links in mail start from (PORTAL_SITE_URL) when gunicorn is
# bound to BIND: http://HOST:PORT (port 8000 when BIND names none, as gunicorn's). For a wildcard host
# (0.0.0.0, ::, none: every address) it is 127.0.0.1, the one name of this machine that the embedded
# default's ALLOWED_HOSTS holds, and a line on stderr says so; nothing for a unix socket (set
# PORTAL_SITE_URL to the proxy's address).
serve_site_url() {
  local bind=$1 host port=8000 rest
  case "$bind" in
    unix:*) return 0 ;;
    \[*\]*) host=${bind#\[}; host=${host%%\]*}; rest=${bind#*\]}; [ -n "$rest" ] && port=${rest#:} ;;
    *:*) host=${bind%:*}; port=${bind##*:} ;;
    *) host=$bind ;;
  esac
  case "$host" in
    "" | 0.0.0.0 | :: | 0:0:0:0:0:0:0:0)
      echo "bin/serve: links in mail point at http://127.0.0.1:$port (bound to every address: set" \
        "PORTAL_SITE_URL, and ALLOWED_HOSTS, to the address others reach the portal at)" >&2
      host=127.0.0.1 ;;
    *:*) host="[$host]" ;;
  esac
  echo "http://$host:$port"
}
