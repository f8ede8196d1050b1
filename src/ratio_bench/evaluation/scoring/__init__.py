"""Scoring a retriever on a release: metrics, a split's run and its result (:mod:`.evaluate`), the one engine that
loads a model once and encodes every split's texts once (:mod:`.engine`), saved runs, judged pools, the mteb tasks,
the result files a scored split is written as (:mod:`.results`) and bootstrap intervals (:mod:`.uncertainty`)."""
