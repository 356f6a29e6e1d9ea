"""From requirement to supply (seed 000): the workload sheet, next questions, operating boundary,
boundary register, operations load, acceptance targets and MIG sections of a compiled spec, and
the supply check of offers against it. Pure functions over the compiled document and the intake;
`attach.py` runs them after every compile.

(Kept empty of imports: spine/result.py imports the section models from the submodules.)
"""
