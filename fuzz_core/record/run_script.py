"""Entry point inside the sandbox: ``python -I run_script.py SCRIPT OUT.json [SOFT_DEADLINE]``.

Only the fuzz_core folder is mounted at its path, so the folder above it is put first on ``sys.path`` (and this
file's own folder taken off it) before the recorder is imported.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[0] = os.path.dirname(os.path.dirname(_HERE))

from fuzz_core.record.recorder import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
