"""The workbench: `wkc serve` (FastAPI, server-rendered Jinja2 pages with htmx partial swaps, the
JSON API with its OpenAPI document). Needs the `web` extra; the core never imports this package."""
