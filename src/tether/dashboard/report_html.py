"""A run's Markdown report as HTML the dashboard can show without calling anywhere.

Raw HTML in the text is escaped (markdown-it with ``html`` off), never passed
through. An image is drawn as a link to it (its alt text, marked as an image),
never loaded: an agent's last message could name any host, and loading it
would tell that host the report was opened. Every link opens outside the
dashboard (a new tab, without the opener or a referrer). markdown-it's own
check drops ``javascript:`` and similar links.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

LINK_ATTRS = {"target": "_blank", "rel": "noopener noreferrer nofollow"}


@cache
def _renderer() -> Any:
    from markdown_it import MarkdownIt
    from markdown_it.common.utils import escapeHtml

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    attrs = " ".join(f'{k}="{v}"' for k, v in LINK_ATTRS.items())

    def link_open(renderer: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
        for name, value in LINK_ATTRS.items():
            tokens[idx].attrSet(name, value)
        return str(renderer.renderToken(tokens, idx, options, env))

    def image(renderer: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        src = str(token.attrGet("src") or "")
        alt = renderer.renderInlineAsText(token.children or [], options, env) or src
        return (
            f'<a class="image-link" href="{escapeHtml(src)}" {attrs}>[image: {escapeHtml(alt)}]</a>'
        )

    md.add_render_rule("link_open", link_open)
    md.add_render_rule("image", image)
    return md


def report_html(markdown: str) -> str:
    return str(_renderer().render(markdown))
