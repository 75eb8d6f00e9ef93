"""The value, no GPU: what a fragment is (spec), its slot map (layout), the atlas file, and choosing a source."""
