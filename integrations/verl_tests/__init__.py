"""Tests of integrations/verl (stdlib unittest: `python3 -m unittest discover integrations`); verl and torch absent."""

import os
import sys

# the package lives in integrations/verl/paraagent_verl; the folder is not itself a package (it would shadow verl)
_here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(_here), "verl"))
FIXTURES = os.path.join(os.path.dirname(_here), "verl", "fixtures")
