# Sourced by bin/serve, bin/_serve_processes and bin/test: a virtual environment in .venv with the
# given requirement files installed. Each set of files has its own stamp (.venv/.requirements-<names>-
# <hash of their content>), so the portal's set (bin/serve), the portal with the runner (its gpu worker)
# and the test set (bin/test) are each installed once, and again only when one of their files changed.
# Python keeps what it compiles (__pycache__) unless PYTHONDONTWRITEBYTECODE is set, as some shells
# and images set it: every process would then compile again every module it imports (a process that
# imports PyTorch, transformers and peft: 15 s of CPU instead of 6; one that sets Django up: 3.5 s
# instead of 1.4), and the suite and the portal start many.
unset PYTHONDONTWRITEBYTECODE

requirements_stamp() {
  local names
  names=$(printf '%s\n' "$@" | sed 's/\.txt$//; s/^requirements-\{0,1\}//; s/^$/portal/' | paste -sd+ -)
  echo ".venv/.requirements-${names:-portal}-$(cat "$@" | sha256sum | cut -c1-16)"
}

venv_has() {
  [ -x .venv/bin/python ] && [ -f "$(requirements_stamp "$@")" ]
}

ensure_venv() {
  local python=${PYTHON:-}
  if [ -z "$python" ]; then
    python=$(command -v python3.11 || command -v python3)
  fi
  if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
  fi
  local stamp
  stamp=$(requirements_stamp "$@")
  if [ ! -f "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    local args=()
    for file in "$@"; do args+=(-r "$file"); done
    # --no-compile: Python compiles what is imported when it is first imported; compiling every
    # installed module up front (PyTorch's, transformers') doubled the install's CPU time.
    .venv/bin/python -m pip install --quiet --no-compile "${args[@]}"
    rm -f "${stamp%-*}"-* && touch "$stamp"
  fi
}
