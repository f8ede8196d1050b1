from ratio_bench.retrieval.bm25 import BM25Retriever, BM25Tokenizer


def test_bm25_tokenizer_and_ngrams():
    tok = BM25Tokenizer(max_n=2)
    assert tok("The models of training and quickly") == [
        "model",
        "train",
        "quick",
        "model_train",
        "train_quick",
    ]


def test_bm25_ranks_by_shared_terms_and_ignores_unknown_ones():
    r = BM25Retriever(
        [
            "gated residual connections for deep graphs",
            "sparse attention windows",
            "graph networks oversmooth deeply",
        ],
        "unigram",
    )
    idx, scores = r.search(["deep graph networks", "unseenword"], k=2)
    assert idx[0][0] == 2 and idx.shape == (2, 2)
    assert idx[1].tolist() == [0, 1] and not scores[1].any()  # no known term: corpus order, score 0
