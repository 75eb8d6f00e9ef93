"""Measuring layouts on the GPU, generic over families: probe codes, per-method plans, the runner."""
