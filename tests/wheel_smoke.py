"""The Python half of tests/wheel_smoke.sh, run by the fresh environment's interpreter outside the checkout.

``sample CORPUS OUT``: a small sample of the shared corpus (full texts from before and inside the dev preset's
test period). ``tiny RELEASE OUT``: a sentence-transformers model with random weights and a vocabulary of the
release's own words. ``mteb RELEASE TINY RESULT``: mteb.evaluate on RatioSpecify through mteb's stock loader, compared with
``ratio score``'s leaderboard entry for the same model.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

SAMPLE = {"neurips_2023_2024_fulltext": 80, "neurips_2025_fulltext": 40}  # papers per file: ~4 M characters


def sample(corpus: Path, out: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.mkdir(parents=True)
    for name, n in SAMPLE.items():
        batch = next(pq.ParquetFile(corpus / f"{name}.parquet").iter_batches(batch_size=n))
        pq.write_table(pa.Table.from_batches([batch]), out / f"{name}.parquet")


def tiny(release: Path, out: Path) -> None:
    import pyarrow.parquet as pq
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words = Counter(
        w
        for f in (release / "data" / "corpus").glob("*.parquet")
        for t in pq.read_table(f, columns=["text"]).column("text").to_pylist()
        for w in re.findall(r"[a-z]+", t.lower())
    )
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(w for w, _ in words.most_common(3000))]
    hf = out.parent / "tiny-hf"
    hf.mkdir(parents=True)
    (hf / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    torch.manual_seed(0)
    # No transformer layer and no position signal: the mean of random word vectors, a bag of words that retrieves
    # well above chance, so that agreement is checked on rankings that mean something.
    config = BertConfig(vocab_size=len(vocab), hidden_size=64, num_hidden_layers=0, num_attention_heads=2)
    model = BertModel(config)
    with torch.no_grad():
        model.embeddings.position_embeddings.weight.zero_()
        model.embeddings.token_type_embeddings.weight.zero_()
    model.save_pretrained(hf)
    BertTokenizerFast(str(hf / "vocab.txt")).save_pretrained(hf)
    transformer = Transformer(str(hf), max_seq_length=128)
    SentenceTransformer(modules=[transformer, Pooling(64, "mean")], device="cpu").save(str(out))


def agree(release: Path, model: Path, entry: Path) -> None:
    import mteb
    from sentence_transformers import SentenceTransformer

    import ratio_bench
    from ratio_bench.evaluation.scoring.mteb_tasks import ratio_tasks

    assert "site-packages" in ratio_bench.__file__, ratio_bench.__file__  # the wheel, not a checkout
    ours = json.loads(entry.read_text(encoding="utf-8"))["results"]["specify"]
    result = mteb.evaluate(
        SentenceTransformer(str(model), device="cpu"),
        ratio_tasks(["specify"], release, ["test"]),
        cache=None,
        show_progress_bar=False,
    )
    theirs = result.task_results[0].scores["test"][0]
    # mteb rounds nDCG, MAP, recall and precision to 5 decimals (MRR it does not): compare at its precision
    diffs = {
        k: min(abs(theirs[k] - ours[k]), abs(theirs[k] - round(ours[k], 5)))
        for k in ("mrr_at_10", "mrr_at_100", "ndcg_at_10", "map_at_10", "recall_at_1", "recall_at_10")
    }
    worst = max(diffs, key=diffs.get)
    print(
        f"mteb stock loader vs ratio score, RatioSpecify test ({theirs['hf_subset']}): MRR@10 "
        f"{theirs['mrr_at_10']:.6f} vs {ours['mrr_at_10']:.6f}; largest difference {diffs[worst]:.1e} ({worst})"
    )
    if diffs[worst] > 1e-6:
        sys.exit(f"mteb and ratio score disagree: {diffs}")


def upload(release: Path, repo_id: Path) -> None:
    """The release's own files to a dataset repository of the Hub at HF_ENDPOINT (the smoke's loopback one)."""
    from huggingface_hub import HfApi

    api = HfApi()
    api.create_repo(str(repo_id), repo_type="dataset", exist_ok=True)
    print(api.upload_folder(repo_id=str(repo_id), repo_type="dataset", folder_path=str(release)).oid)


def same(by_folder: Path, by_name: Path) -> None:
    """The entry scored by name equals the folder's (but for the Hub commit it records and this run's timings)."""
    a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (by_folder, by_name))
    hub = b["dataset"].pop("hub", None)
    for doc in (a, b):
        doc.pop("model_meta", None)
    if a != b or not hub:
        sys.exit(f"scored by name ({hub}) differs from the folder's entry")
    mrr = {rel: round(100 * m["mrr_at_10"], 1) for rel, m in b["results"].items()}
    print(f"by name ({hub}) equals the folder: MRR@10 {mrr}")


if __name__ == "__main__":
    command, *paths = sys.argv[1:]
    {"sample": sample, "tiny": tiny, "mteb": agree, "upload": upload, "same": same}[command](
        *map(Path, paths)
    )
