"""Write the benchmark's registered set keyed with AES-128, as contam-guard keyed manifests before
SipHash-2-4 (hash spec ``cg-poly64-v1`` with a key_check, manifest format 1, as they were
written then): the "before ``upgrade``" keyed row. ``init --keyed`` makes SipHash manifests of
format 2 now, so this one is built through the library.

    python aes_manifest.py EVAL.jsonl MANIFEST.json      # the key in $CONTAM_GUARD_KEY
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from contam_guard.manifest import format1
from contam_guard.manifest.build import GoldenSource, build_set
from contam_guard.manifest.model import Manifest, Spec
from contam_guard.text.hashing import HashKey


def main() -> None:
    eval_path, manifest_path = Path(sys.argv[1]), Path(sys.argv[2])
    key = HashKey(os.environ["CONTAM_GUARD_KEY"], "aes128")
    golden = build_set([GoldenSource(eval_path, eval_path.name)], ["question"], "id", key, None)
    manifest_path.parent.mkdir(parents=True, exist_ok=True)
    format1.save(manifest_path, Manifest(spec=Spec(), key_check=key.check, sets={"gsm8k": golden}))


if __name__ == "__main__":
    main()
