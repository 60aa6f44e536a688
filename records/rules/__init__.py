"""The catalogue's rules, each stated once in Python and called by every surface.

- `records.rules.units`: a result's unit is its protocol's metric unit; a metric's scale
  (fraction, percent, x 100, per mille, or raw units with a name) is data, read from the unit's
  words by one parser that refuses a scale word it does not know.
- `records.rules.evidence`: the evidence rules: which printings are one measurement, whether they
  agree, how values rank and tie, and the verdict on independent measurements. The protocol, task
  and model pages, the API and the release build all call it.
"""

from records.rules.units import count_off_unit, unit_problem

__all__ = ["count_off_unit", "unit_problem"]
