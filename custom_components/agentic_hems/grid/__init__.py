"""The grid toolkit: seed 002's agent tool contracts (filled by issue 5)."""
