"""The cost layer: $ and energy of a run (training, HPC) or a fleet (inference) from the user's
rate card or ownership figures. `prices.py` is the arithmetic, `section.py` reads a compiled spec,
`result.py` is the typed `cost` section of the result. The tool holds no prices of its own."""
