"""Alembic environment: migrations run on the connection the store hands over (store/db.py),
inside the package, at start; no alembic.ini is needed."""

from __future__ import annotations

from alembic import context

from workload_compiler.store.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
