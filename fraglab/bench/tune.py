"""`fraglab gemm --tune`: every launcher tile, and the skinny GEMM where it applies with each split of K, cluster size
and load of B it can take, timed on the user's problems and GPU against the tile the schedule's rules choose; where
one beats the rules' by more than a margin it is recorded in the tuning table (fraglab/gemm/tuning.py), which
fraglab.gemm then follows for that problem.

Each candidate is first checked against a float32 torch reference on the same inputs (D poisoned with NaN first, so
an unwritten element fails); one that fails or that the validator refuses for the problem is left out and reported.
Timing as `--bench --shapes` (fraglab/bench/shapes.py): CUDA events per launch, rounds interleaved, the operands
rotated over twice the L2. GPU and torch needed (the device's python3 has both).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Optional

from .shapes import Shape, _reps, chained_reps, check_chain, operand_sets

MARGIN = 0.01      # a tile is recorded only where it beats the rules' by more than this share of their time
TOLERANCE = 5e-3   # a candidate's largest error against the float32 reference, relative to its largest value


def _reference(torch, a, b, bias, bias_mode: str, act: str, leaky_slope: float = 0.01):
    """act(A @ B + bias) in float64 on the GPU (the epilogue's definitions: torch_road.activation)."""
    from ..gemm.torch_road import activation

    pre = a.double() @ b.double()
    if bias is not None:
        pre = pre + (bias.double()[:, None] if bias_mode == "per_m" else bias.double())
    return activation(torch, pre, act, leaky_slope)


def _error(torch, run, d, want) -> float:
    d.fill_(float("nan"))
    run()
    torch.cuda.synchronize()
    return float(((d.double() - want).abs().max() / want.abs().max().clamp_min(1e-30)).item())


def tune_shapes(shapes: list[Shape], *, dtype: str = "f16", act: str = "relu", bias_mode: str = "per_n",
                out_dtype: str = "f16", b_order: str = "F", margin: float = MARGIN,
                candidates: Optional[tuple[str, ...]] = None, chain: int = 1, progress=None) -> dict:
    """Time the candidates of each shape; returns {"rows": per shape, "found": {TuningKey: TunedTile or None}}
    (None: the rules' tile won, or no candidate beat it by `margin`), with the GPU's description.
    `candidates`: limit the tiles tried (default: tuning.candidate_tiles of each shape). `chain` > 1: time chains of
    that many launches back to back per event pair (as `--bench --shapes --chain`); the entries' note says so."""
    check_chain(chain)
    import torch

    from .. import bench as benchmod
    from ..errors import FraglabError
    from ..gemm import tuning
    from ..gemm.api import prepare, rules_tile
    from ..runtime import gpu

    gpu.cupy()
    info = gpu.device_info()
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    odt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[out_dtype]
    task = progress.add_task(f"gemm --tune ({len(shapes)})", total=len(shapes)) if progress else None
    gen = torch.Generator(device="cuda").manual_seed(27)
    rows, found = [], {}
    when = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    for s in shapes:
        sets, xs = operand_sets(torch, gen, s, tdt, b_order, bias_mode)
        d = torch.empty(s.m, s.n, device="cuda", dtype=odt)
        a0, b0, bias0, _ = xs[0]
        want = _reference(torch, a0, b0, bias0, bias_mode, act)

        def bound(tile):
            return [prepare(a, b, bias=bias, bias_mode=None if bias is None else bias_mode, act=act, out=d,
                            kernel="wgmma", tile=tile) for a, b, bias, _ in xs]

        planned = prepare(a0, b0, bias=bias0, bias_mode=None if bias0 is None else bias_mode, act=act, out=d,
                          kernel="wgmma")
        rule_tile = rules_tile(planned.plan)   # the rules' own choice, whatever a tuning table says
        rule_runs = bound(rule_tile)
        # the rules' skinny split, cluster and load under its variant's name is the rules' launch: not timed twice
        same = rule_runs[0].kernel_spec.tile if rule_tile == tuning.SKINNY else rule_tile
        tried = [t for t in (candidates or tuning.candidate_tiles(dtype, s.m, "C", s.n, s.k, b_order))
                 if t not in (rule_tile, same)]
        runs, skipped = {f"rules: {rule_tile}": rule_runs}, {}
        for tile in tried:
            try:
                runs[tile] = bound(tile)
            except (FraglabError, ValueError) as exc:   # not a tile this problem can take (the validator's reason)
                skipped[tile] = str(exc).splitlines()[0]
        fns = {}
        for name, calls in runs.items():
            error = _error(torch, calls[0], d, want)
            if error <= TOLERANCE:
                fns[name] = (lambda calls: (lambda i: calls[i]()))(calls)
            else:
                skipped[name] = f"wrong result (largest error {error:.1e})"
        fns["torch.mm"] = lambda i: torch.mm(xs[i][0], xs[i][1])
        timings = benchmod.time_interleaved(fns, rounds=3, reps=chained_reps(_reps(s.m, s.n, s.k), chain),
                                            rotate=sets, chain=chain)
        us = {name: t.median_ms * 1e3 for name, t in timings.items()}
        rule_name = f"rules: {rule_tile}"
        tiles_us = {name: t for name, t in us.items() if name not in ("torch.mm", rule_name)}
        best = min(tiles_us, key=tiles_us.get) if tiles_us else None
        key = tuning.TuningKey(str(info.get("gpu_name", "")), dtype, s.m, s.n, s.k, "C", b_order, out_dtype)
        rule_us = us.get(rule_name)
        wins = best is not None and rule_us is not None and tiles_us[best] < rule_us * (1.0 - margin)
        found[key] = (tuning.TunedTile(best, round(tiles_us[best], 3), rule_tile, round(rule_us, 3),
                                       f"{act} {bias_mode}" + (f", chains of {chain}" if chain > 1 else ""), when)
                      if wins else None)
        rows.append({"label": s.label, "m": s.m, "n": s.n, "k": s.k, "rule_tile": rule_tile, "rule_us": rule_us,
                     "best_tile": best if wins else rule_tile, "best_us": tiles_us[best] if wins else rule_us,
                     "gain": rule_us / tiles_us[best] if wins else 1.0, "torch_us": us["torch.mm"],
                     "recorded": wins, "times_us": us, "skipped": skipped})
        runs = rule_runs = xs = d = fns = want = planned = None
        torch.cuda.empty_cache()
        gpu.cupy().get_default_memory_pool().free_all_blocks()
        if progress:
            progress.advance(task)
    return {"rows": rows, "found": found, "device": info, "dtype": dtype, "act": act, "bias": bias_mode,
            "out_dtype": out_dtype, "b_order": b_order, "margin": margin, "chain": chain}


TUNE_COLUMNS = (("m", "M", "d"), ("n", "N", "d"), ("k", "K", "d"), ("rule_tile", "rules' tile", ""),
                ("rule_us", "us", ".2f"), ("best_tile", "tuned tile", ""), ("best_us", "us", ".2f"),
                ("gain", "gain", ".3f"), ("torch_us", "torch.mm us", ".2f"))


__all__ = ["MARGIN", "TOLERANCE", "tune_shapes", "TUNE_COLUMNS"]
