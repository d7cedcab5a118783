"""Done-when of a GPT-2-shaped model (2 layers, 64 dimensions, byte-level vocabulary)
trained from scratch on CPU inside the test, members seen for 60 epochs and non-members never;
the probe, run from the command line on the saved model, separates them (AUROC >= 0.9 for loss,
Min-K% and Min-K%++). The same model before training is the control: there the same items are
not separated, so the separation comes from training, not from the texts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Runner, write_jsonl
from tests.probe.tiny import byte_tokenizer, one_thread, sentences, tiny_model, train

EPOCHS = 60
pytestmark = pytest.mark.usefixtures(one_thread.__name__)


def probe(cli: Runner, root: Path, model: Path, name: str) -> dict[str, Any]:
    done = cli(
        "probe",
        root / "members.jsonl",
        "--id-field",
        "id",
        "--reference",
        root / "nonmembers.jsonl",
        "--backend",
        "transformers",
        "--model",
        model,
        "--items-csv",
        root / f"{name}.csv",
        "--summary",
        root / f"{name}.md",
        "--summary-json",
        root / f"{name}.json",
        "--roc",
        root / f"{name}.png",
    )
    assert done.code == 0, done.err
    summary: dict[str, Any] = json.loads((root / f"{name}.json").read_text(encoding="utf-8"))
    return summary


@pytest.mark.slow
def test_the_probe_separates_what_a_tiny_model_was_trained_on(tmp_path: Path, cli: Runner) -> None:
    texts = sentences(64, seed=11)
    members, nonmembers = texts[:32], texts[32:]
    write_jsonl(tmp_path / "members.jsonl", ({"id": f"m{n}", "text": t} for n, t in enumerate(members)))
    write_jsonl(tmp_path / "nonmembers.jsonl", ({"id": f"n{n}", "text": t} for n, t in enumerate(nonmembers)))
    folder = tmp_path / "model"
    tokenizer = byte_tokenizer(folder, bos=True)
    model = tiny_model(context=64)
    model.save_pretrained(folder)

    untrained = probe(cli, tmp_path, folder, "untrained")["results"]
    train(model, tokenizer, members, EPOCHS)
    model.save_pretrained(folder)
    trained = probe(cli, tmp_path, folder, "trained")
    results = trained["results"]

    print("AUROC untrained:", {m: round(r["auroc"], 3) for m, r in untrained.items()})
    print("AUROC trained:", {m: round(r["auroc"], 3) for m, r in results.items()})
    for method in ("loss", "mink", "minkpp"):
        assert untrained[method]["auroc"] < 0.8, method
        assert results[method]["auroc"] >= 0.9, method
        assert results[method]["significant"] is True
        assert results[method]["p_value"] < 1e-6
    assert set(results) == {"loss", "zlib", "lowercase", "mink", "minkpp"}
    assert "by loss, " in trained["verdict"]
    assert (tmp_path / "trained.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = (tmp_path / "trained.csv").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 65 and rows[1].startswith("members,m0,0,")
    markdown = (tmp_path / "trained.md").read_text(encoding="utf-8")
    assert "MIMIR" in markdown and "| minkpp |" in markdown
    for text in members[:3]:  # golden text never appears in the outputs
        assert text not in markdown and text not in json.dumps(trained) and text not in "\n".join(rows)
