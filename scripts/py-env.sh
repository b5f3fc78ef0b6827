# Sourced by test-python.sh and bench-python.sh: builds the Python package's
# wheel (maturin, release) and installs it into a fresh virtual environment
# at $VENV with the pinned requirements, as a user would meet it. Needs
# python3 (3.9+) with venv.

PY="${PYTHON:-python3}"
if ! "$PY" -c 'import sys, venv; assert sys.version_info >= (3, 9)' 2>/dev/null; then
    echo "error: the Python package needs $PY 3.9+ with the venv module (Debian: apt install python3-venv)" >&2
    exit 1
fi

VENV=target/py-venv
WHEELS=target/py-wheels
rm -rf "$VENV" "$WHEELS"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r crates/segdist-py/requirements-test.txt

echo "== building the wheel (maturin, release)" >&2
"$VENV/bin/maturin" build --release --locked --quiet -m crates/segdist-py/Cargo.toml -i "$VENV/bin/python" --out "$WHEELS"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "$WHEELS"/segdist-*.whl
