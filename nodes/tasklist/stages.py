"""Every step of the tasklist agent, stage by stage: the graph makes one node of each.

A new step is one row in ``policies/tasklist/machine.py`` and one ``@guarded`` body in its stage's
module, listed in that module's ``STEPS``.
"""

from reins.nodes.tasklist import drafting, intake, outcome, planning, strategy

STEPS = (*intake.STEPS, *planning.STEPS, *strategy.STEPS, *drafting.STEPS, *outcome.STEPS)
