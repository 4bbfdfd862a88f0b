"""Schema validation on both libraries Home Assistant has shipped, with error texts of our own.

HA 2026.9 replaced voluptuous with probatio: the same API (HA also registers it under the name ``voluptuous``), and
HA's own functions are typed with its classes from then on, but some texts differ (an extra key is "not a valid option
at 'why'" there, "extra keys not allowed @ data['why']" in voluptuous). Everything in this package imports ``vol``
from here, and the texts that reach users, the model and repair issues are made here, so they read the same on every
supported HA: :func:`closed` refuses an extra key with :data:`EXTRA_KEY`, and :func:`describe` writes the errors.

No ``homeassistant`` import: the pure core packages use this module too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Version-specific: HA 2026.9+ ships probatio; HA 2026.4 to 2026.8 ship voluptuous. Drop the fallback
# when the oldest supported HA is 2026.9 or newer.
try:
    import probatio as vol  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # HA before 2026.9
    import voluptuous as vol  # type: ignore[no-redef, unused-ignore]

__all__ = ["EXTRA_KEY", "Closed", "closed", "describe", "vol"]

EXTRA_KEY = "extra keys not allowed"


class Closed:
    """A mapping schema that refuses keys it does not name, with :data:`EXTRA_KEY` at the key's path.

    Every error is reported at once: the extra keys' and those of the named keys (validated by a
    ``vol.Schema`` with ``PREVENT_EXTRA``, which only ever sees the named keys, so a nested plain dict still refuses
    extra keys, in the library's words; wrap nested mappings in :func:`closed` too). ``schema`` is the mapping, as
    ``vol.Schema.schema`` is.
    """

    def __init__(self, schema: Mapping[Any, Any]) -> None:
        """Take the mapping ``schema``; raises TypeError for a key that is not a literal string."""
        keys = set()
        for key in schema:
            name = key.schema if isinstance(key, vol.Marker) else key
            if not isinstance(name, str):
                raise TypeError(f"closed() takes literal string keys, not {key!r}")
            keys.add(name)
        self.keys = frozenset(keys)
        self.schema: dict[Any, Any] = dict(schema)
        self._named = vol.Schema(self.schema, extra=vol.PREVENT_EXTRA)

    def __call__(self, data: Any) -> Any:
        """Validate ``data``; raises ``vol.MultipleInvalid`` listing every error."""
        if not isinstance(data, Mapping):
            raise vol.Invalid("expected a mapping")
        errors: list[vol.Invalid] = [vol.Invalid(EXTRA_KEY, [key]) for key in data if key not in self.keys]
        try:
            valid = self._named({key: value for key, value in data.items() if key in self.keys})
        except vol.MultipleInvalid as err:
            errors.extend(err.errors)
        except vol.Invalid as err:
            errors.append(err)
        if errors:
            raise vol.MultipleInvalid(errors)
        return valid

    def __repr__(self) -> str:
        """Return ``closed({...})`` with the schema mapping."""
        return f"closed({self.schema!r})"


def closed(schema: Mapping[Any, Any]) -> Closed:
    """Return a :class:`Closed` schema for the mapping ``schema`` (``vol.Required``/``vol.Optional`` or string keys)."""
    return Closed(schema)


def describe(err: vol.Invalid) -> str:
    """Every error of ``err`` as ``message at path`` (``path`` dotted, e.g. ``params.transition``), joined by ``; ``.

    The message is the error's own (``msg``); the path is written here, not by the library.
    """
    errors = err.errors if isinstance(err, vol.MultipleInvalid) else [err]
    return "; ".join(
        f"{error.msg} at {'.'.join(map(str, error.path))}" if error.path else str(error.msg) for error in errors
    )
