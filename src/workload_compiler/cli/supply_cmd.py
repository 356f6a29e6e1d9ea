"""`wkc supply FILE --offers offers.yaml [--json|--md]`: the sized requirement of FILE against
suppliers' offers — per layer fits / gap / substitution / open, the open confirmations, and a
ranked table by time to result (from order) and cost.

Exit codes: 0 the check ran (whatever the offers' verdicts), 2 bad input, 3 the requirement itself
is infeasible (nothing to hold the offers against).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from ..catalog.loader import load_catalog
from ..compile import compile_workload, recompile
from ..errors import InputError
from ..intake.infrastructure import InfrastructureIntake
from ..intake.load import load_workload, read_intake
from ..intake.offers import OffersFile
from ..intake.problems import input_error
from .common import out, print_json, user_errors


def _offers(path: Path) -> OffersFile:
    try:
        data = read_intake(path)
    except InputError as exc:   # the reader names its argument FILE and an intake: say which file
        raise InputError("--offers", str(path), exc.allowed.replace("intake file", "offers file")) from None
    if not isinstance(data, dict):
        raise InputError("--offers", str(path), "a YAML mapping with an 'offers' list")
    try:
        return OffersFile.model_validate(data)
    except ValidationError as exc:   # with the model: the keys it allows and each bound's reason
        raise input_error(exc, OffersFile) from None


def supply_command(
    file: Annotated[Path, typer.Argument(help="the requirement: an intake YAML")],
    offers: Annotated[Path, typer.Option("--offers", help="offers YAML (see examples/offers-*.yaml)")],
    as_json: Annotated[bool, typer.Option("--json", help="print the supply check as JSON")] = False,
    as_md: Annotated[bool, typer.Option("--md", help="print the supply check as Markdown")] = False,
) -> None:
    """Hold suppliers' offers against the sized requirement: fits, gaps, substitutions, open confirmations."""
    from ..engagement.supply import supply_check
    with user_errors():
        catalog = load_catalog()
        workload = load_workload(file)
        offered = _offers(offers)
        spec = compile_workload(workload, catalog)
        intake: dict[str, Any] = read_intake(file)
        rules = workload.boundary.substitution if isinstance(workload, InfrastructureIntake) else None
        access_given = bool((intake.get("software") or {}).get("access_model")
                            or (intake.get("boundary") or {}).get("access_model"))

        compute = spec.model_dump(mode="json").get("compute") or {}
        baseline = (compute.get("accelerator"), compute.get("system"))

        def on_offer(pins: dict[str, Any]) -> Any:
            # the requirement's measured values stay with its machine (never applied to the offer's)
            return recompile(file, pins, catalog, leave_behind=baseline)

        result = supply_check(spec, intake, offered.offers, rules, catalog, on_offer, access_given)
    if as_json:
        print_json(result.model_dump(mode="json"))
    elif as_md:
        from ..report.supply import supply_markdown
        print(supply_markdown(result))
    else:
        from ..report.supply import render_supply
        render_supply(result, out.get())


def register(app: typer.Typer) -> None:
    app.command("supply")(supply_command)
