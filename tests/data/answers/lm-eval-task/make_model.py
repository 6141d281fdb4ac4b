import sys; sys.path.insert(0, "/work/wt/answers/tests")
from pathlib import Path
from tiny_lm import make_gpt2
out = Path("/tmp/answers-lmeval/tiny-gpt2"); out.mkdir(exist_ok=True)
make_gpt2(out, seed=0)
print(sorted(p.name for p in out.iterdir()))
