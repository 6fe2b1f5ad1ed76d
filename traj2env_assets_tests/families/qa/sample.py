"""The proposal a model would make for the bundled qa sample session (the fake provider's reply)."""

from __future__ import annotations

import json
from typing import Any

REFERENCE = """import pandas as pd

frame = pd.read_parquet("/workdir/data/train.parquet")
means = frame.groupby("city")["max_temp_c"].mean().round(3)
print(f"{means['Reykjavik']:.3f}")
"""


def sample_proposal(**changes: Any) -> dict[str, Any]:
    proposal: dict[str, Any] = {
        "questions": [
            {
                "question": "In data/train.parquet, what is the mean of max_temp_c over the rows of the city "
                "whose name starts with R, rounded to 3 decimals?",
                "answer": "4.325",
                "answer_kind": "number",
            },
            {"question": "Which city has the highest mean max_temp_c?", "answer": "Cairo", "answer_kind": "label"},
        ],
        "cited_output": "Reykjavik     4.325",
        "inputs": [{"repo_id": "traj2env-samples/city-temperatures", "path": "data/train.parquet"}],
        "reference_solution": REFERENCE,
    }
    proposal.update(changes)
    return proposal


def sample_reply(**changes: Any) -> str:
    return json.dumps(sample_proposal(**changes))
