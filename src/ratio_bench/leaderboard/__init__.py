"""The leaderboard as a service on the Hugging Face Hub: a requests queue, evaluation workers, a results repository.

``ratio leaderboard submit`` checks a Hub model and queues it (:mod:`.submit`, :mod:`.requests`); ``ratio
leaderboard worker`` claims requests, scores them the way ``ratio score`` does and publishes entries with their
provenance (:mod:`.worker`, :mod:`.job`), and with a judge grows the judged pool in the results repository
(:mod:`.judging`); ``ratio leaderboard --from REPO`` and ``ratio serve --leaderboard-from``
show the board, verified and self-reported entries marked, with the queue (:mod:`.board`). A top layer: it uses
evaluation, retrieval, the judge and the core modules; only the command line imports it.
"""
