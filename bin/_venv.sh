# Sourced by bin/serve and bin/test: a virtual environment in .venv with the given requirement
# files installed. Reinstalls only when a requirements file changed (a stamp holds their hash).
ensure_venv() {
  local python=${PYTHON:-}
  if [ -z "$python" ]; then
    python=$(command -v python3.11 || command -v python3)
  fi
  if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
  fi
  local stamp=".venv/.requirements-$(cat "$@" | sha256sum | cut -c1-16)"
  if [ ! -f "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    local args=()
    for file in "$@"; do args+=(-r "$file"); done
    .venv/bin/python -m pip install --quiet "${args[@]}"
    rm -f .venv/.requirements-* && touch "$stamp"
  fi
}
