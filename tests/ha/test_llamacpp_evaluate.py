"""``ai_task.evaluate`` against a real llama-server (HA 2026.11 and later).

The model is made at test time (tests/llama/model.py): its first token after
the generation prompt is "yes" with logit 0 and "no" with logit -0.25, every
other token 50 below. So llama-server's own ``top_logprobs`` say yes with
probability 1 / (1 + e^-0.25) = 0.562, and that is what the automation gets.
"""

from __future__ import annotations

import math

from homeassistant.core import HomeAssistant
import pytest

from custom_components.toolbelt.const import CONF_REQUEST_TIMEOUT
from custom_components.toolbelt.ha import compat
from tests.ha.test_ai_task import add_task
from tests.ha.test_ai_task_evaluate import ARRIVED, STATE, evaluate
from tests.llama.model import TIE, Recipe
from tests.llama.server import LlamaServers

pytestmark = [
    pytest.mark.usefixtures("socket_enabled"),
    pytest.mark.skipif(
        not compat.CURRENT.evaluate_feature,
        reason="ai_task.evaluate came with HA 2026.11",
    ),
]
LEANS_YES = Recipe(reply=("yes",), or_reply=("no",))


async def test_yes_or_no_is_the_servers_own_probability(
    hass: HomeAssistant, ha_ready, llama: LlamaServers
) -> None:
    # Patient with busy shared cores.
    entry, task = await add_task(
        hass, llama.serve(LEANS_YES), **{CONF_REQUEST_TIMEOUT: 30}
    )

    response = await evaluate(hass, task, state=STATE, questions={"arrived": ARRIVED})

    answer = response["answers"]["arrived"]
    assert answer["type"] == "noul"
    assert answer["noul"] == pytest.approx(1 / (1 + math.exp(-TIE)), abs=0.01)
    subentry = next(s for s in entry.subentries.values() if s.title == "Task writer")
    assert entry.runtime_data.agent_state(subentry).logprobs is True
