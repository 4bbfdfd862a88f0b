"""Browser tests of the Lovelace cards; run on their own (see conftest.py)."""
