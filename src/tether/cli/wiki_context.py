"""Which wiki a command works on, and where its index lives.

The wiki root is, in order: the ``--root`` flag, ``TETHER_WIKI_ROOT`` or
``[wiki] root`` in ``tether.toml`` (relative to the project folder), else the
current folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tether.config import Config, load_config
from tether.config.schema import WikiSettings
from tether.wiki.layout import Wiki

# The index loads only for a command that reads it: the ingest queue's commands, which
# agents run once per entry, need the wiki's folders and never its index.
if TYPE_CHECKING:
    from tether.wiki.endpoint import Endpoint
    from tether.wiki.index import Index
    from tether.wiki.index_schema import UpdateStats
    from tether.wiki.index_store import ProgressFn


@dataclass(frozen=True)
class WikiContext:
    wiki: Wiki
    home: Path
    settings: WikiSettings
    config: Config

    def index(self) -> Index:
        from tether.wiki.index import Index

        return Index.open(
            self.wiki,
            self.home,
            max_page_bytes=self.settings.max_page_bytes,
            endpoint=self.endpoint(),
        )

    def endpoint(self) -> Endpoint | None:
        """The embeddings endpoint of ``[wiki] embeddings`` (None: not configured)."""
        given = self.settings.embeddings
        if given is None:
            return None
        from tether.wiki.endpoint import Endpoint

        return Endpoint(given.url, given.model, given.key_env, given.timeout)

    def fresh_index(self, progress: ProgressFn | None = None) -> tuple[Index, UpdateStats]:
        """The index, brought up to date with the files first.

        A command updates once, so it walks the files and keeps no folder watch.
        """
        index = self.index()
        try:
            stats = index.update(progress, watch=False)
        except BaseException:
            index.close()
            raise
        return index, stats


def load_context(
    root: str | None = None, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> WikiContext:
    environ = dict(os.environ if env is None else env)
    config = load_config(env=environ, cwd=cwd)
    settings = config.section("wiki", WikiSettings)
    chosen = root or settings.root
    if chosen is None:
        base = cwd or Path.cwd()
    else:
        given = Path(chosen).expanduser()
        if root is None and not given.is_absolute():
            given = config.project_root / given
        base = given
    return WikiContext(Wiki.open(base), config.home, settings, config)
