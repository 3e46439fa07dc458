#!/bin/sh
# The Python package's pytest suite against this build's libmmtune.so and CLI. Skipped (77) where
# the interpreter lacks NumPy or pytest (scripts/setup.sh installs python3-numpy, python3-pytest).
#   python_test.sh PYTHON LIBMMTUNE MMTUNE_CLI SOURCE_DIR
set -eu
python=$1
if ! "$python" -c "import numpy, pytest" 2>/dev/null; then
  echo "python_test: skipped: $python has no numpy or pytest"
  exit 77
fi
MMTUNE_LIBRARY=$2 MMTUNE_CLI=$3 PYTHONPATH="$4/python" \
  exec "$python" -m pytest -q -p no:cacheprovider "$4/python/tests"
