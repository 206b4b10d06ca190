"""ParaAgent's verl integration: the decoupled advantage estimators, the batch adapter, the episode recorder of the
ParaAct agent loop and the SFT dataset shim. Standard library only at import; verl and torch only where they run.
"""

from .advantage import DEFAULT_CONFIG, ESTIMATORS, AdvantageConfig, RolloutRewards, StepAdvantage, compute
from .estimator import VERL_ESTIMATORS, install, register

__all__ = [
    "DEFAULT_CONFIG",
    "ESTIMATORS",
    "AdvantageConfig",
    "RolloutRewards",
    "StepAdvantage",
    "compute",
    "VERL_ESTIMATORS",
    "install",
    "register",
]
