"""The leaderboard entry: one result file's typed record (:mod:`.record`, read and written only there), the model
facts it carries (:mod:`.model_meta`) and its form as Hugging Face eval results (:mod:`.hub_eval`). The bottom of
``evaluation``: it imports nothing of scoring, so a submission is checked without numpy's ranking code."""
