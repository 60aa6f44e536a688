"""What a protocol page serves of its charts: the SVG of a suite's charts as one download, and the PNG
of a drawing (pages.charts draws them; records.comparisons.charts_sentence says what they draw)."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings
from django.template.loader import render_to_string

from pages.charts import WIDTH, Chart

FONT_FILE = Path(settings.BASE_DIR) / "static" / "fonts" / "DejaVuSans.ttf"
PNG_ZOOM = 2
PNG_SHARP_AREA = 1_000_000  # square units drawn at PNG_ZOOM: a single chart or a few
DOWNLOAD_COLUMNS = 3


def chart_svg(chart: Chart, *, standalone: bool) -> str:
    return render_to_string("pages/_chart.svg", {"chart": chart, "standalone": standalone})


def charts_svg(charts: list[Chart]) -> str:
    """One standalone SVG: the charts side by side in rows of DOWNLOAD_COLUMNS (a suite's small
    multiples as one download)."""
    if len(charts) == 1:
        return chart_svg(charts[0], standalone=True)
    placed, y = [], 0
    for start in range(0, len(charts), DOWNLOAD_COLUMNS):
        row = charts[start : start + DOWNLOAD_COLUMNS]
        placed += [(chart, column * WIDTH, y) for column, chart in enumerate(row)]
        y += max(chart.height for chart in row)
    width = WIDTH * min(DOWNLOAD_COLUMNS, len(charts))
    return render_to_string("pages/_charts.svg", {"charts": placed, "width": width, "height": y})


def png_zoom(svg: str) -> int:
    """Pixels per unit of the PNG: 2 (sharp in print) for a drawing of up to PNG_SHARP_AREA square
    units, else 1 (a suite's 28 small multiples, 1,020 x 4,800 units, stay 12 px text in a
    1,020 px wide image and rasterise in a third of the time)."""
    root = re.search(r'<svg[^>]*\swidth="(\d+)"[^>]*\sheight="(\d+)"', svg)
    area = int(root.group(1)) * int(root.group(2)) if root else 0
    return PNG_ZOOM if area <= PNG_SHARP_AREA else 1


def chart_png(svg: str) -> bytes:
    """The same drawing as PNG, with the bundled font so it renders alike on every machine."""
    import resvg_py

    return bytes(
        resvg_py.svg_to_bytes(
            svg_string=svg,
            skip_system_fonts=True,
            font_files=[str(FONT_FILE)],
            background="#ffffff",
            zoom=png_zoom(svg),
        )
    )
