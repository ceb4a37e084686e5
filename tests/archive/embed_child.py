"""Child process of the resume test: embeds slowly so the parent can kill it mid-run."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from archive.helpers import HashEmbedder
from mcpkit.archive.embedding import embed_missing
from mcpkit.archive.store import Store

if __name__ == "__main__":
    store = Store(Path(sys.argv[1]))
    embed_missing(store, "content", HashEmbedder(delay=float(sys.argv[2])), batch_size=int(sys.argv[3]))
