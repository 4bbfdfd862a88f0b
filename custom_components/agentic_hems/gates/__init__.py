"""The gate pipeline between a proposed device command and Home Assistant (seed 001; filled by issue 3)."""
