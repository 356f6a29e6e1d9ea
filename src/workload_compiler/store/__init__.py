"""Persistence of projects and their revisions (SQLAlchemy 2 + Alembic; SQLite by default,
PostgreSQL by URL). Needs the `store` extra; the core never imports this package."""
