"""Draws the integration's brand images: custom_components/agentic_hems/brand/icon.png (256x256) and icon@2x.png
(512x512).

Since HA 2026.x a custom integration ships its brand images in its own ``brand/`` folder; HA's ``brands`` integration
serves them at ``/api/brands/integration/agentic_hems/<image>`` (the frontend adds a ``token`` query parameter), and
falls back from ``logo.png``, ``dark_icon.png``, ... to ``icon.png``. The icon: a blue house with a white lightning
bolt (home energy) and an amber four-pointed spark above its roof (the agent), flat colours on a transparent
background, trimmed to the drawing as HA's brand guidelines ask.

Run it with the project's venv, which has Pillow (HA depends on it); it rewrites both files:

    scripts/py314-root .venv/bin/python scripts/make_brand.py     # or .venv/bin/python scripts/make_brand.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parent.parent
BRAND = ROOT / "custom_components" / "agentic_hems" / "brand"
SIZES = {"icon.png": 256, "icon@2x.png": 512}

CANVAS = 2048  # drawn large, then trimmed and scaled down (anti-aliasing)
BLUE = (3, 169, 244, 255)  # the cards' primary colour (#03a9f4)
WHITE = (255, 255, 255, 255)
AMBER = (255, 179, 0, 255)
MARGIN = 0.03  # transparent border around the trimmed drawing, as a share of the side


def _scaled(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points on a 1024 grid, scaled to the canvas."""
    k = CANVAS / 1024
    return [(x * k, y * k) for x, y in points]


def draw() -> Image.Image:
    """The icon on a large transparent canvas, trimmed to a square around the drawing."""
    image = Image.new("RGBA", (CANVAS, CANVAS), (0, 0, 0, 0))
    pen = ImageDraw.Draw(image)
    k = CANVAS / 1024
    # The house: a roof over a body, corners rounded by an outline of the same colour.
    house = _scaled([(512, 110), (930, 480), (830, 480), (830, 900), (194, 900), (194, 480), (94, 480)])
    pen.polygon(house, fill=BLUE)
    pen.line([*house, house[0], house[1]], fill=BLUE, width=round(48 * k), joint="curve")
    # The bolt, in the middle of the body.
    bolt = _scaled([(548, 430), (356, 700), (486, 700), (430, 890), (672, 600), (540, 600), (624, 430)])
    pen.polygon(bolt, fill=WHITE)
    pen.line([*bolt, bolt[0], bolt[1]], fill=WHITE, width=round(14 * k), joint="curve")
    # The spark: a four-pointed star above the roof's right slope.
    cx, cy, r, waist = 828, 176, 128, 30
    spark = _scaled([(cx, cy - r), (cx + waist, cy - waist), (cx + r, cy), (cx + waist, cy + waist), (cx, cy + r),
                     (cx - waist, cy + waist), (cx - r, cy), (cx - waist, cy - waist)])
    pen.polygon(spark, fill=AMBER)

    box = image.getbbox()
    assert box is not None
    drawing = image.crop(box)
    side = round(max(drawing.size) * (1 + 2 * MARGIN))
    square = Image.new("RGBA", (side, side), (0, 0, 0, 0))
    square.paste(drawing, ((side - drawing.width) // 2, (side - drawing.height) // 2))
    return square


def main() -> int:
    BRAND.mkdir(parents=True, exist_ok=True)
    icon = draw()
    for name, size in SIZES.items():
        path = BRAND / name
        icon.resize((size, size), Image.Resampling.LANCZOS).save(path, optimize=True)
        print(f"{path.relative_to(ROOT)}: {size}x{size}, {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
