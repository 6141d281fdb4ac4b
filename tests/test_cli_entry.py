"""``python -m eatkit`` and a readable ``eatkit list models`` (issue 34)."""

from __future__ import annotations

import os
import subprocess
import sys

from eatkit.registry import models


def test_python_dash_m_eatkit_is_the_command():
    done = subprocess.run([sys.executable, "-m", "eatkit", "list", "kinds"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("eat ")


def test_list_models_fits_the_terminal_and_says_which_run_offline():
    env = dict(os.environ, COLUMNS="100")
    done = subprocess.run([sys.executable, "-m", "eatkit", "list", "models"], capture_output=True, text=True, env=env)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and max(map(len, lines)) <= 105, max(lines, key=len)
    offline = {line.split()[0] for line in lines[1:-2] if " offline " in line}
    assert offline == {m.name for m in models() if m.weights == "package"}
    assert {"glove-6b-50d", "efficientnet_lite0", "all-minilm-l6-v2"} <= offline
    assert " --weights " in next(line for line in lines if line.startswith("moco-v2-resnet50"))


def test_a_reader_that_leaves_ends_the_command_quietly():
    """``eatkit list models | head -1``: the pipe closes early; eatkit exits 0 and prints no error."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader has left before the first write
    try:
        done = subprocess.run([sys.executable, "-m", "eatkit", "list", "models"], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, "")
