"""`transfuzz serve`: the web review page and its JSON API (FastAPI, server-rendered Jinja2)."""
