"""torch.compile(mode="reduce-overhead") of a two-layer block, built from fraglab.torch.Linear or from
torch.nn.Linear (the twin: the same shapes, activations and residual, no fraglab at all), run for a few steps
under torch.no_grad() and compared with eager. Run it with and without compute-sanitizer to tell an artefact of
the sanitizer from a fault of fraglab's op (issue 24): prints one line, `<layers>: ok` or `<layers>: FAILED <the
error>`, and exits 1 on a failure.

Usage (device): python3 scripts/reduce_overhead_check.py fraglab|torch [--history]
  --history: torch records where each block of CUDA graph memory was allocated (the error then lists them)
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def block(torch, layers: str):
    if layers == "fraglab":
        import fraglab.torch as ft

        up = ft.Linear(128, 256, act="gelu", device="cuda", dtype=torch.float16)
        down = ft.Linear(256, 128, act="none", device="cuda", dtype=torch.float16)
        inner = lambda x: down(up(x))  # noqa: E731
    else:
        up = torch.nn.Linear(128, 256, device="cuda", dtype=torch.float16)
        down = torch.nn.Linear(256, 128, device="cuda", dtype=torch.float16)
        inner = lambda x: down(torch.nn.functional.gelu(up(x)))  # noqa: E731

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.up, self.down = up, down

        def forward(self, x):
            return x + inner(x)
    return Block()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("layers", choices=("fraglab", "torch"))
    parser.add_argument("--history", action="store_true")
    args = parser.parse_args(argv)

    import torch
    import torch._dynamo
    import torch._inductor.config as inductor_config

    inductor_config.triton.cudagraph_trees_history_recording = args.history
    torch.manual_seed(0)
    model = block(torch, args.layers)
    graphed = torch.compile(model, fullgraph=True, mode="reduce-overhead")
    try:
        with torch.no_grad():
            for step in range(3):
                x = torch.randn(4, 32, 128, device="cuda", generator=torch.Generator("cuda").manual_seed(step)).half()
                tolerance = 0 if args.layers == "fraglab" else 1e-2   # inductor may fuse torch's GELU differently
                torch.testing.assert_close(graphed(x).clone(), model(x), rtol=tolerance, atol=tolerance)
        torch.cuda.synchronize()
    except Exception as exc:
        text = " ".join(str(exc).split())
        print(f"{args.layers}: FAILED {type(exc).__name__}: {text[:1500]}")
        traceback.print_exc(limit=6)
        return 1
    print(f"{args.layers}: ok (3 steps equal eager)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
